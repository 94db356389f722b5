/**
 * What kube's CustomResourceDefinition storage does on the first DELETE of a CRD: add the
 * `customresourcecleanup.apiextensions.k8s.io` finalizer (so the CRD stays until its custom
 * objects are deleted, by src/apiextensions) and set the Terminating condition to
 * `InstanceDeletionPending`.
 */
import { isJsonObject, rfc3339Seconds, type KubeObject } from '../api/object.js';

/** kube's finalizer of CRDs whose custom objects are still to be deleted. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** Prepares a CRD that is about to be deleted (see the module comment). Mutates `crd`. */
export function prepareCrdForDelete(crd: KubeObject, now: Date): void {
  const finalizers = crd.metadata.finalizers ?? [];
  if (!finalizers.includes(CRD_CLEANUP_FINALIZER))
    crd.metadata.finalizers = [...finalizers, CRD_CLEANUP_FINALIZER];
  const status = isJsonObject(crd['status']) ? crd['status'] : {};
  const conditions = Array.isArray(status['conditions']) ? [...(status['conditions'] as unknown[])] : [];
  const at = conditions.findIndex((c) => isJsonObject(c) && c['type'] === 'Terminating');
  const old = at < 0 ? undefined : (conditions[at] as Record<string, unknown>);
  const cond = {
    type: 'Terminating',
    status: 'True',
    lastTransitionTime:
      old?.['status'] === 'True' && typeof old['lastTransitionTime'] === 'string'
        ? old['lastTransitionTime']
        : rfc3339Seconds(now),
    reason: 'InstanceDeletionPending',
    message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
  };
  if (at < 0) conditions.push(cond);
  else conditions[at] = cond;
  crd['status'] = { ...status, conditions };
}
