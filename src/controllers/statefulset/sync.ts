/**
 * One reconcile of one StatefulSet's pods, as kube v1.33's `StatefulSetControl.UpdateStatefulSet`:
 *
 * 1. Every ordinal in `[start, start+replicas)` gets a pod (claims first); a Failed or Succeeded
 *    pod is deleted and made again. With `OrderedReady` the walk stops at the first pod that is
 *    not yet created, terminating, or not running-and-ready (and available for minReadySeconds);
 *    `Parallel` goes on.
 * 2. Pods outside the range are deleted, highest ordinal first (one at a time, after every
 *    replica is healthy, with OrderedReady); with `whenScaled: Delete` their claims get the pod as
 *    owner first, so the garbage collector removes them with it.
 * 3. `RollingUpdate`: from the highest ordinal down to `start + partition`, pods not at the
 *    update revision are deleted (they come back at it in a later sync): one at a time, waiting
 *    for health, or up to `maxUnavailable` unavailable at once. `OnDelete` only replaces pods
 *    users delete.
 *
 * Returns the status the pods show after what this sync did.
 */
import type { StatefulSetStatus } from '../../api/types/apps-v1.js';
import type { Pod, PodTemplateSpec } from '../../api/types/core-v1.js';
import { isPodAvailable, isPodReady } from '../shared/pods.js';
import { isPodTerminal } from '../workload/pod.js';
import {
  claimsFor,
  endOrdinal,
  identityMatches,
  newPod,
  ordinalOf,
  podName,
  podRevision,
  startOrdinal,
  applyIdentity,
  type TypedStatefulSet,
} from './identity.js';

/** What a sync does to the world; the controller implements it over the client. */
export interface StatefulSetActions {
  now(): Date;
  /** Creates the pod's missing claims, then the pod. */
  createPod(set: TypedStatefulSet, pod: Pod, claims: ReturnType<typeof claimsFor>): Promise<void>;
  deletePod(set: TypedStatefulSet, pod: Pod): Promise<void>;
  /** Writes a pod whose identity labels drifted. */
  updatePod(set: TypedStatefulSet, pod: Pod): Promise<void>;
  /** Makes a condemned pod the owner of its claims (whenScaled: Delete). */
  ownClaimsByPod(set: TypedStatefulSet, pod: Pod, ordinal: number): Promise<void>;
  event(set: TypedStatefulSet, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** The revisions a sync works with. */
export interface Revisions {
  readonly current: string;
  readonly update: string;
  /**
   * The pod template of the current revision (its ControllerRevision's), for pods made at that
   * revision; absent when it is the update revision, whose template is the set's own.
   */
  readonly currentTemplate?: PodTemplateSpec;
}

function isCreated(pod: Pod): boolean {
  return pod.metadata.uid !== undefined;
}

function isTerminating(pod: Pod): boolean {
  return pod.metadata.deletionTimestamp !== undefined;
}

function runningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

/** Computes the status of `pods` (kube's counting pass). */
export function countStatus(
  set: TypedStatefulSet,
  pods: readonly Pod[],
  rev: Revisions,
  nowMs: number,
): StatefulSetStatus {
  const minReady = set.spec?.minReadySeconds ?? 0;
  const s = { replicas: 0, readyReplicas: 0, availableReplicas: 0, currentReplicas: 0, updatedReplicas: 0 };
  for (const p of pods) {
    if (isCreated(p)) s.replicas++;
    if (runningAndReady(p)) {
      s.readyReplicas++;
      if (isPodAvailable(p, minReady, nowMs)) s.availableReplicas++;
    }
    if (isCreated(p) && !isTerminating(p)) {
      if (podRevision(p) === rev.current) s.currentReplicas++;
      if (podRevision(p) === rev.update) s.updatedReplicas++;
    }
  }
  return s;
}

/** Reconciles the set's pods; returns the status counters after this sync's actions. */
export async function syncStatefulSetPods(
  set: TypedStatefulSet,
  pods: readonly Pod[],
  rev: Revisions,
  act: StatefulSetActions,
): Promise<StatefulSetStatus> {
  const now = act.now().getTime();
  const minReady = set.spec?.minReadySeconds ?? 0;
  const healthy = (p: Pod): boolean =>
    isCreated(p) && !isTerminating(p) && runningAndReady(p) && isPodAvailable(p, minReady, now);
  const status = countStatus(set, pods, rev, now);
  const start = startOrdinal(set);
  const end = endOrdinal(set);
  const monotonic = set.spec?.podManagementPolicy !== 'Parallel';
  const partition = set.spec?.updateStrategy?.rollingUpdate?.partition ?? 0;
  const replicas = new Map<number, Pod>();
  const condemned: { ordinal: number; pod: Pod }[] = [];
  for (const p of pods) {
    const ord = ordinalOf(set, p);
    if (ord === undefined) continue;
    if (ord >= start && ord < end && !replicas.has(ord)) replicas.set(ord, p);
    else condemned.push({ ordinal: ord, pod: p });
  }
  condemned.sort((a, b) => b.ordinal - a.ordinal);
  // kube's newVersionedStatefulSetPod: below the partition (or the current count), the current revision.
  const revisionFor = (ord: number): string => {
    const rolling = (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    const limit =
      set.spec?.updateStrategy?.rollingUpdate === undefined
        ? start + (set.status?.currentReplicas ?? 0)
        : start + partition;
    return rolling && ord < limit ? rev.current : rev.update;
  };
  const setName = set.metadata.name ?? '';

  let firstUnhealthy: Pod | undefined;
  for (let ord = start; ord < end; ord++) {
    let pod = replicas.get(ord);
    if (pod !== undefined && isPodTerminal(pod) && !isTerminating(pod)) {
      const failed = pod.status?.phase === 'Failed';
      act.event(
        set,
        'Warning',
        failed ? 'RecreatingFailedPod' : 'RecreatingTerminatedPod',
        `StatefulSet ${set.metadata.namespace ?? ''}/${setName} is recreating ${failed ? 'failed' : 'terminated'} Pod ${pod.metadata.name ?? ''}`,
      );
      await act.deletePod(set, pod);
      if (podRevision(pod) === rev.current) status.currentReplicas = (status.currentReplicas ?? 0) - 1;
      if (podRevision(pod) === rev.update) status.updatedReplicas = (status.updatedReplicas ?? 0) - 1;
      status.replicas = (status.replicas ?? 0) - 1;
      pod = undefined;
    }
    if (pod === undefined) {
      const revision = revisionFor(ord);
      const template =
        revision === rev.current ? (rev.currentTemplate ?? set.spec?.template) : set.spec?.template;
      const fresh = newPod(set, ord, revision, template);
      await act.createPod(set, fresh, claimsFor(set, ord));
      status.replicas = (status.replicas ?? 0) + 1;
      if (revision === rev.current) status.currentReplicas = (status.currentReplicas ?? 0) + 1;
      if (revision === rev.update) status.updatedReplicas = (status.updatedReplicas ?? 0) + 1;
      replicas.set(ord, fresh);
      if (monotonic) return status;
      continue;
    }
    if (!healthy(pod)) {
      firstUnhealthy ??= pod;
      if (monotonic) return status;
      continue;
    }
    if (!identityMatches(set, pod, ord)) {
      const fixed = structuredClone(pod);
      applyIdentity(set, fixed, ord);
      await act.updatePod(set, fixed);
    }
  }

  for (const { ordinal, pod } of condemned) {
    if (isTerminating(pod)) {
      if (monotonic) return status;
      continue;
    }
    if (monotonic && firstUnhealthy !== undefined) return status;
    if (set.spec?.persistentVolumeClaimRetentionPolicy?.whenScaled === 'Delete')
      await act.ownClaimsByPod(set, pod, ordinal);
    await act.deletePod(set, pod);
    if (podRevision(pod) === rev.current) status.currentReplicas = (status.currentReplicas ?? 0) - 1;
    if (podRevision(pod) === rev.update) status.updatedReplicas = (status.updatedReplicas ?? 0) - 1;
    if (monotonic) return status;
  }

  if ((set.spec?.updateStrategy?.type ?? 'RollingUpdate') !== 'RollingUpdate') return status;
  const updateMin = start + partition;
  const maxUnavailable = resolveMaxUnavailable(set);
  if (maxUnavailable === undefined) {
    for (let ord = end - 1; ord >= updateMin; ord--) {
      const pod = replicas.get(ord);
      if (pod === undefined) return status;
      if (podRevision(pod) !== rev.update && !isTerminating(pod)) {
        await act.deletePod(set, pod);
        if (podRevision(pod) === rev.current) status.currentReplicas = (status.currentReplicas ?? 0) - 1;
        return status;
      }
      if (!healthy(pod)) return status;
    }
    return status;
  }
  // maxUnavailable: delete outdated pods, highest first, while fewer than that are unavailable.
  let unavailable = 0;
  for (let ord = updateMin; ord < end; ord++) {
    const pod = replicas.get(ord);
    if (pod === undefined || !healthy(pod)) unavailable++;
  }
  for (let ord = end - 1; ord >= updateMin && unavailable < maxUnavailable; ord--) {
    const pod = replicas.get(ord);
    if (pod === undefined || isTerminating(pod) || podRevision(pod) === rev.update) continue;
    const wasHealthy = healthy(pod);
    await act.deletePod(set, pod);
    if (podRevision(pod) === rev.current) status.currentReplicas = (status.currentReplicas ?? 0) - 1;
    if (wasHealthy) unavailable++;
  }
  return status;
}

/** `rollingUpdate.maxUnavailable` as a count of the replicas (percent rounded down, at least 1). */
export function resolveMaxUnavailable(set: TypedStatefulSet): number | undefined {
  const v = set.spec?.updateStrategy?.rollingUpdate?.maxUnavailable;
  if (v === undefined) return undefined;
  const replicas = set.spec?.replicas ?? 1;
  const n = typeof v === 'number' ? v : Math.floor((replicas * Number.parseInt(v, 10)) / 100);
  return Math.max(1, Number.isFinite(n) ? n : 1);
}

/** The pod name of an ordinal (re-exported for the controller's events). */
export { podName };
