/**
 * The aggregator's proxy: a request under `/apis/<group>/<version>` of a remote APIService is
 * sent, once authenticated and authorized here, to a ready endpoint of the APIService's Service,
 * with the front-proxy client certificate and the user in the request-header identity headers
 * (`X-Remote-User`, `X-Remote-Group`, `X-Remote-Extra-<key>`, or the first names of the
 * `--requestheader-*-headers` flags). The client's own credentials (Authorization,
 * impersonation and identity headers) are not passed on. The answer is streamed back as it
 * comes, so watches stay open through the proxy.
 *
 * A request for an APIService that is not Available is kube's 503 `service unavailable`.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, internalError, serviceUnavailable } from '../api/errors.js';
import type { UserInfo } from '../api/user.js';
import type { Aggregator, RemoteGroupVersion } from './availability.js';

/** The identity header names sent to the backends. */
export interface IdentityHeaders {
  readonly user: string;
  readonly uid: string;
  readonly group: string;
  readonly extraPrefix: string;
}

/** kube's front-proxy header names. */
export const DEFAULT_IDENTITY_HEADERS: IdentityHeaders = {
  user: 'X-Remote-User',
  uid: 'X-Remote-Uid',
  group: 'X-Remote-Group',
  extraPrefix: 'X-Remote-Extra-',
};

/** Headers never passed on: hop-by-hop ones, HTTP/2 pseudo-headers, the client's credentials. */
export const DROPPED_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'authorization',
]);

function forwardedHeaders(incoming: IncomingHttpHeaders, names: IdentityHeaders): OutgoingHttpHeaders {
  const identity = [names.user, names.uid, names.group].map((n) => n.toLowerCase());
  const extra = names.extraPrefix.toLowerCase();
  const out: OutgoingHttpHeaders = {};
  for (const [key, value] of Object.entries(incoming)) {
    const k = key.toLowerCase();
    if (value === undefined || k.startsWith(':') || DROPPED_HEADERS.has(k)) continue;
    if (k.startsWith('impersonate-') || identity.includes(k) || k.startsWith(extra)) continue;
    out[k] = value;
  }
  return out;
}

/** The identity headers of `user` (extra keys percent-encoded, as kube's). */
function identityHeaders(user: UserInfo, names: IdentityHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { [names.user]: user.name };
  if (user.uid !== '') out[names.uid] = user.uid;
  if (user.groups.length > 0) out[names.group] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra)) {
    if (values.length > 0) out[`${names.extraPrefix}${encodeURIComponent(key)}`] = [...values];
  }
  return out;
}

/**
 * The group and version of an `/apis/<group>/<version>[/...]` path (decoded, without the query:
 * the request info's), or undefined.
 */
function groupVersionOfPath(path: string): { group: string; version: string } | undefined {
  const m = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/.exec(path);
  if (m === null) return undefined;
  return { group: m[1] ?? '', version: m[2] ?? '' };
}

/**
 * An onRequest step (after authorization): proxies requests of remote group versions and
 * answers them; returns false for every other request.
 */
export function aggregatorProxy(
  aggregator: Aggregator,
  names: IdentityHeaders,
): (request: FastifyRequest, reply: FastifyReply) => boolean {
  return (request, reply) => {
    const gv = groupVersionOfPath(request.requestInfo.path);
    if (gv === undefined) return false;
    const remote = aggregator.remote(gv.group, gv.version);
    if (remote === undefined) return false;
    if (!remote.available) throw serviceUnavailable('service unavailable');
    const user = request.user as UserInfo | undefined;
    if (user === undefined || user === null) throw internalError('missing user');
    void proxy(aggregator, remote, request, reply, {
      ...forwardedHeaders(request.headers, names),
      ...identityHeaders(user, names),
    });
    return true;
  };
}

async function proxy(
  aggregator: Aggregator,
  remote: RemoteGroupVersion,
  request: FastifyRequest,
  reply: FastifyReply,
  headers: OutgoingHttpHeaders,
): Promise<void> {
  const fail = (err: unknown): void => {
    if (reply.sent) return;
    void reply.send(
      err instanceof ApiError
        ? err
        : serviceUnavailable(`error trying to reach service: ${(err as Error).message}`),
    );
  };
  let endpoint;
  try {
    endpoint = await aggregator.backends.resolve(remote.spec);
  } catch (err) {
    fail(serviceUnavailable(`service unavailable: ${(err as Error).message}`));
    return;
  }
  const upstream = aggregator.backends.request(
    remote.spec,
    endpoint,
    request.method,
    request.url,
    headers,
    (res) => {
      void reply.code(res.statusCode ?? 502);
      for (const [key, value] of Object.entries(res.headers)) {
        if (value === undefined || DROPPED_HEADERS.has(key.toLowerCase())) continue;
        void reply.header(key, value);
      }
      void reply.send(res);
    },
  );
  upstream.on('error', fail);
  // The client going away ends the upstream request (a watch's connection, say).
  reply.raw.on('close', () => {
    if (!upstream.destroyed) upstream.destroy();
  });
  request.raw.pipe(upstream);
}
