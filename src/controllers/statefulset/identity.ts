/**
 * A StatefulSet pod's stable identity and storage, as kube's `stateful_set_utils.go`: the name
 * `<set>-<ordinal>`, the labels `statefulset.kubernetes.io/pod-name`,
 * `apps.kubernetes.io/pod-index` and `controller-revision-hash`, hostname and subdomain, one
 * PersistentVolumeClaim per volumeClaimTemplate named `<claim>-<set>-<ordinal>` with the owner
 * references the retention policy asks for.
 */
import type { StatefulSet } from '../../api/types/apps-v1.js';
import type { PersistentVolumeClaim, Pod, PodTemplateSpec, Volume } from '../../api/types/core-v1.js';
import type { OwnerReference } from '../../api/types/meta-v1.js';
import { POD_REVISION_LABEL } from '../history/revisions.js';
import { newControllerRef } from '../shared/controller-ref.js';
import { podFromTemplate } from '../shared/pod-template.js';

/** The pod-name label. */
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** The pod-index label (PodIndexLabel, GA in 1.32). */
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** A StatefulSet with its kind filled in. */
export type TypedStatefulSet = StatefulSet & { apiVersion: string; kind: string };

/** `spec.ordinals.start` (0 by default). */
export function startOrdinal(set: StatefulSet): number {
  return set.spec?.ordinals?.start ?? 0;
}

/** One past the last ordinal the set wants. */
export function endOrdinal(set: StatefulSet): number {
  return startOrdinal(set) + (set.spec?.replicas ?? 1);
}

/** `<set>-<ordinal>`. */
export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata.name ?? ''}-${ordinal}`;
}

/** The ordinal of a pod named `<set>-<n>`, or undefined for a pod not of this set's pattern. */
export function ordinalOf(set: StatefulSet, pod: Pod): number | undefined {
  const name = pod.metadata.name ?? '';
  const prefix = `${set.metadata.name ?? ''}-`;
  if (!name.startsWith(prefix)) return undefined;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

/** `<claim>-<set>-<ordinal>`. */
export function claimName(set: StatefulSet, claim: PersistentVolumeClaim, ordinal: number): string {
  return `${claim.metadata.name ?? ''}-${set.metadata.name ?? ''}-${ordinal}`;
}

/** The pod's identity (name, labels, hostname, subdomain) is the one of its ordinal. */
export function identityMatches(set: StatefulSet, pod: Pod, ordinal: number): boolean {
  const name = podName(set, ordinal);
  return (
    pod.metadata.name === name &&
    pod.metadata.namespace === set.metadata.namespace &&
    pod.metadata.labels?.[POD_NAME_LABEL] === name &&
    pod.metadata.labels[POD_INDEX_LABEL] === String(ordinal)
  );
}

/** Sets the identity labels of `pod` (kube's `updateIdentity`). */
export function applyIdentity(set: StatefulSet, pod: Pod, ordinal: number): void {
  const name = podName(set, ordinal);
  pod.metadata.name = name;
  pod.metadata.namespace = set.metadata.namespace ?? '';
  pod.metadata.labels = {
    ...(pod.metadata.labels ?? {}),
    [POD_NAME_LABEL]: name,
    [POD_INDEX_LABEL]: String(ordinal),
  };
}

/**
 * The set's pod for `ordinal` made from `template` (the set's own, or an older revision's), labelled
 * with that `revision` (kube's `newVersionedStatefulSetPod`).
 */
export function newPod(
  set: TypedStatefulSet,
  ordinal: number,
  revision: string,
  template: PodTemplateSpec | undefined = set.spec?.template,
): Pod {
  const pod = podFromTemplate(
    template,
    set.metadata.namespace ?? '',
    set.metadata.name ?? '',
    newControllerRef(set),
  );
  delete pod.metadata.generateName;
  applyIdentity(set, pod, ordinal);
  pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [POD_REVISION_LABEL]: revision };
  const spec = pod.spec ?? { containers: [] };
  spec.hostname = podName(set, ordinal);
  const service = set.spec?.serviceName ?? '';
  if (service !== '') spec.subdomain = service;
  // Each claim template becomes the pod's volume of that name, pointing at the ordinal's claim.
  const claims = set.spec?.volumeClaimTemplates ?? [];
  if (claims.length > 0) {
    const byName = new Map<string, Volume>();
    for (const v of spec.volumes ?? []) byName.set(v.name ?? '', v);
    for (const c of claims)
      byName.set(c.metadata.name ?? '', {
        name: c.metadata.name ?? '',
        persistentVolumeClaim: { claimName: claimName(set, c, ordinal) },
      });
    spec.volumes = [...byName.values()];
  }
  pod.spec = spec;
  return pod;
}

/** The pod's revision label. */
export function podRevision(pod: Pod): string | undefined {
  return pod.metadata.labels?.[POD_REVISION_LABEL];
}

/**
 * The claims of `ordinal`: template labels plus the set's matchLabels, and owner references
 * from `persistentVolumeClaimRetentionPolicy` (whenDeleted: Delete → the set; whenScaled:
 * Delete and condemned → the pod).
 */
export function claimsFor(set: TypedStatefulSet, ordinal: number): PersistentVolumeClaim[] {
  const deleteWithSet = set.spec?.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete';
  return (set.spec?.volumeClaimTemplates ?? []).map((t) => {
    const owners: OwnerReference[] = deleteWithSet ? [newControllerRef(set)] : [];
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName(set, t, ordinal),
        namespace: set.metadata.namespace ?? '',
        labels: { ...(t.metadata.labels ?? {}), ...(set.spec?.selector?.matchLabels ?? {}) },
        ...(t.metadata.annotations === undefined ? {} : { annotations: { ...t.metadata.annotations } }),
        ...(owners.length === 0 ? {} : { ownerReferences: owners }),
      },
      spec: structuredClone(t.spec ?? {}),
    };
  });
}

/** An owner reference from a claim to a condemned pod (whenScaled: Delete). */
export function podOwnerRef(pod: Pod): OwnerReference {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    name: pod.metadata.name ?? '',
    uid: pod.metadata.uid ?? '',
    controller: false,
    blockOwnerDeletion: true,
  };
}
