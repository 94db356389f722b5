/**
 * Replica arithmetic of Deployments, as kube's `deployment/util`: surge and unavailability
 * budgets, replica counts over ReplicaSets, and how far the new ReplicaSet may grow.
 */
import type { Deployment, ReplicaSet } from '../../api/types/apps-v1.js';
import { scaledValue } from '../shared/int-or-percent.js';

/** `spec.replicas` (1 when unset, as the API defaults it). */
export function desired(d: Deployment): number {
  return d.spec?.replicas ?? 1;
}

/** `spec.replicas` of a ReplicaSet (0 when absent: a ReplicaSet is never `undefined`-sized here). */
export function rsReplicas(rs: ReplicaSet | undefined): number {
  return rs?.spec?.replicas ?? 0;
}

/** A RollingUpdate Deployment (the default strategy). */
export function isRollingUpdate(d: Deployment): boolean {
  return (d.spec?.strategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
}

/**
 * maxSurge rounded up and maxUnavailable rounded down against `desired`; both 0 becomes 0 and 1
 * (kube's `ResolveFenceposts`: a rollout must be able to move).
 */
export function fenceposts(d: Deployment): { surge: number; unavailable: number } {
  const ru = d.spec?.strategy?.rollingUpdate;
  const n = desired(d);
  const surge = scaledValue(ru?.maxSurge ?? '25%', n, true);
  let unavailable = scaledValue(ru?.maxUnavailable ?? '25%', n, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** Pods allowed above `spec.replicas` (0 unless RollingUpdate). */
export function maxSurge(d: Deployment): number {
  return isRollingUpdate(d) ? fenceposts(d).surge : 0;
}

/** Pods allowed to be unavailable (0 unless RollingUpdate with replicas > 0; at most replicas). */
export function maxUnavailable(d: Deployment): number {
  const n = desired(d);
  if (!isRollingUpdate(d) || n === 0) return 0;
  return Math.min(fenceposts(d).unavailable, n);
}

/** Sum of `spec.replicas`. */
export function specReplicas(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + rsReplicas(rs), 0);
}

/** Sum of `status.replicas`. */
export function actualReplicas(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.replicas ?? 0), 0);
}

/** Sum of `status.readyReplicas`. */
export function readyReplicas(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.readyReplicas ?? 0), 0);
}

/** Sum of `status.availableReplicas`. */
export function availableReplicas(rss: readonly (ReplicaSet | undefined)[]): number {
  return rss.reduce((n, rs) => n + (rs?.status?.availableReplicas ?? 0), 0);
}

/** ReplicaSets with `spec.replicas > 0`. */
export function activeReplicaSets(rss: readonly (ReplicaSet | undefined)[]): ReplicaSet[] {
  return rss.filter((rs): rs is ReplicaSet => rs !== undefined && rsReplicas(rs) > 0);
}

/** The size the new ReplicaSet may scale to now (kube's `NewRSNewReplicas`). */
export function newRSNewReplicas(
  d: Deployment,
  all: readonly (ReplicaSet | undefined)[],
  newRS: ReplicaSet,
): number {
  if (!isRollingUpdate(d)) return desired(d);
  const maxTotal = desired(d) + fenceposts(d).surge;
  const current = specReplicas(all);
  if (current >= maxTotal) return rsReplicas(newRS);
  const up = Math.min(maxTotal - current, desired(d) - rsReplicas(newRS));
  return rsReplicas(newRS) + up;
}

/**
 * Every wanted pod of the new ReplicaSet exists and is available, and the old ones are gone
 * (kube's `DeploymentComplete`).
 */
export function deploymentComplete(
  d: Deployment,
  status: {
    updatedReplicas?: number;
    replicas?: number;
    availableReplicas?: number;
    observedGeneration?: number;
  },
): boolean {
  const n = desired(d);
  return (
    (status.updatedReplicas ?? 0) === n &&
    (status.replicas ?? 0) === n &&
    (status.availableReplicas ?? 0) === n &&
    (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 0)
  );
}
