/**
 * `metrics.k8s.io/v1beta1` served by the API server itself, as metrics-server serves it, so
 * `kubectl top` works without installing one:
 *
 * - `GET /apis/metrics.k8s.io` (APIGroup) and `/apis/metrics.k8s.io/v1beta1` (APIResourceList);
 *   the group also appears in `/apis` and aggregated discovery ({@link withMetricsDiscovery});
 * - `nodes` (NodeMetrics, cluster-scoped) and `pods` (PodMetrics, namespaced): get and list,
 *   `labelSelector` on the node's or pod's labels, a namespace or all of them; objects carry the
 *   node's or pod's name, namespace and labels, `timestamp`, `window` and `usage` (see
 *   `usage.ts`); an object without metrics yet is left out of lists and a get answers 404;
 * - other verbs answer 405 (metrics-server serves no watch either).
 *
 * Requests reach it once authenticated and authorized by the pipeline (the verbs on `nodes` and
 * `pods` of `metrics.k8s.io`, as metrics-server's `system:aggregated-metrics-reader` grants).
 * When an APIService of the group points at a remote server (metrics-server installed), the
 * aggregator serves the group and this one steps aside.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, methodNotAllowed, notFound } from '../api/errors.js';
import type { Node, Pod } from '../api/types/core-v1.js';
import { formatDuration } from '../flags/duration.js';
import type { RemoteDiscovery, RemoteGroup } from '../http/discovery.js';
import { LabelSelector } from '../resource/label-selector.js';
import type { ResourceScraper } from './scraper.js';
import { cpuQuantity, memoryQuantity, nodeUsage, podUsage } from './usage.js';

/** The group and version. */
export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';
const GV = `${METRICS_GROUP}/${METRICS_VERSION}`;

/** The resources of the version, as in its APIResourceList. */
export const METRICS_RESOURCES: readonly Record<string, unknown>[] = [
  { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
  { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
];

/** What the handler reads. */
export interface MetricsApiDeps {
  readonly scraper: ResourceScraper;
  nodes(): Promise<Node[]>;
  node(name: string): Promise<Node | undefined>;
  /** Pods of a namespace, or of all (undefined). */
  pods(namespace: string | undefined): Promise<Pod[]>;
  pod(namespace: string, name: string): Promise<Pod | undefined>;
  /** True when a remote APIService serves the group (the aggregator answers then). */
  remote(): boolean;
}

/** Discovery with the group added after the remote groups, unless a remote one serves it. */
export function withMetricsDiscovery(remote: RemoteDiscovery, served: () => boolean): RemoteDiscovery {
  const own: RemoteGroup = {
    name: METRICS_GROUP,
    versions: [{ version: METRICS_VERSION, resources: METRICS_RESOURCES }],
  };
  return {
    get generation() {
      return remote.generation * 2 + (served() ? 1 : 0);
    },
    groups() {
      const groups = remote.groups();
      return !served() || groups.some((g) => g.name === METRICS_GROUP) ? groups : [...groups, own];
    },
  };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** The NodeMetrics of a node, or undefined when it has none yet. */
async function nodeMetrics(deps: MetricsApiDeps, node: Node): Promise<Record<string, unknown> | undefined> {
  const name = node.metadata.name ?? '';
  const pair = await deps.scraper.pair(name);
  const usage = pair && nodeUsage(pair.prev, pair.last);
  if (!usage) return undefined;
  return {
    metadata: {
      name,
      creationTimestamp: iso(Date.now()),
      ...(node.metadata.labels ? { labels: node.metadata.labels } : {}),
    },
    timestamp: iso(usage.timestamp),
    window: formatDuration(usage.windowMs),
    usage: { cpu: cpuQuantity(usage.cpuNanoCores), memory: memoryQuantity(usage.memoryBytes) },
  };
}

/** The PodMetrics of pods (scraping each node they run on once), in the pods' order. */
async function podMetrics(deps: MetricsApiDeps, pods: readonly Pod[]): Promise<Record<string, unknown>[]> {
  const nodes = [...new Set(pods.map((p) => p.spec?.nodeName ?? '').filter((n) => n !== ''))];
  const pairs = new Map(await Promise.all(nodes.map(async (n) => [n, await deps.scraper.pair(n)] as const)));
  const out: Record<string, unknown>[] = [];
  for (const pod of pods) {
    const pair = pairs.get(pod.spec?.nodeName ?? '');
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const usage = pair && podUsage(pair.prev, pair.last, `${ns}/${name}`);
    if (!usage) continue;
    out.push({
      metadata: {
        name,
        namespace: ns,
        creationTimestamp: iso(Date.now()),
        ...(pod.metadata.labels ? { labels: pod.metadata.labels } : {}),
      },
      timestamp: iso(usage.timestamp),
      window: formatDuration(usage.windowMs),
      containers: usage.containers.map((c) => ({
        name: c.name,
        usage: { cpu: cpuQuantity(c.cpuNanoCores), memory: memoryQuantity(c.memoryBytes) },
      })),
    });
  }
  return out;
}

function query(request: FastifyRequest, name: string): string | undefined {
  const v = (request.query as Record<string, string | string[] | undefined> | undefined)?.[name];
  return Array.isArray(v) ? v[0] : v;
}

async function answer(deps: MetricsApiDeps, request: FastifyRequest): Promise<Record<string, unknown>> {
  const info = request.requestInfo;
  const path = info.path.replace(/\/$/, '');
  if (path === `/apis/${METRICS_GROUP}`) {
    const version = { groupVersion: GV, version: METRICS_VERSION };
    return {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: METRICS_GROUP,
      versions: [version],
      preferredVersion: version,
    };
  }
  if (path === `/apis/${GV}`)
    return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: GV, resources: METRICS_RESOURCES };
  const kind =
    info.resource === 'nodes' ? 'NodeMetrics' : info.resource === 'pods' ? 'PodMetrics' : undefined;
  if (!info.isResourceRequest || info.apiVersion !== METRICS_VERSION || !kind || info.subresource !== '')
    throw notFound({ resource: info.resource, group: METRICS_GROUP, name: info.name });
  if (info.verb !== 'get' && info.verb !== 'list')
    throw methodNotAllowed(`the server does not allow this method on the requested resource`);
  const selector = LabelSelector.parse(query(request, 'labelSelector'));
  const typed = (o: Record<string, unknown>): Record<string, unknown> => ({ kind, apiVersion: GV, ...o });
  if (kind === 'NodeMetrics') {
    const resource = 'nodemetrics';
    if (info.verb === 'get') {
      const node = await deps.node(info.name);
      if (!node) throw notFound({ resource: 'nodes', group: '', name: info.name });
      const m = await nodeMetrics(deps, node);
      if (!m) throw notFound({ resource, group: METRICS_GROUP, name: info.name });
      return typed(m);
    }
    const nodes = (await deps.nodes()).filter((n) => selector.matches(n.metadata.labels));
    deps.scraper.retain(new Set((await deps.nodes()).map((n) => n.metadata.name ?? '')));
    const items = (await Promise.all(nodes.map((n) => nodeMetrics(deps, n)))).filter((m) => m !== undefined);
    return { kind: 'NodeMetricsList', apiVersion: GV, metadata: {}, items: items.map(typed) };
  }
  if (info.verb === 'get') {
    const pod = await deps.pod(info.namespace, info.name);
    if (!pod) throw notFound({ resource: 'pods', group: '', name: info.name });
    const [m] = await podMetrics(deps, [pod]);
    if (!m) throw notFound({ resource: 'podmetrics', group: METRICS_GROUP, name: info.name });
    return typed(m);
  }
  const pods = (await deps.pods(info.namespace === '' ? undefined : info.namespace)).filter((p) =>
    selector.matches(p.metadata.labels),
  );
  return {
    kind: 'PodMetricsList',
    apiVersion: GV,
    metadata: {},
    items: (await podMetrics(deps, pods)).map(typed),
  };
}

/**
 * An onRequest step (after authorization): answers the group's requests, false for every other
 * request (and for all of them while a remote APIService serves the group).
 */
export function metricsApi(deps: MetricsApiDeps): (request: FastifyRequest, reply: FastifyReply) => boolean {
  return (request, reply) => {
    const info = request.requestInfo;
    const path = info.path;
    if (path !== `/apis/${METRICS_GROUP}` && !path.startsWith(`/apis/${METRICS_GROUP}/`)) return false;
    if (deps.remote()) return false;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      void reply.send(methodNotAllowed(`the server does not allow this method on the requested resource`));
      return true;
    }
    answer(deps, request).then(
      (body) => void reply.code(200).header('content-type', 'application/json').send(JSON.stringify(body)),
      (err: unknown) =>
        void reply.send(
          err instanceof ApiError ? err : new ApiError('InternalError', (err as Error).message, {}),
        ),
    );
    return true;
  };
}
