/**
 * Namespace helpers the per-namespace publishers share (serviceaccount, root CA): whether a
 * namespace still takes new objects, and whether a create failed because it is going away.
 */
import type { Namespace } from '../../api/types/core-v1.js';
import { ApiStatusError, isForbidden, isNotFound } from '../../client/index.js';

/** The cause (`reason` on the wire) kube-apiserver sets when it refuses a create in a terminating namespace. */
export const NAMESPACE_TERMINATING_CAUSE = 'NamespaceTerminating';

/** True when `ns` is Active (kube's publishers skip namespaces that are not). */
export function namespaceActive(ns: Namespace): boolean {
  return ns.metadata.deletionTimestamp === undefined && (ns.status?.phase ?? 'Active') === 'Active';
}

/**
 * True when a create failed because the namespace is gone or terminating (kube's
 * `HasStatusCause(err, NamespaceTerminatingCause)`, and NotFound for a namespace deleted meanwhile).
 */
export function namespaceGoneOrTerminating(err: unknown): boolean {
  return isNotFound(err) || namespaceTerminating(err);
}

/**
 * True when a create was refused because its namespace is being deleted (kube's
 * `HasStatusCause(err, NamespaceTerminatingCause)`: the cause's `reason` on the wire). The
 * workload controllers stop creating there without an event or a retry.
 */
export function namespaceTerminating(err: unknown): boolean {
  if (!(err instanceof ApiStatusError) || !isForbidden(err)) return false;
  return (err.status.details?.causes ?? []).some((c) => c.reason === NAMESPACE_TERMINATING_CAUSE);
}
