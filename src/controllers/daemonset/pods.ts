/**
 * A DaemonSet's pods and revisions as kube's daemon controller makes them: the pod for a node
 * (template, automatic tolerations, `controller-revision-hash` and `pod-template-generation`
 * labels, node affinity pinned to the node), whether a pod is at the current template, and the
 * DaemonSet flavour of ControllerRevision (name `<ds>-<hash of the template>`, label
 * `controller-revision-hash`).
 */
import type { ControllerRevision, DaemonSet } from '../../api/types/apps-v1.js';
import type { Pod } from '../../api/types/core-v1.js';
import type { OwnerReference } from '../../api/types/meta-v1.js';
import { hashRevision, POD_REVISION_LABEL, revisionName, templatePatch } from '../history/revisions.js';
import { podFromTemplate } from '../shared/pod-template.js';
import { daemonTolerations, pinToNode } from './placement.js';

/** The deprecated generation label kube still writes on daemon pods. */
export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';

/** kube's `controller.ComputeHash` of the DaemonSet template with its collision count. */
export function templateHash(ds: DaemonSet, collisionCount: number): string {
  return hashRevision(ds.spec?.template ?? {}, collisionCount);
}

/** The DaemonSet's revision object for its current template. */
export function daemonRevision(
  ds: DaemonSet,
  ref: OwnerReference,
  revision: number,
  collisionCount: number,
): ControllerRevision {
  const hash = templateHash(ds, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(ds.metadata.name ?? '', hash),
      namespace: ds.metadata.namespace ?? '',
      labels: { ...(ds.spec?.template?.metadata.labels ?? {}), [POD_REVISION_LABEL]: hash },
      ...(ds.metadata.annotations === undefined ? {} : { annotations: { ...ds.metadata.annotations } }),
      ownerReferences: [ref],
    },
    data: templatePatch(ds.spec?.template),
    revision,
  };
}

/** The pod to create for `nodeName`. */
export function podForNode(ds: DaemonSet, ref: OwnerReference, nodeName: string, hash: string): Pod {
  const pod = podFromTemplate(ds.spec?.template, ds.metadata.namespace ?? '', ds.metadata.name ?? '', ref);
  pod.metadata.labels = {
    ...(pod.metadata.labels ?? {}),
    [POD_REVISION_LABEL]: hash,
    [TEMPLATE_GENERATION_LABEL]: String(ds.metadata.generation ?? 0),
  };
  const spec = pod.spec ?? { containers: [] };
  spec.tolerations = daemonTolerations(spec);
  spec.affinity = pinToNode(spec.affinity, nodeName);
  pod.spec = spec;
  return pod;
}

/** kube's `IsPodUpdated`: the revision hash matches, or the template generation does. */
export function isPodUpdated(pod: Pod, hash: string, generation: number | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  const generationMatches =
    generation !== undefined && labels[TEMPLATE_GENERATION_LABEL] === String(generation);
  return (hash !== '' && labels[POD_REVISION_LABEL] === hash) || generationMatches;
}

/**
 * kube's `findUpdatedPodsOnNode`: the one updated and the one old pod on a node (pods being
 * deleted ignored); `ok` false when there are two of either.
 */
export function updatedPodsOnNode(
  pods: readonly Pod[],
  hash: string,
  generation: number | undefined,
): { newPod: Pod | undefined; oldPod: Pod | undefined; ok: boolean } {
  let newPod: Pod | undefined;
  let oldPod: Pod | undefined;
  for (const p of pods) {
    if (p.metadata.deletionTimestamp !== undefined) continue;
    if (isPodUpdated(p, hash, generation)) {
      if (newPod !== undefined) return { newPod, oldPod, ok: false };
      newPod = p;
    } else {
      if (oldPod !== undefined) return { newPod, oldPod, ok: false };
      oldPod = p;
    }
  }
  return { newPod, oldPod, ok: true };
}

/** Oldest first, then by phase (kube's `podByCreationTimestampAndPhase`: running before pending). */
export function byCreationAndPhase(a: Pod, b: Pod): number {
  const ta = Date.parse(a.metadata.creationTimestamp ?? '') || 0;
  const tb = Date.parse(b.metadata.creationTimestamp ?? '') || 0;
  if (ta !== tb) return ta - tb;
  const ra = a.spec?.nodeName ? 0 : 1;
  const rb = b.spec?.nodeName ? 0 : 1;
  if (ra !== rb) return ra - rb;
  return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
}
