/**
 * The pod worker's side of volumes: one call per sync that sets up the pod's volumes, reports
 * each failure as kubelet's `FailedMount` event (`MountVolume.SetUp failed for volume "x" :
 * ...`), and says whether the containers may start. Until they may, the pod's containers stay
 * waiting with reason ContainerCreating and the sync is retried (1 s doubling to 32 s; a change
 * to a watched ConfigMap or Secret retries at once).
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { EventSink } from '../pod/events.js';
import type { VolumeManager } from './manager.js';
import type { MountedVolume } from './mounts.js';

/** Where a pod's volumes are, kept on the worker's record for its containers' mounts. */
export interface VolumeHolder {
  pod: Pod;
  volumes?: ReadonlyMap<string, MountedVolume>;
  /** Failed set-up rounds in a row (for the retry delay). */
  volumeFailures?: number;
}

const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 32_000;

/**
 * Sets up the volumes of `record.pod`; answers undefined when the containers may start, else
 * the delay before the next try.
 */
export async function mountPodVolumes(
  manager: VolumeManager,
  events: EventSink,
  record: VolumeHolder,
): Promise<number | undefined> {
  const result = await manager.setUp(record.pod);
  for (const err of result.errors) events.event(record.pod, 'Warning', 'FailedMount', err.message);
  record.volumes = result.volumes;
  if (result.complete) {
    record.volumeFailures = 0;
    return undefined;
  }
  const n = record.volumeFailures ?? 0;
  record.volumeFailures = n + 1;
  return Math.min(RETRY_BASE_MS * 2 ** n, RETRY_MAX_MS);
}
