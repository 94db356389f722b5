/**
 * Which PersistentVolume satisfies a claim, as kube's binder decides (`findMatchingVolume` of
 * `component-helpers/storage/volume`): the volume pre-bound to the claim wins; otherwise the
 * smallest available volume of the claim's class with the claim's volume mode, every access mode
 * asked for, at least the requested size and the claim's selector's labels. A claim whose class
 * binds on first consumer only takes pre-bound volumes here: the scheduler picks the rest.
 */
import type { PersistentVolume, PersistentVolumeClaim } from '../../api/types/core-v1.js';
import { unitValue } from '../../scheduler/quantity.js';
import type { LabelSelector } from '../../api/types/meta-v1.js';
import { labelMatcher, type LabelMatcher } from '../shared/label-selector.js';

/** The claim's class (`spec.storageClassName`, or the beta annotation of old claims). */
export function claimClass(pvc: PersistentVolumeClaim): string {
  return (
    pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? pvc.spec?.storageClassName ?? ''
  );
}

/** The volume's class (`spec.storageClassName`, or the beta annotation). */
export function volumeClass(pv: PersistentVolume): string {
  return (
    pv.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? pv.spec?.storageClassName ?? ''
  );
}

/** True when the volume's claimRef names this claim (and its UID, when the ref has one). */
export function isVolumeBoundToClaim(pv: PersistentVolume, pvc: PersistentVolumeClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (ref === undefined || ref === null) return false;
  if (ref.name !== pvc.metadata.name || (ref.namespace ?? '') !== (pvc.metadata.namespace ?? ''))
    return false;
  return (ref.uid ?? '') === '' || ref.uid === pvc.metadata.uid;
}

/**
 * Why the volume cannot hold the claim (kube's `checkVolumeSatisfyClaim` wording), or undefined
 * when it can. Used for volumes the user pre-bound by name.
 */
export function volumeMismatch(pv: PersistentVolume, pvc: PersistentVolumeClaim): string | undefined {
  const want = unitValue(pvc.spec?.resources?.requests?.['storage']);
  const have = unitValue(pv.spec?.capacity?.['storage']);
  if (have < want) return 'requested PV is too small';
  if (volumeClass(pv) !== claimClass(pvc)) return 'storageClassName does not match';
  if ((pv.spec?.volumeMode ?? 'Filesystem') !== (pvc.spec?.volumeMode ?? 'Filesystem'))
    return 'incompatible volumeMode';
  const modes = new Set(pv.spec?.accessModes ?? []);
  if (!(pvc.spec?.accessModes ?? []).every((m) => modes.has(m))) return 'incompatible accessMode';
  return undefined;
}

/** The claim's selector as a matcher; a selector kube would refuse matches nothing. */
function selectorMatcher(selector: LabelSelector | undefined): LabelMatcher {
  if (selector === undefined) return () => true;
  try {
    return labelMatcher(selector);
  } catch {
    return () => false;
  }
}

/**
 * The best volume for `pvc` among `pvs`, or undefined. `delayBinding`: the claim's class is
 * WaitForFirstConsumer, so only a volume pre-bound to it qualifies.
 */
export function findBestMatch(
  pvc: PersistentVolumeClaim,
  pvs: readonly PersistentVolume[],
  delayBinding: boolean,
): PersistentVolume | undefined {
  const want = unitValue(pvc.spec?.resources?.requests?.['storage']);
  const cls = claimClass(pvc);
  const mode = pvc.spec?.volumeMode ?? 'Filesystem';
  const modes = pvc.spec?.accessModes ?? [];
  const selector = pvc.spec?.selector ?? undefined;
  const selects = selectorMatcher(selector);
  let best: PersistentVolume | undefined;
  let bestSize = Infinity;
  for (const pv of pvs) {
    if ((pv.spec?.volumeMode ?? 'Filesystem') !== mode) continue;
    const size = unitValue(pv.spec?.capacity?.['storage']);
    if (isVolumeBoundToClaim(pv, pvc)) {
      // Pre-bound to this claim: the only candidate, whether it fits or not is checked on bind.
      if (size >= want && volumeClass(pv) === cls) return pv;
      continue;
    }
    if (pv.spec?.claimRef !== undefined && pv.spec.claimRef !== null) continue;
    if (delayBinding) continue;
    if (pv.metadata.deletionTimestamp !== undefined && pv.metadata.deletionTimestamp !== null) continue;
    if (pv.status?.phase !== undefined && pv.status.phase !== 'Available' && pv.status.phase !== 'Pending')
      continue;
    if (volumeClass(pv) !== cls) continue;
    if (!selects(pv.metadata.labels)) continue;
    const pvModes = new Set(pv.spec?.accessModes ?? []);
    if (!modes.every((m) => pvModes.has(m))) continue;
    if (size < want) continue;
    if (size < bestSize) {
      best = pv;
      bestSize = size;
    }
  }
  return best;
}
