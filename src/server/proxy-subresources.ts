/**
 * The `proxy` subresources of nodes, pods and services, as kube-apiserver's ProxyREST: once the
 * request is authenticated and authorized (`get`/`create`/`update`/`patch`/`delete` on
 * `nodes/proxy`, `pods/proxy`, `services/proxy` by method), the rest of the path after `/proxy`
 * and the query go to
 *
 * - `nodes/{name}[:port]/proxy/...`: the node's agent over HTTPS with the `--kubelet-client-*`
 *   certificate (the agent's port unless one is named);
 * - `pods/[scheme:]{name}[:port]/proxy/...`: the pod's IP over plain HTTP (or HTTPS), at the port
 *   named (when none, the first port a container declares, else the scheme's);
 * - `services/[scheme:]{name}[:port]/proxy/...`: one address of the Service's Endpoints, at the
 *   endpoint port of the Service port named (by name or number; the only one when none).
 *
 * The request body streams to the backend and the answer streams back (status, headers, body).
 * The client's credentials, impersonation and hop-by-hop headers are not passed on. Not done
 * (kube does): rewriting links in HTML answers, upgrades through these subresources.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, notFound, serviceUnavailable } from '../api/errors.js';
import type { Endpoints, Pod, Service } from '../api/types/core-v1.js';
import type { ResourceContext } from '../resource/context.js';
import { agentOf, agentTls, readObject, type KubeletClientOptions } from './kubelet-proxy.js';
import { DROPPED_HEADERS } from '../aggregation/proxy.js';

const PROXIED = new Set(['nodes', 'pods', 'services']);

/** Where a proxied request goes. */
interface Location {
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly port: number;
  readonly tls?: ReturnType<typeof agentTls>;
}

/** `[scheme:]name[:port]` (kube's `SplitSchemeNamePort`). */
function splitName(id: string): { scheme: string; name: string; port: string } {
  const parts = id.split(':');
  if (parts.length === 1) return { scheme: '', name: parts[0] ?? '', port: '' };
  if (parts.length === 2) return { scheme: '', name: parts[0] ?? '', port: parts[1] ?? '' };
  if (parts.length === 3) return { scheme: parts[0] ?? '', name: parts[1] ?? '', port: parts[2] ?? '' };
  throw badRequest(`invalid service request ${JSON.stringify(id)}`);
}

function schemeOf(s: string): 'http' | 'https' {
  if (s === '' || s === 'http') return 'http';
  if (s === 'https') return 'https';
  throw badRequest(`unsupported scheme ${JSON.stringify(s)}`);
}

function portNumber(p: string, what: string): number {
  const n = Number(p);
  if (!Number.isInteger(n) || n <= 0 || n > 65535)
    throw badRequest(`invalid port ${JSON.stringify(p)} for ${what}`);
  return n;
}

async function nodeLocation(ctx: ResourceContext, id: string, opts: KubeletClientOptions): Promise<Location> {
  const { name, port } = splitName(id);
  const agent = await agentOf(ctx, name, opts.addressTypes);
  return {
    scheme: 'https',
    host: agent.host,
    port: port === '' ? agent.port : portNumber(port, `node ${name}`),
    tls: agentTls(opts, name),
  };
}

async function podLocation(ctx: ResourceContext, ns: string, id: string): Promise<Location> {
  const { scheme, name, port } = splitName(id);
  const pod = await readObject<Pod>(ctx, '', 'pods', ns, name);
  if (!pod) throw notFound({ resource: 'pods', group: '', name });
  const ip = pod.status?.podIP ?? '';
  if (ip === '') throw serviceUnavailable(`pod ${name} has no IP yet`);
  // No port named: the first port a container declares, as kube's; else the scheme's own.
  const declared = (pod.spec?.containers ?? []).find((c) => (c.ports ?? []).length > 0)?.ports?.[0]
    ?.containerPort;
  const s = schemeOf(scheme);
  const fallback = declared ?? (s === 'https' ? 443 : 80);
  return { scheme: s, host: ip, port: port === '' ? fallback : portNumber(port, `pod ${name}`) };
}

async function serviceLocation(ctx: ResourceContext, ns: string, id: string): Promise<Location> {
  const { scheme, name, port } = splitName(id);
  const svc = await readObject<Service>(ctx, '', 'services', ns, name);
  if (!svc) throw notFound({ resource: 'services', group: '', name });
  const ports = svc.spec?.ports ?? [];
  const svcPort =
    port === ''
      ? ports.length === 1
        ? ports[0]
        : undefined
      : ports.find((p) => p.name === port || String(p.port) === port);
  if (svcPort === undefined)
    throw serviceUnavailable(`no service port ${JSON.stringify(port)} found for service "${name}"`);
  const eps = await readObject<Endpoints>(ctx, '', 'endpoints', ns, name);
  for (const subset of eps?.subsets ?? []) {
    const epPort = (subset.ports ?? []).find((p) => (p.name ?? '') === (svcPort.name ?? ''));
    const address = subset.addresses?.[0]?.ip;
    if (epPort?.port !== undefined && address !== undefined) {
      return { scheme: schemeOf(scheme), host: address, port: epPort.port };
    }
  }
  throw serviceUnavailable(`no endpoints available for service "${name}"`);
}

/** The path after `/{resource}/{name}/proxy` in the request URL (at least `/`), with its query. */
function restOf(url: string, resource: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q);
  const m = new RegExp(`/${resource}/[^/]+/proxy(/.*)?$`).exec(path);
  return (m?.[1] ?? '/') + query;
}

function forwarded(headers: IncomingMessage['headers']): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [key, value] of Object.entries(headers)) {
    const k = key.toLowerCase();
    if (value === undefined || k.startsWith(':') || DROPPED_HEADERS.has(k) || k.startsWith('impersonate-'))
      continue;
    out[k] = value;
  }
  return out;
}

/**
 * An onRequest step (after authorization): proxies the `proxy` subresource of nodes, pods and
 * services and answers; false for every other request. `ctx` is the resource layer's context.
 */
export function proxySubresources(
  ctx: () => ResourceContext,
  opts: KubeletClientOptions,
): (request: FastifyRequest, reply: FastifyReply) => boolean {
  return (request, reply) => {
    const info = request.requestInfo;
    if (!info.isResourceRequest || info.apiGroup !== '' || info.subresource !== 'proxy') return false;
    if (!PROXIED.has(info.resource) || info.name === '') return false;
    void serve(ctx(), opts, request, reply);
    return true;
  };
}

async function serve(
  ctx: ResourceContext,
  opts: KubeletClientOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const info = request.requestInfo;
  try {
    const location =
      info.resource === 'nodes'
        ? await nodeLocation(ctx, info.name, opts)
        : info.resource === 'pods'
          ? await podLocation(ctx, info.namespace, info.name)
          : await serviceLocation(ctx, info.namespace, info.name);
    const path = restOf(request.raw.url ?? '/', info.resource);
    const send = location.scheme === 'https' ? httpsRequest : httpRequest;
    const upstream = send(
      {
        host: location.host,
        port: location.port,
        method: request.method,
        path,
        headers: forwarded(request.headers),
        ...(location.tls ?? (location.scheme === 'https' ? { rejectUnauthorized: false } : {})),
      },
      (res) => {
        void reply.code(res.statusCode ?? 502);
        for (const [key, value] of Object.entries(res.headers)) {
          if (value === undefined || DROPPED_HEADERS.has(key.toLowerCase())) continue;
          void reply.header(key, value);
        }
        void reply.send(res);
      },
    );
    upstream.on('error', (err) => {
      if (!reply.sent) {
        void reply.send(
          new ApiError('ServiceUnavailable', `error trying to reach ${info.resource}: ${err.message}`, {}),
        );
      }
    });
    reply.raw.on('close', () => {
      if (!upstream.destroyed) upstream.destroy();
    });
    request.raw.pipe(upstream);
  } catch (err) {
    if (!reply.sent) void reply.send(err);
  }
}
