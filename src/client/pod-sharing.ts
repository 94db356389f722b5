/**
 * An informer transform for components that hold many pods (the controller manager, the
 * simulated nodes): managedFields dropped from every object (as kube-controller-manager's shared
 * informers do), and the parts that the pods of one workload repeat held once (share.ts). Pods
 * are most of what such a component holds (10,000 replicas are 10,000 cached pods), and a
 * ReplicaSet's pods differ only in their names, uids, node names and statuses. Unlike the
 * scheduler's trim, this transform drops no field: controllers write pods back from their cached
 * copies (the StatefulSet controller's PUT), so every field is kept, and only equal parts are
 * shared. Users copy a cached pod before changing it (shared parts are frozen).
 */
import type { Pod } from '../api/types/core-v1.js';
import type { TypedObject } from './client.js';
import { stripManagedFields } from './informer.js';
import { shareField, shareString, ValueSharer } from './share.js';

const SHARED_META = ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const;
const SHARED_META_STRINGS = ['namespace', 'generateName', 'creationTimestamp'] as const;
const SHARED_STATUS = ['hostIPs'] as const;
const SHARED_STATUS_STRINGS = ['phase', 'qosClass', 'hostIP', 'startTime'] as const;

/** `pod` (already a private copy: the transform's input) with its repeated parts shared. */
export function sharePodParts(pod: Pod, sharer: ValueSharer): Pod {
  const meta = pod.metadata;
  for (const k of SHARED_META) shareField(meta, k, sharer);
  for (const k of SHARED_META_STRINGS) shareString(meta, k, sharer);
  // Every part of a pod's spec is repeated by its workload's other pods.
  if (pod.spec !== undefined) sharer.shareParts(pod.spec);
  const status = pod.status;
  if (status !== undefined) {
    for (const k of SHARED_STATUS) shareField(status, k, sharer);
    for (const k of SHARED_STATUS_STRINGS) shareString(status, k, sharer);
  }
  return pod;
}

/** The transform (see the module comment); one sharer for all the informers of a factory. */
export function podSharingTransform(): (obj: TypedObject) => TypedObject {
  const sharer = new ValueSharer();
  return (obj) => {
    const stripped = stripManagedFields(obj);
    if (obj.kind !== 'Pod' || obj.apiVersion !== 'v1' || stripped.metadata === undefined) return stripped;
    // stripManagedFields copies the object and its metadata only when it had managedFields; the
    // parts changed here are the informer's own (decoded for it), never another holder's.
    return sharePodParts(stripped as unknown as Pod, sharer);
  };
}
