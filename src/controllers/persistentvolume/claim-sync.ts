/**
 * One claim's sync, as kube's `syncClaim`. A claim without `bind-completed` is unbound:
 * - no volumeName: bind it to the best matching volume; else, for a WaitForFirstConsumer class,
 *   wait for the scheduler (events WaitForFirstConsumer / WaitForPodScheduled) until it picks a
 *   node; else ask the class's provisioner (the `storage-provisioner` annotations, event
 *   ExternalProvisioning); else report FailedBinding. The claim stays Pending.
 * - a volumeName the user set: bind to that volume when it is free (or already ours) and fits.
 * A bound claim whose volume is gone, or has gone to another claim, is Lost.
 */
import type { PersistentVolumeClaim } from '../../api/types/core-v1.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  REASON,
  hasAnnotation,
} from './annotations.js';
import { bind } from './bind.js';
import { claimClass, findBestMatch, volumeMismatch } from './match.js';
import type { BinderOps } from './ops.js';

/** Syncs one claim (current state from the cache). */
export async function syncClaim(ops: BinderOps, pvc: PersistentVolumeClaim): Promise<void> {
  if (!hasAnnotation(pvc.metadata.annotations, ANN_BIND_COMPLETED)) await syncUnboundClaim(ops, pvc);
  else await syncBoundClaim(ops, pvc);
}

async function syncUnboundClaim(ops: BinderOps, pvc: PersistentVolumeClaim): Promise<void> {
  const volumeName = pvc.spec?.volumeName ?? '';
  if (volumeName === '') {
    const cls = ops.storageClass(claimClass(pvc));
    const delayBinding = cls?.volumeBindingMode === 'WaitForFirstConsumer';
    const pv = findBestMatch(pvc, ops.volumes(), delayBinding);
    if (pv !== undefined) {
      await bind(ops, pv, pvc);
      return;
    }
    const selectedNode = hasAnnotation(pvc.metadata.annotations, ANN_SELECTED_NODE);
    if (delayBinding && !selectedNode) {
      waitingForConsumer(ops, pvc);
    } else if (claimClass(pvc) !== '') {
      await provisionClaim(ops, pvc);
      return;
    } else {
      ops.event(
        pvc,
        'Normal',
        REASON.FailedBinding,
        'no persistent volumes available for this claim and no storage class is set',
      );
    }
    await ops.setClaimStatus(pvc, 'Pending');
    return;
  }
  // The user asked for one volume by name.
  const pv = ops.volume(volumeName);
  if (pv === undefined) {
    ops.event(pvc, 'Normal', REASON.FailedBinding, `volume "${volumeName}" not found`);
    await ops.setClaimStatus(pvc, 'Pending');
    return;
  }
  const ref = pv.spec?.claimRef;
  const refersHere =
    ref !== undefined &&
    ref.name === pvc.metadata.name &&
    (ref.namespace ?? '') === (pvc.metadata.namespace ?? '') &&
    ((ref.uid ?? '') === '' || ref.uid === pvc.metadata.uid);
  if (ref === undefined || refersHere) {
    const why = volumeMismatch(pv, pvc);
    if (why !== undefined) {
      ops.event(
        pvc,
        'Warning',
        REASON.VolumeMismatch,
        `Cannot bind to requested volume "${volumeName}": ${why}`,
      );
      await ops.setClaimStatus(pvc, 'Pending');
      return;
    }
    await bind(ops, pv, pvc);
    return;
  }
  // The volume belongs to another claim.
  if (hasAnnotation(pvc.metadata.annotations, ANN_BOUND_BY_CONTROLLER)) {
    // We wrote this volumeName earlier and lost the race: free the claim to match again.
    const annotations = { ...(pvc.metadata.annotations ?? {}) };
    delete annotations[ANN_BOUND_BY_CONTROLLER];
    const written = await ops.updateClaim({
      ...pvc,
      metadata: { ...pvc.metadata, annotations },
      spec: { ...pvc.spec, volumeName: '' },
    });
    await ops.setClaimStatus(written, 'Pending');
    return;
  }
  ops.event(
    pvc,
    'Normal',
    REASON.FailedBinding,
    `volume "${volumeName}" already bound to a different claim.`,
  );
  await ops.setClaimStatus(pvc, 'Pending');
}

function waitingForConsumer(ops: BinderOps, pvc: PersistentVolumeClaim): void {
  const waiting = ops.podsUsing(pvc).filter((p) => (p.spec?.nodeName ?? '') === '');
  const first = waiting[0];
  if (first === undefined) {
    ops.event(
      pvc,
      'Normal',
      REASON.WaitForFirstConsumer,
      'waiting for first consumer to be created before binding',
    );
  } else {
    ops.event(
      pvc,
      'Normal',
      REASON.WaitForPodScheduled,
      `waiting for pod ${first.metadata.name ?? ''} to be scheduled`,
    );
  }
}

/**
 * Asks the class's provisioner for a volume: kube has no in-tree provisioners left that Capstan
 * runs, so every provisioner is external, asked through the claim's annotations.
 */
async function provisionClaim(ops: BinderOps, pvc: PersistentVolumeClaim): Promise<void> {
  if (!ops.dynamicProvisioning) {
    await ops.setClaimStatus(pvc, 'Pending');
    return;
  }
  const name = claimClass(pvc);
  const cls = ops.storageClass(name);
  if (cls === undefined) {
    ops.event(pvc, 'Warning', REASON.ProvisioningFailed, `storageclass.storage.k8s.io "${name}" not found`);
    await ops.setClaimStatus(pvc, 'Pending');
    return;
  }
  const provisioner = cls.provisioner ?? '';
  let claim = pvc;
  const ann = pvc.metadata.annotations ?? {};
  if (ann[ANN_STORAGE_PROVISIONER] !== provisioner || ann[ANN_BETA_STORAGE_PROVISIONER] !== provisioner) {
    claim = await ops.updateClaim({
      ...pvc,
      metadata: {
        ...pvc.metadata,
        annotations: {
          ...ann,
          [ANN_STORAGE_PROVISIONER]: provisioner,
          [ANN_BETA_STORAGE_PROVISIONER]: provisioner,
        },
      },
    });
  }
  ops.event(
    claim,
    'Normal',
    REASON.ExternalProvisioning,
    `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
  );
  await ops.setClaimStatus(claim, 'Pending');
}

async function syncBoundClaim(ops: BinderOps, pvc: PersistentVolumeClaim): Promise<void> {
  const volumeName = pvc.spec?.volumeName ?? '';
  if (volumeName === '') {
    await lost(
      ops,
      pvc,
      REASON.ClaimLost,
      'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
    );
    return;
  }
  const pv = ops.volume(volumeName);
  if (pv === undefined) {
    await lost(
      ops,
      pvc,
      REASON.ClaimLost,
      'Bound claim has lost its PersistentVolume. Data on the volume is lost!',
    );
    return;
  }
  const ref = pv.spec?.claimRef;
  if (ref === undefined || ref.uid === pvc.metadata.uid) {
    // Not yet bound on the volume's side (a crash between the writes), or bound: finish or confirm.
    await bind(ops, pv, pvc);
    return;
  }
  await lost(
    ops,
    pvc,
    REASON.ClaimMisbound,
    'Two claims are bound to the same volume, this one is bound incorrectly',
  );
}

async function lost(ops: BinderOps, pvc: PersistentVolumeClaim, reason: string, note: string): Promise<void> {
  if (pvc.status?.phase === 'Lost') return;
  ops.event(pvc, 'Warning', reason, note);
  await ops.setClaimStatus(pvc, 'Lost');
}
