/**
 * The pod worker's side of volumes: one call per sync that sets up the pod's volumes, reports
 * each failure as kubelet's `FailedMount` event (`MountVolume.SetUp failed for volume "x" :
 * ...`), and says whether the containers may start. Until they may, the pod's containers stay
 * waiting with reason ContainerCreating and the sync is retried (1 s doubling to 32 s; a change
 * to a watched ConfigMap or Secret retries at once). As kubelet's WaitForAttachAndMount gives up
 * after 2m3s, a pod whose volumes have failed that long also gets `Unable to attach or mount
 * volumes: unmounted volumes=[...], unattached volumes=[], failed to process volumes=[]: context
 * deadline exceeded`, once per such period.
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
  /** Since when (epoch ms) the volumes have been failing, for kubelet's 2m3s give-up event. */
  volumesFailingSince?: number;
}

const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 32_000;
/** kubelet's podAttachAndMountTimeout. */
export const ATTACH_AND_MOUNT_TIMEOUT_MS = 123_000;

/**
 * Sets up the volumes of `record.pod`; answers undefined when the containers may start, else
 * the delay before the next try.
 */
export async function mountPodVolumes(
  manager: VolumeManager,
  events: EventSink,
  record: VolumeHolder,
  now: () => number = Date.now,
): Promise<number | undefined> {
  const result = await manager.setUp(record.pod);
  for (const err of result.errors) events.event(record.pod, 'Warning', 'FailedMount', err.message);
  record.volumes = result.volumes;
  if (result.complete) {
    record.volumeFailures = 0;
    delete record.volumesFailingSince;
    return undefined;
  }
  const t = now();
  record.volumesFailingSince ??= t;
  if (t - record.volumesFailingSince >= ATTACH_AND_MOUNT_TIMEOUT_MS) {
    const unmounted = (record.pod.spec?.volumes ?? [])
      .map((v) => v.name ?? '')
      .filter((n) => !result.volumes.has(n))
      .sort();
    events.event(
      record.pod,
      'Warning',
      'FailedMount',
      `Unable to attach or mount volumes: unmounted volumes=[${unmounted.join(' ')}], unattached volumes=[], failed to process volumes=[]: context deadline exceeded`,
    );
    record.volumesFailingSince = t;
  }
  const n = record.volumeFailures ?? 0;
  record.volumeFailures = n + 1;
  return Math.min(RETRY_BASE_MS * 2 ** n, RETRY_MAX_MS);
}
