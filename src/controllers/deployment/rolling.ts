/**
 * The RollingUpdate strategy, as kube's `rolling.go`: grow the new ReplicaSet within maxSurge,
 * shrink old ones while at least `replicas - maxUnavailable` pods stay available (unhealthy old
 * pods first), clean up once complete.
 */
import type { ReplicaSet } from '../../api/types/apps-v1.js';
import {
  activeReplicaSets,
  availableReplicas,
  deploymentComplete,
  desired,
  maxUnavailable,
  newRSNewReplicas,
  rsReplicas,
  specReplicas,
} from './replicas.js';
import type { DeploymentSync } from './rollout.js';

function byCreation(a: ReplicaSet, b: ReplicaSet): number {
  return (
    (Date.parse(a.metadata.creationTimestamp ?? '') || 0) -
    (Date.parse(b.metadata.creationTimestamp ?? '') || 0)
  );
}

/** One rolling sync. */
export async function rolloutRolling(sync: DeploymentSync): Promise<void> {
  const { newRS, oldRSs } = await sync.allReplicaSets(true);
  if (newRS === undefined) throw new Error('rolling update without a new ReplicaSet');
  let all: ReplicaSet[] = [...oldRSs, newRS];
  if (await reconcileNew(sync, all, newRS)) {
    await sync.syncRolloutStatus(currentSets(sync, all), current(sync, newRS));
    return;
  }
  all = currentSets(sync, all);
  const scaledDown = await reconcileOld(
    sync,
    all,
    activeReplicaSets(currentSets(sync, oldRSs)),
    current(sync, newRS),
  );
  if (scaledDown) {
    await sync.syncRolloutStatus(currentSets(sync, all), current(sync, newRS));
    return;
  }
  if (deploymentComplete(sync.d, sync.d.status ?? {})) await sync.cleanup(currentSets(sync, oldRSs));
  await sync.syncRolloutStatus(currentSets(sync, all), current(sync, newRS));
}

/** The latest written version of each ReplicaSet. */
function currentSets(sync: DeploymentSync, rss: readonly ReplicaSet[]): ReplicaSet[] {
  return rss.map((rs) => current(sync, rs));
}

function current(sync: DeploymentSync, rs: ReplicaSet): ReplicaSet {
  return sync.rsList.find((x) => x.metadata.uid === rs.metadata.uid) ?? rs;
}

async function reconcileNew(
  sync: DeploymentSync,
  all: readonly ReplicaSet[],
  newRS: ReplicaSet,
): Promise<boolean> {
  const want = desired(sync.d);
  if (rsReplicas(newRS) === want) return false;
  if (rsReplicas(newRS) > want) return (await sync.scaleTo(newRS, want)).scaled;
  return (await sync.scaleTo(newRS, newRSNewReplicas(sync.d, all, newRS))).scaled;
}

async function reconcileOld(
  sync: DeploymentSync,
  all: readonly ReplicaSet[],
  oldRSs: ReplicaSet[],
  newRS: ReplicaSet,
): Promise<boolean> {
  if (specReplicas(oldRSs) === 0) return false;
  const minAvailable = desired(sync.d) - maxUnavailable(sync.d);
  const newUnavailable = rsReplicas(newRS) - (newRS.status?.availableReplicas ?? 0);
  const maxScaledDown = specReplicas(all) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return false;
  const cleaned = await cleanupUnhealthy(sync, oldRSs, maxScaledDown);
  const scaled = await scaleDownOld(
    sync,
    [...currentSets(sync, oldRSs), current(sync, newRS)],
    currentSets(sync, oldRSs),
  );
  return cleaned + scaled > 0;
}

/** Removes old pods that are not available, up to `max` (they would block the rollout). */
async function cleanupUnhealthy(sync: DeploymentSync, oldRSs: ReplicaSet[], max: number): Promise<number> {
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreation)) {
    if (total >= max) break;
    const size = rsReplicas(rs);
    const available = rs.status?.availableReplicas ?? 0;
    if (size === 0 || size === available) continue;
    const down = Math.min(max - total, size - available);
    await sync.scaleTo(rs, size - down);
    total += down;
  }
  return total;
}

/** Scales old ReplicaSets down while more than `replicas - maxUnavailable` pods are available. */
async function scaleDownOld(
  sync: DeploymentSync,
  all: readonly ReplicaSet[],
  oldRSs: ReplicaSet[],
): Promise<number> {
  const minAvailable = desired(sync.d) - maxUnavailable(sync.d);
  const available = availableReplicas(all);
  if (available <= minAvailable) return 0;
  const budget = available - minAvailable;
  let total = 0;
  for (const rs of [...oldRSs].sort(byCreation)) {
    if (total >= budget) break;
    const size = rsReplicas(rs);
    if (size === 0) continue;
    const down = Math.min(size, budget - total);
    await sync.scaleTo(rs, size - down);
    total += down;
  }
  return total;
}
