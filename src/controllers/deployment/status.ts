/**
 * Deployment status and conditions, as kube's: the counts over its ReplicaSets, the Available
 * condition (MinimumReplicasAvailable / MinimumReplicasUnavailable), the Progressing condition
 * (NewReplicaSetCreated, FoundNewReplicaSet, ReplicaSetUpdated, NewReplicaSetAvailable,
 * ProgressDeadlineExceeded, DeploymentPaused, DeploymentResumed, FailedRSCreate) and
 * ReplicaFailure copied from a failing ReplicaSet.
 */
import type {
  Deployment,
  DeploymentCondition,
  DeploymentStatus,
  ReplicaSet,
} from '../../api/types/apps-v1.js';
import { rfc3339 } from '../shared/meta.js';
import {
  actualReplicas,
  availableReplicas,
  deploymentComplete,
  desired,
  maxUnavailable,
  readyReplicas,
  specReplicas,
} from './replicas.js';

/** kube's condition reasons. */
export const REASONS = {
  newRSCreated: 'NewReplicaSetCreated',
  foundNewRS: 'FoundNewReplicaSet',
  rsUpdated: 'ReplicaSetUpdated',
  newRSAvailable: 'NewReplicaSetAvailable',
  timedOut: 'ProgressDeadlineExceeded',
  paused: 'DeploymentPaused',
  resumed: 'DeploymentResumed',
  failedRSCreate: 'FailedRSCreate',
  minimumAvailable: 'MinimumReplicasAvailable',
  minimumUnavailable: 'MinimumReplicasUnavailable',
} as const;

/** A new condition stamped `nowMs`. */
export function newCondition(
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason: string,
  message: string,
  nowMs: number,
): DeploymentCondition {
  const t = rfc3339(nowMs);
  return { type, status, lastUpdateTime: t, lastTransitionTime: t, reason, message };
}

/** The condition of `type`, if any. */
export function conditionOf(
  status: DeploymentStatus | undefined,
  type: string,
): DeploymentCondition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * Sets `cond` in place (kube's `SetDeploymentCondition`): nothing when the same status and
 * reason are already there; the transition time kept when only the reason changes.
 */
export function setCondition(status: DeploymentStatus, cond: DeploymentCondition): void {
  const current = conditionOf(status, cond.type ?? '');
  if (current !== undefined && current.status === cond.status && current.reason === cond.reason) return;
  const next = { ...cond };
  if (current !== undefined && current.status === cond.status && current.lastTransitionTime !== undefined) {
    next.lastTransitionTime = current.lastTransitionTime;
  }
  status.conditions = [...(status.conditions ?? []).filter((c) => c.type !== cond.type), next];
}

/** Removes the condition of `type`, in place. */
export function removeCondition(status: DeploymentStatus, type: string): void {
  if (status.conditions === undefined) return;
  status.conditions = status.conditions.filter((c) => c.type !== type);
  if (status.conditions.length === 0) delete status.conditions;
}

/** `progressDeadlineSeconds` is set and not the "never" value (MaxInt32). */
export function hasProgressDeadline(d: Deployment): boolean {
  const s = d.spec?.progressDeadlineSeconds;
  return s !== undefined && s !== 2147483647;
}

/** The counts and the Available condition (kube's `calculateStatus`). */
export function calculateStatus(
  all: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
  nowMs: number,
): DeploymentStatus {
  const available = availableReplicas(all);
  const status: DeploymentStatus = {
    observedGeneration: d.metadata.generation ?? 0,
    replicas: actualReplicas(all),
    updatedReplicas: actualReplicas([newRS]),
    readyReplicas: readyReplicas(all),
    availableReplicas: available,
    unavailableReplicas: Math.max(0, specReplicas(all) - available),
  };
  if (d.status?.collisionCount !== undefined) status.collisionCount = d.status.collisionCount;
  if (d.status?.conditions !== undefined) status.conditions = d.status.conditions.map((c) => ({ ...c }));
  if (available >= desired(d) - maxUnavailable(d)) {
    setCondition(
      status,
      newCondition(
        'Available',
        'True',
        REASONS.minimumAvailable,
        'Deployment has minimum availability.',
        nowMs,
      ),
    );
  } else {
    setCondition(
      status,
      newCondition(
        'Available',
        'False',
        REASONS.minimumUnavailable,
        'Deployment does not have minimum availability.',
        nowMs,
      ),
    );
  }
  return status;
}

/** Some progress since the stored status (kube's `DeploymentProgressing`). */
export function progressing(d: Deployment, next: DeploymentStatus): boolean {
  const old = d.status ?? {};
  const oldOld = (old.replicas ?? 0) - (old.updatedReplicas ?? 0);
  const newOld = (next.replicas ?? 0) - (next.updatedReplicas ?? 0);
  return (
    (next.updatedReplicas ?? 0) > (old.updatedReplicas ?? 0) ||
    newOld < oldOld ||
    (next.readyReplicas ?? 0) > (old.readyReplicas ?? 0) ||
    (next.availableReplicas ?? 0) > (old.availableReplicas ?? 0)
  );
}

/** The Progressing condition is older than the deadline (kube's `DeploymentTimedOut`). */
export function timedOut(d: Deployment, next: DeploymentStatus, nowMs: number): boolean {
  if (!hasProgressDeadline(d)) return false;
  const c = conditionOf(next, 'Progressing');
  if (c === undefined || c.reason === REASONS.newRSAvailable) return false;
  if (c.reason === REASONS.timedOut) return true;
  const from = Date.parse(c.lastUpdateTime ?? '');
  return Number.isFinite(from) && from + (d.spec?.progressDeadlineSeconds ?? 0) * 1000 < nowMs;
}

/**
 * The Progressing and ReplicaFailure conditions of a sync that rolled out (kube's
 * `syncRolloutStatus`, before the write).
 */
export function rolloutStatus(
  all: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
  d: Deployment,
  nowMs: number,
): DeploymentStatus {
  const status = calculateStatus(all, newRS, d, nowMs);
  if (!hasProgressDeadline(d)) removeCondition(status, 'Progressing');
  const current = conditionOf(d.status, 'Progressing');
  const complete = status.replicas === status.updatedReplicas && current?.reason === REASONS.newRSAvailable;
  if (hasProgressDeadline(d) && !complete) {
    const what =
      newRS === undefined
        ? `Deployment "${d.metadata.name ?? ''}"`
        : `ReplicaSet "${newRS.metadata.name ?? ''}"`;
    if (deploymentComplete(d, status)) {
      setCondition(
        status,
        newCondition(
          'Progressing',
          'True',
          REASONS.newRSAvailable,
          `${what} has successfully progressed.`,
          nowMs,
        ),
      );
    } else if (progressing(d, status)) {
      const cond = newCondition('Progressing', 'True', REASONS.rsUpdated, `${what} is progressing.`, nowMs);
      if (current !== undefined) {
        if (current.status === 'True' && current.lastTransitionTime !== undefined) {
          cond.lastTransitionTime = current.lastTransitionTime;
        }
        removeCondition(status, 'Progressing');
      }
      setCondition(status, cond);
    } else if (timedOut(d, status, nowMs)) {
      setCondition(
        status,
        newCondition('Progressing', 'False', REASONS.timedOut, `${what} has timed out progressing.`, nowMs),
      );
    }
  }
  const failure = replicaFailure(all, newRS);
  if (failure !== undefined) setCondition(status, failure);
  else removeCondition(status, 'ReplicaFailure');
  return status;
}

/** The first ReplicaFailure of the new ReplicaSet, else of an old one, as a Deployment condition. */
function replicaFailure(
  all: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet | undefined,
): DeploymentCondition | undefined {
  const ordered = newRS === undefined ? all : [newRS, ...all.filter((rs) => rs !== newRS)];
  for (const rs of ordered) {
    const c = rs?.status?.conditions?.find((x) => x.type === 'ReplicaFailure');
    if (c === undefined) continue;
    const cond: DeploymentCondition = { type: 'ReplicaFailure', status: c.status ?? 'True' };
    if (c.lastTransitionTime !== undefined) {
      cond.lastUpdateTime = c.lastTransitionTime;
      cond.lastTransitionTime = c.lastTransitionTime;
    }
    if (c.reason !== undefined) cond.reason = c.reason;
    if (c.message !== undefined) cond.message = c.message;
    return cond;
  }
  return undefined;
}

/** Equal as stored (zero counts omitted). */
export function sameDeploymentStatus(a: DeploymentStatus | undefined, b: DeploymentStatus): boolean {
  const norm = (s: DeploymentStatus | undefined): string =>
    JSON.stringify({
      o: s?.observedGeneration ?? 0,
      r: s?.replicas ?? 0,
      u: s?.updatedReplicas ?? 0,
      rd: s?.readyReplicas ?? 0,
      a: s?.availableReplicas ?? 0,
      un: s?.unavailableReplicas ?? 0,
      cc: s?.collisionCount,
      c: s?.conditions ?? [],
    });
  return norm(a) === norm(b);
}
