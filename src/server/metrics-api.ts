/**
 * Wires `metrics.k8s.io` (src/metrics-api) into the server: the agents' `/metrics/resource` is
 * fetched through the server's kubelet client (the node's address by
 * `--kubelet-preferred-address-types`, the `--kubelet-client-*` certificate, the
 * `--kubelet-certificate-authority` trust, metrics-server's 10 s request timeout); nodes and
 * pods are read from storage; the group steps aside when a remote APIService serves it.
 */
import { request as httpsRequest } from 'node:https';
import { decodeStored } from '../api/object.js';
import type { Node, Pod } from '../api/types/core-v1.js';
import type { Aggregator } from '../aggregation/index.js';
import type { RemoteDiscovery } from '../http/discovery.js';
import { metricsApi, METRICS_GROUP, withMetricsDiscovery } from '../metrics-api/handler.js';
import { ResourceScraper } from '../metrics-api/scraper.js';
import type { ResourceContext } from '../resource/context.js';
import { collectionSpan } from '../resource/keys.js';
import { agentOf, agentTls, readObject, type KubeletClientOptions } from './kubelet-proxy.js';

const SCRAPE_TIMEOUT_MS = 10_000;

/** GETs `path` of a node's agent; rejects on a failed connection or a non-200 answer. */
export async function agentGet(
  ctx: ResourceContext,
  opts: KubeletClientOptions,
  nodeName: string,
  path: string,
): Promise<string> {
  const { host, port } = await agentOf(ctx, nodeName, opts.addressTypes);
  return new Promise<string>((resolve, reject) => {
    const req = httpsRequest({ host, port, path, method: 'GET', ...agentTls(opts, nodeName) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode === 200) resolve(body);
        else reject(new Error(`GET https://${host}:${port}${path}: ${res.statusCode ?? 0} ${body.trim()}`));
      });
    });
    req.setTimeout(SCRAPE_TIMEOUT_MS, () => req.destroy(new Error('request timed out')));
    req.on('error', (err) => reject(new Error(`GET https://${host}:${port}${path}: ${err.message}`)));
    req.end();
  });
}

async function listOf<T>(ctx: ResourceContext, plural: string, namespace: string | undefined): Promise<T[]> {
  const type = ctx.registry.byResource('', 'v1', plural);
  if (!type) return [];
  const { items } = await ctx.store.range(collectionSpan(type, namespace));
  return items.map((kv) => decodeStored(kv.value, kv.modRevision) as T);
}

/** The onRequest step and the discovery of `metrics.k8s.io`. */
export function serverMetricsApi(
  ctx: () => ResourceContext,
  kubelet: KubeletClientOptions,
  aggregator: Aggregator,
  log: (message: string) => void,
): {
  step: ReturnType<typeof metricsApi>;
  discovery(remote: RemoteDiscovery): RemoteDiscovery;
} {
  const remote = (): boolean => aggregator.remotes().some((r) => r.spec.group === METRICS_GROUP);
  const scraper = new ResourceScraper((node, path) => agentGet(ctx(), kubelet, node, path), log);
  return {
    step: metricsApi({
      scraper,
      nodes: () => listOf<Node>(ctx(), 'nodes', undefined),
      node: (name) => readObject<Node>(ctx(), '', 'nodes', undefined, name),
      pods: (ns) => listOf<Pod>(ctx(), 'pods', ns),
      pod: (ns, name) => readObject<Pod>(ctx(), '', 'pods', ns, name),
      remote,
    }),
    discovery: (r) => withMetricsDiscovery(r, () => !remote()),
  };
}
