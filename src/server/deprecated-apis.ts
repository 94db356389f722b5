/**
 * Requests for deprecated API versions, as kube-apiserver answers them: a `Warning: 299 - "..."`
 * header with kube's text (watches included: the header goes on the raw response), the gauge
 * `apiserver_requested_deprecated_apis{group,version,resource,subresource,removed_release}` set
 * to 1, and the audit annotations `k8s.io/deprecated: "true"` and `k8s.io/removed-release` handed
 * to `annotate` (given only when auditing is on). Installed after authorization, so a refused
 * request gets none of them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Gauge, MetricsRegistry } from '../metrics/registry.js';
import type { Deprecations } from '../registry/deprecations.js';
import type { Registry } from '../registry/types.js';
import { warningHeader } from '../resource/write-options.js';

/** kube's audit annotation keys. */
export const DEPRECATED_ANNOTATION = 'k8s.io/deprecated';
export const REMOVED_RELEASE_ANNOTATION = 'k8s.io/removed-release';

/** Registers kube's gauge of requested deprecated APIs. */
export function deprecatedApisGauge(metrics: MetricsRegistry): Gauge {
  return metrics.gauge(
    'apiserver_requested_deprecated_apis',
    'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    ['group', 'version', 'resource', 'subresource', 'removed_release'],
  );
}

/** Where the audit annotations of a request go. */
export type AuditAnnotate = (request: FastifyRequest, key: string, value: string) => void;

/** The onRequest step of the module comment, or undefined when nothing served is deprecated. */
export function deprecatedApis(
  registry: Registry,
  deprecations: Deprecations,
  gauge: Gauge,
  annotate?: AuditAnnotate,
): ((request: FastifyRequest, reply: FastifyReply) => void) | undefined {
  if (deprecations.empty) return undefined;
  return (request, reply) => {
    const info = request.requestInfo;
    if (!info.isResourceRequest) return;
    const type = registry.byResource(info.apiGroup, info.apiVersion, info.resource);
    if (type === undefined) return;
    const d = deprecations.of(type.group, type.version, type.kind);
    if (d === undefined) return;
    const prior = reply.raw.getHeader('warning');
    const values = prior === undefined ? [] : Array.isArray(prior) ? prior : [String(prior)];
    reply.raw.setHeader('warning', [...values, warningHeader(d.warning)]);
    gauge.set([type.group, type.version, info.resource, info.subresource, d.removedRelease], 1);
    if (annotate !== undefined) {
      annotate(request, DEPRECATED_ANNOTATION, 'true');
      if (d.removedRelease !== '') annotate(request, REMOVED_RELEASE_ANNOTATION, d.removedRelease);
    }
  };
}
