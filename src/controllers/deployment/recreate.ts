/**
 * The Recreate strategy, as kube's `recreate.go`: scale every old ReplicaSet to 0, wait until
 * none of their pods runs, then create or scale the new ReplicaSet to full size.
 */
import type { ReplicaSet } from '../../api/types/apps-v1.js';
import { activeReplicaSets, actualReplicas, deploymentComplete, desired } from './replicas.js';
import type { DeploymentSync } from './rollout.js';

/** One Recreate sync. */
export async function rolloutRecreate(sync: DeploymentSync): Promise<void> {
  let { newRS, oldRSs } = await sync.allReplicaSets(false);
  let all: (ReplicaSet | undefined)[] = [...oldRSs, newRS];
  let scaledDown = false;
  for (const rs of activeReplicaSets(oldRSs)) {
    await sync.scaleTo(rs, 0);
    scaledDown = true;
  }
  const latest = (rs: ReplicaSet | undefined): ReplicaSet | undefined =>
    rs === undefined ? undefined : (sync.rsList.find((x) => x.metadata.uid === rs.metadata.uid) ?? rs);
  if (scaledDown) {
    await sync.syncRolloutStatus(all.map(latest), latest(newRS));
    return;
  }
  if (oldPodsRunning(sync, newRS, oldRSs)) {
    await sync.syncRolloutStatus(all, newRS);
    return;
  }
  if (newRS === undefined) {
    ({ newRS, oldRSs } = await sync.allReplicaSets(true));
    all = [...oldRSs, newRS];
  }
  if (newRS !== undefined) await sync.scaleTo(newRS, desired(sync.d));
  if (deploymentComplete(sync.d, sync.d.status ?? {}))
    await sync.cleanup(oldRSs.map((rs) => latest(rs) ?? rs));
  await sync.syncRolloutStatus(all.map(latest), latest(newRS));
}

/** Old ReplicaSets still report pods, or a pod of theirs has not finished. */
function oldPodsRunning(
  sync: DeploymentSync,
  newRS: ReplicaSet | undefined,
  oldRSs: readonly ReplicaSet[],
): boolean {
  if (actualReplicas(oldRSs) > 0) return true;
  for (const [uid, pods] of sync.podsByRS) {
    if (newRS !== undefined && uid === newRS.metadata.uid) continue;
    if (pods.some((p) => p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded')) return true;
  }
  return false;
}
