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
 * The client's credentials, impersonation and hop-by-hop headers are not passed on; the backend
 * gets `X-Forwarded-Uri`. As kube's proxy: a GET or HEAD of `.../proxy` without a path is
 * redirected (301) to `.../proxy/`; the backend's CORS headers are dropped; a redirect's
 * `Location` and the links of an HTML page that point at the backend are rewritten to go through
 * the proxy (`src/http/html-links.ts`). Not done (kube does): upgrades through these
 * subresources.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { deflateRawSync, gunzipSync, gzipSync, inflateRawSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, notFound, serviceUnavailable } from '../api/errors.js';
import type { Endpoints, Pod, Service } from '../api/types/core-v1.js';
import type { ResourceContext } from '../resource/context.js';
import { agentOf, agentTls, readObject, type KubeletClientOptions } from './kubelet-proxy.js';
import { DROPPED_HEADERS } from '../aggregation/proxy.js';
import { rewriteHtml, rewriteUrl, type LinkRewrite } from '../http/html-links.js';

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

/**
 * The request path split at `/{resource}/{name}/proxy`: the proxy's prefix (up to and including
 * `/proxy`), the path after it (empty when nothing follows) and the query (with its `?`).
 */
function splitProxyPath(url: string, resource: string): { prefix: string; path: string; query: string } {
  const q = url.indexOf('?');
  const full = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? '' : url.slice(q);
  const m = new RegExp(`^(.*/${resource}/[^/]+/proxy)(/.*)?$`).exec(full);
  return { prefix: m?.[1] ?? full, path: m?.[2] ?? '', query };
}

/** CORS headers of the backend, which the proxy does not pass on (kube's corsRemovingTransport). */
const CORS_HEADERS = new Set([
  'access-control-allow-credentials',
  'access-control-allow-headers',
  'access-control-allow-methods',
  'access-control-allow-origin',
]);

/** The body of a `text/html` answer with its links rewritten, encoded as it came (kube's rewriteResponse). */
async function rewrittenPage(res: IncomingMessage, rewrite: LinkRewrite): Promise<Buffer | undefined> {
  const encoding = String(res.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding !== '' && encoding !== 'gzip' && encoding !== 'deflate') return undefined;
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks);
  const decode =
    encoding === 'gzip' ? gunzipSync : encoding === 'deflate' ? inflateRawSync : (b: Buffer) => b;
  const encode = encoding === 'gzip' ? gzipSync : encoding === 'deflate' ? deflateRawSync : (b: Buffer) => b;
  const page = rewriteHtml(decode(raw).toString('utf8'), (url) => rewriteUrl(url, rewrite));
  return encode(Buffer.from(page, 'utf8'));
}

function isHtml(res: IncomingMessage): boolean {
  return (String(res.headers['content-type'] ?? '').split(';')[0] ?? '').trim().toLowerCase() === 'text/html';
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

/**
 * Sends the backend's answer: its status and headers (without hop-by-hop and CORS headers), a
 * redirect's `Location` and an HTML page's links rewritten through the proxy, the rest streamed.
 */
async function answer(res: IncomingMessage, rewrite: LinkRewrite, reply: FastifyReply): Promise<void> {
  void reply.code(res.statusCode ?? 502);
  const location = res.headers.location;
  const page = location === undefined && isHtml(res) ? await rewrittenPage(res, rewrite) : undefined;
  for (const [key, value] of Object.entries(res.headers)) {
    const k = key.toLowerCase();
    if (value === undefined || DROPPED_HEADERS.has(k) || CORS_HEADERS.has(k)) continue;
    if (k === 'content-length' && page !== undefined) continue;
    void reply.header(
      key,
      k === 'location' && typeof value === 'string' ? rewriteUrl(value, rewrite) : value,
    );
  }
  void reply.send(page ?? res);
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
    const { prefix, path, query } = splitProxyPath(request.raw.url ?? '/', info.resource);
    // `.../proxy` without a path: a redirect to `.../proxy/` (kube's proxyRedirectsforRootPath).
    if (path === '' && (request.method === 'GET' || request.method === 'HEAD')) {
      void reply.code(301).header('location', `${prefix}/${query}`).send();
      return;
    }
    const backendPath = (path === '' ? '/' : path) + query;
    const rewrite: LinkRewrite = {
      prefix,
      backendHost: `${location.host.includes(':') ? `[${location.host}]` : location.host}:${location.port}`,
      requestHost: String(request.headers.host ?? request.headers[':authority'] ?? ''),
    };
    const send = location.scheme === 'https' ? httpsRequest : httpRequest;
    const upstream = send(
      {
        host: location.host,
        port: location.port,
        method: request.method,
        path: backendPath,
        headers: { ...forwarded(request.headers), 'x-forwarded-uri': prefix + (path === '' ? '/' : path) },
        ...(location.tls ?? (location.scheme === 'https' ? { rejectUnauthorized: false } : {})),
      },
      (res) => {
        void answer(res, rewrite, reply).catch((err: unknown) => {
          request.log.error({ err }, `proxying ${info.resource}/${info.name} failed`);
          if (!reply.sent) void reply.send(err);
          else reply.raw.destroy();
        });
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
