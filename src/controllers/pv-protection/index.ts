/**
 * The `persistentvolume-protection-controller` (alias `pv-protection`), as kube's
 * `pkg/controller/volume/pvprotection`: a volume keeps the `kubernetes.io/pv-protection`
 * finalizer while it is Bound; once deleted and no longer Bound, the finalizer is removed and the
 * deletion completes. A live volume missing the finalizer gets it (volumes made before the
 * admission plugin was on).
 */
import type { PersistentVolume } from '../../api/types/core-v1.js';
import {
  PERSISTENT_VOLUMES,
  WorkQueue,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { PV_PROTECTION_FINALIZER } from '../persistentvolume/annotations.js';
import { startWorkers } from '../shared/workers.js';

/** What to do with a volume's finalizer: add it, remove it, or nothing. */
export function pvFinalizerAction(pv: PersistentVolume): 'add' | 'remove' | undefined {
  const has = (pv.metadata.finalizers ?? []).includes(PV_PROTECTION_FINALIZER);
  const deleting = pv.metadata.deletionTimestamp !== undefined && pv.metadata.deletionTimestamp !== null;
  if (!deleting) return has ? undefined : 'add';
  if (!has) return undefined;
  return pv.status?.phase === 'Bound' ? undefined : 'remove';
}

function start(ctx: ControllerContext): void {
  const queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
  const informer = ctx.informers.informer<PersistentVolume>(PERSISTENT_VOLUMES);
  const client = ctx.client.resource<PersistentVolume>(PERSISTENT_VOLUMES);
  const enqueue = (pv: PersistentVolume): void => {
    if (pvFinalizerAction(pv) !== undefined) queue.add(pv.metadata.name ?? '');
  };
  informer.addHandler({ add: enqueue, update: (_, pv) => enqueue(pv) });
  const sync = async (name: string): Promise<void> => {
    const pv = informer.store.get(name);
    if (pv === undefined) return;
    const action = pvFinalizerAction(pv);
    if (action === undefined) return;
    const current = pv.metadata.finalizers ?? [];
    const finalizers =
      action === 'add'
        ? [...current, PV_PROTECTION_FINALIZER]
        : current.filter((f) => f !== PV_PROTECTION_FINALIZER);
    try {
      await client.update({ ...pv, metadata: { ...pv.metadata, finalizers } });
    } catch (err) {
      // Gone, or changed since read: the informer brings the next state.
      if (isNotFound(err) || isConflict(err)) return;
      throw err;
    }
  };
  startWorkers(ctx, 'pv-protection', { queue, workers: 1, sync });
}

/** Registry entry. */
export const pvProtectionController: ControllerDescriptor = {
  name: 'persistentvolume-protection-controller',
  aliases: ['pv-protection'],
  serviceAccount: 'pv-protection-controller',
  start,
};
