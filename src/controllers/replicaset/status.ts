/**
 * The status a replicated object reports, as kube's `calculateStatus`: pod counts (replicas,
 * fullyLabeledReplicas, readyReplicas, availableReplicas) and the ReplicaFailure condition,
 * set while creating or deleting pods fails and removed when it succeeds again.
 */
import type { ReplicaSetCondition, ReplicaSetStatus } from '../../api/types/apps-v1.js';
import type { Pod } from '../../api/types/core-v1.js';
import { isPodAvailable, isPodReady } from '../shared/pods.js';
import type { ReplicatedObject } from './kind.js';
import { rfc3339 } from '../shared/meta.js';

/** A failed create or delete of this sync. */
export interface ManageFailure {
  readonly reason: 'FailedCreate' | 'FailedDelete';
  readonly message: string;
}

/** The new status of `obj` controlling `pods` (active pods only). */
export function calculateStatus(
  obj: ReplicatedObject,
  pods: readonly Pod[],
  failure: ManageFailure | undefined,
  nowMs: number,
): ReplicaSetStatus {
  const templateLabels = obj.spec?.template?.metadata?.labels ?? {};
  const minReadySeconds = obj.spec?.minReadySeconds ?? 0;
  let fullyLabeled = 0;
  let ready = 0;
  let available = 0;
  for (const p of pods) {
    const labels = p.metadata.labels ?? {};
    if (Object.entries(templateLabels).every(([k, v]) => labels[k] === v)) fullyLabeled++;
    if (isPodReady(p)) {
      ready++;
      if (isPodAvailable(p, minReadySeconds, nowMs)) available++;
    }
  }
  let conditions: ReplicaSetCondition[] = [...(obj.status?.conditions ?? [])];
  const existing = conditions.find((c) => c.type === 'ReplicaFailure');
  if (failure !== undefined && existing === undefined) {
    conditions.push({
      type: 'ReplicaFailure',
      status: 'True',
      lastTransitionTime: rfc3339(nowMs),
      reason: failure.reason,
      message: failure.message,
    });
  } else if (failure === undefined && existing !== undefined) {
    conditions = conditions.filter((c) => c.type !== 'ReplicaFailure');
  }
  const status: ReplicaSetStatus = {
    replicas: pods.length,
    fullyLabeledReplicas: fullyLabeled,
    readyReplicas: ready,
    availableReplicas: available,
    observedGeneration: obj.status?.observedGeneration ?? 0,
  };
  if (conditions.length > 0) status.conditions = conditions;
  return status;
}

/** Equal as the API stores them (zero counts are omitted there). */
export function sameStatus(a: ReplicaSetStatus | undefined, b: ReplicaSetStatus): boolean {
  const n = (v: number | undefined): number => v ?? 0;
  return (
    n(a?.replicas) === n(b.replicas) &&
    n(a?.fullyLabeledReplicas) === n(b.fullyLabeledReplicas) &&
    n(a?.readyReplicas) === n(b.readyReplicas) &&
    n(a?.availableReplicas) === n(b.availableReplicas) &&
    n(a?.observedGeneration) === n(b.observedGeneration) &&
    JSON.stringify(a?.conditions ?? []) === JSON.stringify(b.conditions ?? [])
  );
}
