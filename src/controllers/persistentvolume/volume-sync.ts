/**
 * One volume's sync, as kube's `syncVolume`:
 * - no claimRef: Available; a claimRef with a name but no UID (pre-bound by the user): Available,
 *   the claim's sync binds it;
 * - its claim is gone (or was recreated with another UID): Released, then reclaimed by its
 *   policy: Retain keeps it; Delete leaves a provisioned volume to its provisioner and fails
 *   others (no in-tree deleter runs here: event VolumeFailedDelete); Recycle fails
 *   (VolumeFailedRecycle: kube removed the recyclers);
 * - its claim names it: Bound; its claim has no volumeName yet: the claim's sync finishes the
 *   bind; its claim is bound elsewhere: a provisioned volume with Delete is released, one the
 *   controller bound is freed, one the user pre-bound is left alone.
 */
import type { PersistentVolume } from '../../api/types/core-v1.js';
import {
  ANN_BOUND_BY_CONTROLLER,
  ANN_DYNAMICALLY_PROVISIONED,
  REASON,
  hasAnnotation,
} from './annotations.js';
import { unbindVolume } from './bind.js';
import type { BinderOps } from './ops.js';

/** Syncs one volume (current state from the cache). */
export async function syncVolume(ops: BinderOps, pv: PersistentVolume): Promise<void> {
  const ref = pv.spec?.claimRef;
  if (ref === undefined || (ref.uid ?? '') === '') {
    await ops.setVolumePhase(pv, 'Available');
    if (ref !== undefined) ops.enqueueClaim(ref.namespace ?? '', ref.name ?? '');
    return;
  }
  let claim = await ops.claim(ref.namespace ?? '', ref.name ?? '');
  if (claim !== undefined && claim.metadata.uid !== ref.uid) claim = undefined;
  if (claim === undefined) {
    await release(ops, pv);
    return;
  }
  const volumeName = claim.spec?.volumeName ?? '';
  if (volumeName === '') {
    ops.enqueueClaim(claim.metadata.namespace ?? '', claim.metadata.name ?? '');
    return;
  }
  if (volumeName === pv.metadata.name) {
    await ops.setVolumePhase(pv, 'Bound');
    return;
  }
  // The claim went to another volume.
  const annotations = pv.metadata.annotations;
  if (
    hasAnnotation(annotations, ANN_DYNAMICALLY_PROVISIONED) &&
    pv.spec?.persistentVolumeReclaimPolicy === 'Delete'
  ) {
    await release(ops, pv);
  } else if (hasAnnotation(annotations, ANN_BOUND_BY_CONTROLLER)) {
    await unbindVolume(ops, pv);
  }
}

async function release(ops: BinderOps, pv: PersistentVolume): Promise<void> {
  let volume = pv;
  const phase = pv.status?.phase;
  if (phase !== 'Released' && phase !== 'Failed') volume = await ops.setVolumePhase(pv, 'Released');
  await reclaim(ops, volume);
}

async function reclaim(ops: BinderOps, pv: PersistentVolume): Promise<void> {
  if (pv.status?.phase === 'Failed') return;
  switch (pv.spec?.persistentVolumeReclaimPolicy ?? 'Retain') {
    case 'Retain':
      return;
    case 'Recycle':
      ops.event(pv, 'Warning', REASON.VolumeFailedRecycle, 'No recycler plugin found for the volume!');
      await ops.setVolumePhase(pv, 'Failed', 'No recycler plugin found for the volume!');
      return;
    case 'Delete': {
      // A provisioned volume is its provisioner's to delete.
      if (hasAnnotation(pv.metadata.annotations, ANN_DYNAMICALLY_PROVISIONED)) return;
      const why = `error getting deleter volume plugin for volume "${pv.metadata.name ?? ''}": no deletable volume plugin matched`;
      ops.event(pv, 'Warning', REASON.VolumeFailedDelete, why);
      await ops.setVolumePhase(pv, 'Failed', why);
      return;
    }
    default:
      return;
  }
}
