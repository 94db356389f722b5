/**
 * The deletion behaviour that is code rather than data: Pod's graceful deletion and Namespace's
 * finalizer condition (kube-apiserver's `pkg/registry/core/{pod,namespace}` strategies).
 */
import { isJsonObject, type KubeObject } from '../api/object.js';

/** The finalizer kube-apiserver's namespace controller owns. */
export const NAMESPACE_FINALIZER = 'kubernetes';

/** Pod's grace period: 0 for what no kubelet runs, else the request's or the spec's (30 s). */
export function podGracePeriodSeconds(obj: KubeObject, requested: number | undefined): number {
  const s = isJsonObject(obj['spec']) ? obj['spec'] : {};
  const status = isJsonObject(obj['status']) ? obj['status'] : {};
  // Kube deletes at once what no kubelet runs: unscheduled pods and finished ones.
  if (typeof s['nodeName'] !== 'string' || s['nodeName'] === '') return 0;
  if (status['phase'] === 'Succeeded' || status['phase'] === 'Failed') return 0;
  // kube's BeforeDelete reads a negative request as 1 s.
  if (requested !== undefined) return requested < 0 ? 1 : requested;
  const configured = s['terminationGracePeriodSeconds'];
  return typeof configured === 'number' && configured >= 0 ? configured : 30;
}

/** A Namespace whose last finalizer an update removed goes only once `spec.finalizers` is empty. */
export function namespaceCanDeleteOnUpdate(obj: KubeObject): boolean {
  const s = obj['spec'];
  return !isJsonObject(s) || !Array.isArray(s['finalizers']) || s['finalizers'].length === 0;
}
