/**
 * `pods/exec`, `pods/attach` and `pods/portforward` (GET and POST, with `Connection: Upgrade`),
 * proxied to the agent of the pod's node after the pipeline's authentication and authorization,
 * as kube-apiserver's ExecREST, AttachREST and PortForwardREST:
 *
 * - the pod must exist (404) and be bound to a node (400 "pod X does not have a host assigned");
 *   exec and attach name a container of the pod, or the pod has exactly one (400 otherwise);
 * - the agent's URL is kubelet's: `/exec|attach/{ns}/{pod}/{container}?input&output&error&tty
 *   &command...`, `/portForward/{ns}/{pod}[?port=...]`;
 * - a request that does not upgrade gets 400 "Upgrade request required";
 * - SPDY/3.1, and WebSocket subprotocols other than those below, pass through byte for byte (the
 *   agent and the runtime negotiate them);
 * - WebSocket `v5.channel.k8s.io` exec/attach is translated to SPDY (`src/http/stream/translator.ts`),
 *   WebSocket `SPDY/3.1+portforward.k8s.io` port forwarding is tunneled (`tunnel.ts`).
 *
 * A GET (what WebSocket clients send) is authorized by the pipeline as `get`; the `create` the
 * same request needs as a POST is checked here too, so read-only access to these subresources
 * never runs commands (kube's `AuthorizePodWebsocketUpgradeCreatePermission`, on by default
 * from 1.35; kube 1.33 asked for `get` alone).
 */
import type { FastifyRequest } from 'fastify';
import { badRequest, notFound } from '../api/errors.js';
import type { Pod } from '../api/types/core-v1.js';
import { attributesOf } from '../authz/attributes.js';
import { forbiddenError, type AuthorizerChain } from '../authz/authorizer.js';
import type { CustomEndpoint } from '../http/resource-routes.js';
import { admissionAttributes } from '../resource/admission.js';
import type { ResourceContext } from '../resource/context.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { takeUpgrade } from '../http/upgrade.js';
import { translateStream, wantsStreamTranslation } from '../http/stream/translator.js';
import { tunneledProtocols, tunnelStream } from '../http/stream/tunnel.js';
import {
  dialUpstream,
  forwardedHeaders,
  plainResponse,
  requestHead,
  splice,
  type UpstreamTarget,
} from '../http/stream/upstream.js';
import { agentOf, agentTls, readObject, type KubeletClientOptions } from './kubelet-proxy.js';

/** Counts of translated and tunneled sessions by code (kube's metrics of the same names). */
export interface StreamMetrics {
  /** `apiserver_stream_translator_requests_total{code}`. */
  translated(code: number): void;
  /** `apiserver_stream_tunnel_requests_total{code}`. */
  tunneled(code: number): void;
}

/** The two counters in `metrics`. */
export function podStreamMetrics(metrics: MetricsRegistry): StreamMetrics {
  const translator = metrics.counter(
    'apiserver_stream_translator_requests_total',
    'Total number of requests that were handled by the StreamTranslatorProxy, which processes streaming RemoteCommand/V5',
    ['code'],
  );
  const tunnel = metrics.counter(
    'apiserver_stream_tunnel_requests_total',
    'Total number of requests that were handled by the StreamTunnelProxy, which processes streaming PortForward/V2',
    ['code'],
  );
  return {
    translated: (code) => translator.inc([String(code)]),
    tunneled: (code) => tunnel.inc([String(code)]),
  };
}

/** The streaming subresources of pods. */
export type PodStream = 'exec' | 'attach' | 'portforward';

type Query = Record<string, string | string[] | undefined>;

/** Go's `strconv.ParseBool` truths, as kube's query conversion accepts them. */
const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);

function last(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[v.length - 1] : v;
}

function all(v: string | string[] | undefined): string[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function bool(q: Query, name: string): boolean {
  return TRUE.has(last(q[name]) ?? '');
}

/** The pod's container of the request (kube's validateContainer). */
function containerOf(pod: Pod, requested: string): string {
  const name = pod.metadata?.name ?? '';
  const spec = pod.spec ?? {};
  if (requested === '') {
    const containers = spec.containers ?? [];
    if (containers.length === 1) return containers[0]?.name ?? '';
    if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
    const names = [...containers, ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])].map(
      (c) => c.name ?? '',
    );
    throw badRequest(
      `a container name must be specified for pod ${name}, choose one of: [${names.join(' ')}]`,
    );
  }
  const known = [
    ...(spec.containers ?? []),
    ...(spec.initContainers ?? []),
    ...(spec.ephemeralContainers ?? []),
  ];
  if (!known.some((c) => c.name === requested)) {
    throw badRequest(`container ${requested} is not valid for pod ${name}`);
  }
  return requested;
}

/** The agent's path and query for the request (kube's streamLocation / PortForwardLocation). */
function agentPath(kind: PodStream, pod: Pod, q: Query): string {
  const ns = encodeURIComponent(pod.metadata?.namespace ?? '');
  const name = encodeURIComponent(pod.metadata?.name ?? '');
  const params = new URLSearchParams();
  if (kind === 'portforward') {
    const ports = all(q['ports']).flatMap((p) => p.split(','));
    if (ports.length > 0) params.set('port', ports.join(','));
    const query = params.toString();
    return `/portForward/${ns}/${name}${query === '' ? '' : `?${query}`}`;
  }
  const container = encodeURIComponent(containerOf(pod, last(q['container']) ?? ''));
  if (bool(q, 'stdin')) params.append('input', '1');
  if (bool(q, 'stdout')) params.append('output', '1');
  if (bool(q, 'stderr')) params.append('error', '1');
  if (bool(q, 'tty')) params.append('tty', '1');
  if (kind === 'exec') for (const c of all(q['command'])) params.append('command', c);
  const query = params.toString();
  return `/${kind}/${ns}/${name}/${container}${query === '' ? '' : `?${query}`}`;
}

/** 403 unless the request's user may also `create` the subresource (see the module comment). */
async function requireCreate(chain: AuthorizerChain | undefined, request: FastifyRequest): Promise<void> {
  if (chain === undefined || request.requestInfo.verb === 'create') return;
  const attrs = { ...attributesOf(request.user, request.requestInfo), verb: 'create' };
  const answer = await chain.authorize(attrs);
  if (answer.decision !== 'allow') throw forbiddenError(attrs, answer.reason);
}

/** Splices the client's upgrade to the agent byte for byte (kube's UpgradeAwareHandler). */
async function passThrough(
  client: { readonly connection: import('node:stream').Duplex; readonly head: Buffer },
  request: FastifyRequest,
  target: UpstreamTarget,
  path: string,
): Promise<void> {
  let upstream;
  try {
    upstream = await dialUpstream(target);
  } catch (err) {
    const message = `error dialing backend: ${(err as Error).message}`;
    const status = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason: 'InternalError',
      details: { causes: [{ message }] },
      code: 500,
    });
    client.connection.end(plainResponse(500, 'Internal Server Error', 'application/json', status));
    return;
  }
  upstream.write(
    requestHead(request.raw.method ?? 'GET', path, `${target.host}:${target.port}`, [
      ...forwardedHeaders(request.raw.rawHeaders),
    ]),
  );
  if (client.head.length > 0) upstream.write(client.head);
  splice(client.connection, upstream);
}

/**
 * Admission of the CONNECT, as kube-apiserver runs it before connecting (webhooks and policies
 * whose rules name CONNECT of `pods/exec`, `pods/attach` or `pods/portforward` see it).
 */
async function admitConnect(
  ctx: ResourceContext,
  kind: PodStream,
  namespace: string,
  name: string,
  request: FastifyRequest,
): Promise<void> {
  const type = ctx.registry.byResource('', 'v1', 'pods');
  if (type === undefined) return;
  const attrs = admissionAttributes({
    operation: 'CONNECT',
    type,
    subresource: kind,
    namespace,
    name,
    object: undefined,
    oldObject: undefined,
    requester: { user: request.user, dryRun: false, warnings: [], auditAnnotations: {} },
  });
  await ctx.admission.admit(attrs);
  await ctx.admission.validate(attrs);
}

/**
 * The endpoint of one streaming subresource. `authorizer` is the server's chain (for the
 * `create` check of GET requests; undefined when the server authorizes everything).
 */
export function podStreamEndpoint(
  kind: PodStream,
  opts: KubeletClientOptions,
  authorizer: () => AuthorizerChain | undefined,
  metrics: StreamMetrics,
): CustomEndpoint {
  return {
    methods: ['GET', 'POST'],
    bodyless: true,
    async handle({ ctx, target, request, reply }) {
      await requireCreate(authorizer(), request);
      const name = target.name ?? '';
      await admitConnect(ctx, kind, target.namespace ?? '', name, request);
      const pod = await readObject<Pod>(ctx, '', 'pods', target.namespace, name);
      if (!pod) throw notFound({ resource: 'pods', group: '', name });
      const q = (request.query ?? {}) as Query;
      const path = agentPath(kind, pod, q);
      const nodeName = pod.spec?.nodeName ?? '';
      if (nodeName === '') throw badRequest(`pod ${name} does not have a host assigned`);
      const { host, port } = await agentOf(ctx, nodeName, opts.addressTypes);
      const upstream: UpstreamTarget = { host, port, tls: agentTls(opts, nodeName) };
      const client = takeUpgrade(request, reply);
      if (client === undefined) throw badRequest('Upgrade request required');
      const raw = {
        method: request.raw.method ?? 'GET',
        headers: request.raw.headers,
        rawHeaders: request.raw.rawHeaders,
      };
      const session =
        kind !== 'portforward' && wantsStreamTranslation(raw.headers)
          ? translateStream(client, raw, upstream, path, {
              stdin: bool(q, 'stdin'),
              stdout: bool(q, 'stdout'),
              stderr: bool(q, 'stderr'),
              tty: bool(q, 'tty'),
            }).then((code) => metrics.translated(code))
          : kind === 'portforward' && tunneledProtocols(raw.headers).length > 0
            ? tunnelStream(client, raw, upstream, path).then((code) => metrics.tunneled(code))
            : passThrough(client, request, upstream, path);
      session.catch((err: unknown) => {
        request.log.error({ err }, `${kind} of pod ${target.namespace ?? ''}/${name} failed`);
        client.connection.destroy();
      });
      return undefined;
    },
  };
}
