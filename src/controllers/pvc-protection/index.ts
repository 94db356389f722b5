/**
 * The `persistentvolumeclaim-protection-controller` (alias `pvc-protection`), as kube's
 * `pkg/controller/volume/pvcprotection`: a claim keeps the `kubernetes.io/pvc-protection`
 * finalizer while a pod that is not terminated mounts it (directly or as a generic ephemeral
 * volume); once deleted and unused, the finalizer is removed. "Unused" is checked in the cache,
 * then confirmed by a live list of the namespace's pods (as kube does), so a pod the cache has not
 * seen yet cannot lose its volume. A live claim missing the finalizer gets it.
 */
import type { PersistentVolumeClaim, Pod } from '../../api/types/core-v1.js';
import {
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  WorkQueue,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { PVC_PROTECTION_FINALIZER } from '../persistentvolume/annotations.js';
import { podClaimKeys } from '../pods/claims.js';
import { keyOf, splitKey } from '../shared/meta.js';
import { startWorkers } from '../shared/workers.js';

const INDEX = 'pvc-protection/claims';

/** True when the pod holds the claim `key` (`namespace/name`): it mounts it and has not terminated. */
export function podUsesClaim(pod: Pod, key: string): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  return podClaimKeys(pod).includes(key);
}

function deleting(pvc: PersistentVolumeClaim): boolean {
  return pvc.metadata.deletionTimestamp !== undefined && pvc.metadata.deletionTimestamp !== null;
}

function start(ctx: ControllerContext): void {
  const queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
  const claims = ctx.informers.informer<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
  const pods = ctx.informers.informer<Pod>(PODS);
  pods.store.addIndex(INDEX, podClaimKeys);
  const claimClient = ctx.client.resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
  const podClient = ctx.client.resource<Pod>(PODS);
  const enqueue = (pvc: PersistentVolumeClaim): void => {
    const has = (pvc.metadata.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER);
    if (deleting(pvc) ? has : !has) queue.add(keyOf(pvc.metadata));
  };
  claims.addHandler({ add: enqueue, update: (_, pvc) => enqueue(pvc) });
  // A pod that ends or goes may release its claims.
  const podChanged = (pod: Pod): void => {
    for (const key of podClaimKeys(pod)) {
      const pvc = claims.store.get(key);
      if (pvc !== undefined && deleting(pvc)) queue.add(key);
    }
  };
  pods.addHandler({ update: (_, p) => podChanged(p), delete: podChanged });

  const inUse = async (key: string): Promise<boolean> => {
    if (pods.store.byIndex(INDEX, key).some((p) => podUsesClaim(p, key))) return true;
    const { namespace } = splitKey(key);
    const live = await podClient.list({ namespace });
    return live.items.some((p) => podUsesClaim(p, key));
  };
  const sync = async (key: string): Promise<void> => {
    const pvc = claims.store.get(key);
    if (pvc === undefined) return;
    const current = pvc.metadata.finalizers ?? [];
    const has = current.includes(PVC_PROTECTION_FINALIZER);
    let finalizers: string[];
    if (!deleting(pvc)) {
      if (has) return;
      finalizers = [...current, PVC_PROTECTION_FINALIZER];
    } else {
      if (!has || (await inUse(key))) return;
      finalizers = current.filter((f) => f !== PVC_PROTECTION_FINALIZER);
    }
    try {
      await claimClient.update({ ...pvc, metadata: { ...pvc.metadata, finalizers } });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  };
  startWorkers(ctx, 'pvc-protection', { queue, workers: 1, sync });
}

/** Registry entry. */
export const pvcProtectionController: ControllerDescriptor = {
  name: 'persistentvolumeclaim-protection-controller',
  aliases: ['pvc-protection'],
  serviceAccount: 'pvc-protection-controller',
  start,
};
