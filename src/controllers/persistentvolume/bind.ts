/**
 * Binding a claim and a volume, as kube's `bind`: the volume's claimRef first (the durable half:
 * a crash after it leaves a volume the claim's next sync finds pre-bound), its phase, then the
 * claim's volumeName and `bind-completed`, then the claim's status. Each step writes only when
 * something changed, so a repeated bind is a no-op.
 */
import type { PersistentVolume, PersistentVolumeClaim } from '../../api/types/core-v1.js';
import { ANN_BIND_COMPLETED, ANN_BOUND_BY_CONTROLLER } from './annotations.js';
import { isVolumeBoundToClaim } from './match.js';
import type { BinderOps } from './ops.js';

/** Sets the volume's claimRef to `pvc` (with its UID); marks it bound by the controller when it was free. */
export async function bindVolumeToClaim(
  ops: BinderOps,
  pv: PersistentVolume,
  pvc: PersistentVolumeClaim,
): Promise<PersistentVolume> {
  const ref = pv.spec?.claimRef ?? undefined;
  if (isVolumeBoundToClaim(pv, pvc) && (ref?.uid ?? '') !== '') return pv;
  const annotations = { ...(pv.metadata.annotations ?? {}) };
  // Free before: the controller chose it. Named by the user (claimRef without UID): theirs.
  if (ref === undefined) annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
  return ops.updateVolume({
    ...pv,
    metadata: { ...pv.metadata, annotations },
    spec: {
      ...pv.spec,
      claimRef: {
        kind: 'PersistentVolumeClaim',
        apiVersion: 'v1',
        namespace: pvc.metadata.namespace ?? '',
        name: pvc.metadata.name ?? '',
        uid: pvc.metadata.uid ?? '',
        resourceVersion: pvc.metadata.resourceVersion ?? '',
      },
    },
  });
}

/** Sets the claim's volumeName and `bind-completed` (and `bound-by-controller` when it chose the volume). */
export async function bindClaimToVolume(
  ops: BinderOps,
  pvc: PersistentVolumeClaim,
  pv: PersistentVolume,
): Promise<PersistentVolumeClaim> {
  const name = pv.metadata.name ?? '';
  const annotations = { ...(pvc.metadata.annotations ?? {}) };
  let changed = false;
  if ((pvc.spec?.volumeName ?? '') !== name) {
    annotations[ANN_BOUND_BY_CONTROLLER] = 'yes';
    changed = true;
  }
  if (annotations[ANN_BIND_COMPLETED] === undefined) {
    annotations[ANN_BIND_COMPLETED] = 'yes';
    changed = true;
  }
  if (!changed) return pvc;
  return ops.updateClaim({
    ...pvc,
    metadata: { ...pvc.metadata, annotations },
    spec: { ...pvc.spec, volumeName: name },
  });
}

/** The whole bind; returns both objects as written. */
export async function bind(
  ops: BinderOps,
  pv: PersistentVolume,
  pvc: PersistentVolumeClaim,
): Promise<{ pv: PersistentVolume; pvc: PersistentVolumeClaim }> {
  let volume = await bindVolumeToClaim(ops, pv, pvc);
  volume = await ops.setVolumePhase(volume, 'Bound');
  let claim = await bindClaimToVolume(ops, pvc, volume);
  claim = await ops.setClaimStatus(claim, 'Bound', volume);
  return { pv: volume, pvc: claim };
}

/**
 * Frees a volume the controller bound (kube's `unbindVolume`): claimRef removed, phase
 * Available. A volume the user pre-bound by name keeps the name but loses the UID.
 */
export async function unbindVolume(ops: BinderOps, pv: PersistentVolume): Promise<PersistentVolume> {
  const annotations = { ...(pv.metadata.annotations ?? {}) };
  const byController = annotations[ANN_BOUND_BY_CONTROLLER] !== undefined;
  delete annotations[ANN_BOUND_BY_CONTROLLER];
  const spec = { ...pv.spec };
  if (byController) delete spec.claimRef;
  else if (spec.claimRef) spec.claimRef = { ...spec.claimRef, uid: '' };
  const written = await ops.updateVolume({ ...pv, metadata: { ...pv.metadata, annotations }, spec });
  return ops.setVolumePhase(written, 'Available');
}
