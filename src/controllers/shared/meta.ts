/**
 * Small object-metadata helpers the controllers share: kube's RFC 3339 timestamps (whole
 * seconds), and objects with their kind filled in (informer objects may lack `apiVersion` and
 * `kind`; events and owner references need them).
 */
import type { ObjectMeta } from '../../api/types/meta-v1.js';

/** `ms` as kube writes `metav1.Time`: `2006-01-02T15:04:05Z`. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** `obj` with `apiVersion` and `kind` set (for events and references). */
export function typed<T extends { metadata: ObjectMeta }>(
  obj: T,
  apiVersion: string,
  kind: string,
): T & { apiVersion: string; kind: string } {
  return { ...obj, apiVersion, kind };
}

/** `namespace/name` or `name`, as client-go's `MetaNamespaceKeyFunc`. */
export function keyOf(meta: ObjectMeta): string {
  return meta.namespace === undefined || meta.namespace === ''
    ? (meta.name ?? '')
    : `${meta.namespace}/${meta.name ?? ''}`;
}

/** Splits a key of {@link keyOf}. */
export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash === -1
    ? { namespace: '', name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}
