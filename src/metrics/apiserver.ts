/**
 * kube-apiserver's request metrics, with its names, labels and buckets, recorded around every
 * request: `apiserver_request_total`, `apiserver_request_duration_seconds`,
 * `apiserver_current_inflight_requests`, `apiserver_longrunning_requests`, plus the storage and
 * process families registered by their own modules. The request hooks run on every request, so
 * they do one label computation and a few Map lookups, nothing else.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { onClose } from '../http/on-close.js';
import type { RequestInfo } from '../http/request-info.js';
import type { Counter, Gauge, Histogram, HistogramSeries, MetricsRegistry } from './registry.js';

/** kube's buckets of apiserver_request_duration_seconds and etcd_request_duration_seconds. */
export const REQUEST_DURATION_BUCKETS: readonly number[] = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

const REQUEST_LABELS = [
  'verb',
  'dry_run',
  'group',
  'version',
  'resource',
  'subresource',
  'scope',
  'component',
];

/** The request metric families of one server. */
export interface RequestMetrics {
  readonly total: Counter;
  readonly duration: Histogram;
  readonly inflight: Gauge;
  readonly longRunning: Gauge;
}

/** Registers the request families on `registry`. */
function requestMetrics(registry: MetricsRegistry): RequestMetrics {
  return {
    total: registry.counter(
      'apiserver_request_total',
      'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
      [...REQUEST_LABELS, 'code'],
    ),
    duration: registry.histogram(
      'apiserver_request_duration_seconds',
      'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
      REQUEST_LABELS,
      REQUEST_DURATION_BUCKETS,
    ),
    inflight: registry.gauge(
      'apiserver_current_inflight_requests',
      'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
      ['request_kind'],
    ),
    longRunning: registry.gauge(
      'apiserver_longrunning_requests',
      'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
      ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
    ),
  };
}

const VERBS: Readonly<Record<string, string>> = {
  get: 'GET',
  list: 'LIST',
  watch: 'WATCH',
  create: 'POST',
  update: 'PUT',
  patch: 'PATCH',
  delete: 'DELETE',
  deletecollection: 'DELETECOLLECTION',
  proxy: 'CONNECT',
};

/** kube's reported verb: the REST action (LIST, WATCH, POST, ...), APPLY for server-side apply. */
export function reportedVerb(info: RequestInfo, method: string, contentType: string | undefined): string {
  if (!info.isResourceRequest) return method === 'HEAD' ? 'GET' : method;
  if (info.verb === 'patch' && contentType?.startsWith('application/apply-patch') === true) return 'APPLY';
  return VERBS[info.verb] ?? method;
}

/** kube's scope label: resource (named or created), namespace, cluster, or '' off the resource API. */
export function scopeOf(info: RequestInfo): string {
  if (!info.isResourceRequest) return '';
  if (info.name !== '' || info.verb === 'create') return 'resource';
  if (info.namespace !== '') return 'namespace';
  return 'cluster';
}

/** True for requests that change state (kube's mutating request kind). */
export function isMutating(info: RequestInfo): boolean {
  const v = info.verb;
  return v !== 'get' && v !== 'list' && v !== 'watch' && v !== 'head' && v !== 'options';
}

function dryRunOf(request: FastifyRequest): string {
  const q = (request.query as Record<string, string | string[] | undefined> | undefined)?.['dryRun'];
  if (q === undefined) return '';
  return Array.isArray(q) ? q.join(',') : q;
}

/** The series one kind of request updates (same verb, dry run, resource and scope). */
interface RouteSeries {
  /** `apiserver_current_inflight_requests` or `apiserver_longrunning_requests`. */
  readonly live: { value: number };
  readonly duration: HistogramSeries;
  readonly labels: readonly string[];
  /** `apiserver_request_total` by response code. */
  readonly totals: Map<number, { value: number }>;
}

/**
 * The pipeline step that records every request on `metrics` (run right after request info, so
 * rejected requests count too): started now, finished when the raw response closes, so hijacked
 * replies (watches) and aborted requests count as well. `isLongRunning` says which requests are
 * long-running (watches): they are in `apiserver_longrunning_requests`, not in flight. The
 * series of each kind of request are looked up once, by one key, and kept.
 */
function requestRecorder(
  metrics: RequestMetrics,
  isLongRunning: (request: FastifyRequest) => boolean,
): (request: FastifyRequest, reply: FastifyReply) => void {
  const routes = new Map<string, RouteSeries>();
  const routeOf = (request: FastifyRequest, info: RequestInfo, long: boolean): RouteSeries => {
    const verb = reportedVerb(info, request.method, request.headers['content-type']);
    const dryRun = dryRunOf(request);
    const scope = scopeOf(info);
    const key = `${long ? 'L' : isMutating(info) ? 'M' : 'R'}\u0000${verb}\u0000${dryRun}\u0000${info.apiGroup}\u0000${info.apiVersion}\u0000${info.resource}\u0000${info.subresource}\u0000${scope}`;
    let route = routes.get(key);
    if (route === undefined) {
      const base = [info.apiGroup, info.apiVersion, info.resource, info.subresource, scope, 'apiserver'];
      const labels = [verb, dryRun, ...base];
      route = {
        live: long
          ? metrics.longRunning.child([verb, ...base])
          : metrics.inflight.child([isMutating(info) ? 'mutating' : 'readOnly']),
        duration: metrics.duration.child(labels),
        labels,
        totals: new Map(),
      };
      routes.set(key, route);
    }
    return route;
  };
  return (request, reply) => {
    const started = performance.now();
    const route = routeOf(request, request.requestInfo, isLongRunning(request));
    route.live.value += 1;
    onClose(reply.raw, () => {
      route.live.value -= 1;
      metrics.duration.observeChild(route.duration, (performance.now() - started) / 1000);
      const code = reply.raw.statusCode;
      let total = route.totals.get(code);
      if (total === undefined) {
        total = metrics.total.child([...route.labels, String(code)]);
        route.totals.set(code, total);
      }
      total.value += 1;
    });
  };
}

/**
 * The request recorder of a server (the pipeline's observe step) over its request families, or
 * undefined when `--disabled-metrics` turned all of them off.
 */
export function requestObserver(
  registry: MetricsRegistry,
  isLongRunning: (request: FastifyRequest) => boolean,
): ((request: FastifyRequest, reply: FastifyReply) => void) | undefined {
  const metrics = requestMetrics(registry);
  return registry.anyEnabled(Object.values(metrics)) ? requestRecorder(metrics, isLongRunning) : undefined;
}
