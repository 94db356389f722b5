/**
 * The API server's side of the node agent's API: `pods/log` proxied to the agent of the pod's
 * node (`https://<node InternalIP>:<kubeletEndpoint port>/containerLogs/...`), with the client
 * certificate of `--kubelet-client-certificate`/`--kubelet-client-key` and, when given, the CA of
 * `--kubelet-certificate-authority` (without it the agent's certificate is not verified, as
 * kube-apiserver does). The agent's answer streams through unchanged (`follow` included), or
 * over WebSocket to a client that asks for it so.
 */
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { ConnectionOptions } from 'node:tls';
import { ApiError, badRequest, notFound } from '../api/errors.js';
import { decodeStored } from '../api/object.js';
import type { Pod, Node } from '../api/types/core-v1.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import { takeUpgrade } from '../http/upgrade.js';
import { isWebSocketRequest } from '../http/stream/websocket.js';
import { streamOverWebSocket } from '../http/stream/websocket-reader.js';
import { objectKey } from '../resource/keys.js';
import type { ResourceContext } from '../resource/context.js';

/** How the server reaches agents. */
export interface KubeletClientOptions {
  readonly cert?: string;
  readonly key?: string;
  readonly ca?: string;
  /** `--kubelet-preferred-address-types`, in order (default {@link DEFAULT_ADDRESS_TYPES}). */
  readonly addressTypes?: readonly string[];
}

/** The node address types tried when none are configured, in order. */
export const DEFAULT_ADDRESS_TYPES: readonly string[] = [
  'InternalIP',
  'Hostname',
  'InternalDNS',
  'ExternalDNS',
  'ExternalIP',
];

const ADDRESS_TYPES = new Set(['Hostname', 'InternalIP', 'ExternalIP', 'InternalDNS', 'ExternalDNS']);

/**
 * Checks `--kubelet-preferred-address-types` as kube-apiserver does (a known NodeAddressType
 * each, at least one). @throws Error naming the bad entry
 */
export function addressTypesOf(value: unknown): readonly string[] {
  const list = Array.isArray(value) ? value.map(String) : DEFAULT_ADDRESS_TYPES;
  if (list.length === 0) throw new Error('--kubelet-preferred-address-types must not be empty');
  for (const t of list)
    if (!ADDRESS_TYPES.has(t))
      throw new Error(`--kubelet-preferred-address-types: unknown NodeAddressType ${JSON.stringify(t)}`);
  return list;
}

/** The options from the server's `--kubelet-*` flags (files read once, at start). */
export function kubeletClientOptions(flags: ReadonlyMap<string, unknown>): KubeletClientOptions {
  const file = (name: string): string | undefined => {
    const path = flags.get(name);
    return typeof path === 'string' && path ? readFileSync(path, 'utf8') : undefined;
  };
  const cert = file('kubelet-client-certificate');
  const key = file('kubelet-client-key');
  const ca = file('kubelet-certificate-authority');
  return {
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(ca ? { ca } : {}),
    addressTypes: addressTypesOf(flags.get('kubelet-preferred-address-types')),
  };
}

/** An object from storage (undefined when absent or its kind is not served). */
export async function readObject<T>(
  ctx: ResourceContext,
  group: string,
  plural: string,
  namespace: string | undefined,
  name: string,
): Promise<T | undefined> {
  const type = ctx.registry.byResource(group, 'v1', plural);
  if (!type) return undefined;
  const { kv } = await ctx.store.get(objectKey(type, namespace, name));
  return kv === undefined ? undefined : (decodeStored(kv.value, kv.modRevision) as T);
}

/**
 * The agent's address and port of a node: the first address of the first preferred type that
 * the node has (kube's `GetPreferredNodeAddress`), the port of its `kubeletEndpoint`.
 * @throws ApiError 404 for a missing node, 500 when it has no address of a preferred type
 */
export async function agentOf(
  ctx: ResourceContext,
  nodeName: string,
  addressTypes: readonly string[] = DEFAULT_ADDRESS_TYPES,
): Promise<{ host: string; port: number }> {
  const node = await readObject<Node>(ctx, '', 'nodes', undefined, nodeName);
  if (!node) throw notFound({ resource: 'nodes', group: '', name: nodeName });
  const addrs = node.status?.addresses ?? [];
  let host: string | undefined;
  for (const type of addressTypes) {
    host = addrs.find((a) => a.type === type && a.address)?.address;
    if (host) break;
  }
  if (!host) {
    const known = addrs.map((a) => `${a.type}:${a.address}`).join(' ');
    throw new ApiError('InternalError', `no preferred addresses found; known addresses: [${known}]`, {});
  }
  return { host, port: node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 10250 };
}

/**
 * TLS options toward the agent of `nodeName`: the client certificate, and the CA with the node's
 * name checked when `--kubelet-certificate-authority` is set (else the agent is not verified).
 */
export function agentTls(opts: KubeletClientOptions, nodeName: string): ConnectionOptions {
  return {
    ...(opts.cert ? { cert: opts.cert } : {}),
    ...(opts.key ? { key: opts.key } : {}),
    ...(opts.ca
      ? { ca: opts.ca, rejectUnauthorized: true, servername: nodeName }
      : { rejectUnauthorized: false }),
  };
}

const LOG_PARAMS = [
  'follow',
  'previous',
  'timestamps',
  'tailLines',
  'limitBytes',
  'sinceSeconds',
  'sinceTime',
];

/**
 * `GET pods/{name}/log`, proxied to the agent; sent over WebSocket when the client asks with a
 * WebSocket handshake (`src/http/stream/websocket-reader.ts`).
 */
export function podLogEndpoint(opts: KubeletClientOptions): CustomEndpoint {
  return {
    methods: ['GET'],
    async handle({ ctx, target, request, reply }) {
      const name = target.name ?? '';
      const ns = target.namespace ?? '';
      const pod = await readObject<Pod>(ctx, '', 'pods', ns, name);
      if (!pod) throw notFound({ resource: 'pods', group: '', name });
      const query = (request.query ?? {}) as Record<string, string | undefined>;
      const names = (pod.spec?.containers ?? []).map((c) => c.name ?? '');
      let container = query['container'] ?? '';
      if (!container) {
        if (names.length !== 1)
          throw badRequest(
            `a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`,
          );
        container = names[0] ?? '';
      }
      const nodeName = pod.spec?.nodeName;
      if (!nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
      const { host, port } = await agentOf(ctx, nodeName, opts.addressTypes);
      const q = new URLSearchParams();
      for (const p of LOG_PARAMS) if (query[p] !== undefined) q.set(p, query[p] ?? '');
      const path = `/containerLogs/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}?${q.toString()}`;
      const res = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpsRequest({
          host,
          port,
          path,
          method: 'GET',
          ...agentTls(opts, nodeName),
        });
        req.on('response', resolve);
        req.on('error', reject);
        request.raw.on('close', () => req.destroy());
        req.end();
      }).catch((err: unknown) => {
        throw new ApiError(
          'InternalError',
          `Get "https://${host}:${port}${path}": ${(err as Error).message}`,
          {},
        );
      });
      if (res.statusCode !== 200) {
        const chunks: Buffer[] = [];
        for await (const c of res) chunks.push(c as Buffer);
        throw badRequest(
          Buffer.concat(chunks).toString('utf8').trim() || `agent answered ${res.statusCode ?? 0}`,
        );
      }
      const client = isWebSocketRequest(request.headers) ? takeUpgrade(request, reply) : undefined;
      if (client === undefined) return { code: 200, body: res, contentType: 'text/plain' };
      const raw = { method: request.raw.method ?? 'GET', headers: request.headers };
      streamOverWebSocket(client, raw, res).catch((err: unknown) => {
        request.log.error({ err }, `log of pod ${ns}/${name} over WebSocket failed`);
        client.connection.destroy();
      });
      return undefined;
    },
  };
}
