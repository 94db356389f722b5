/**
 * Which PersistentVolume can satisfy an unbound claim on a node, as kube's volume binder decides:
 * same storage class, large enough, the access modes and volume mode asked for, the claim's
 * selector, the volume's node affinity; the smallest such volume wins.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim } from '../../api/types/core-v1.js';
import { compileLabelSelector, compileNodeSelector } from '../selectors.js';
import { unitValue } from '../quantity.js';

/** True when the volume's node affinity admits the node (no affinity admits every node). */
export function volumeFitsNode(pv: PersistentVolume, node: Node): boolean {
  const req = pv.spec?.nodeAffinity?.required;
  if (req === undefined) return true;
  return compileNodeSelector(req)(node);
}

/** True when the volume is pre-bound (claimRef) to this claim. */
export function boundToClaim(pv: PersistentVolume, pvc: PersistentVolumeClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (ref === undefined) return false;
  if (ref.name !== pvc.metadata.name || (ref.namespace ?? '') !== (pvc.metadata.namespace ?? ''))
    return false;
  return ref.uid === undefined || ref.uid === '' || ref.uid === pvc.metadata.uid;
}

/**
 * The smallest volume among `pvs` that can be bound to `pvc` on `node`, skipping `taken`
 * (volumes already chosen for other claims).
 */
export function findMatchingVolume(
  pvc: PersistentVolumeClaim,
  pvs: readonly PersistentVolume[],
  node: Node,
  taken: ReadonlySet<string>,
): PersistentVolume | undefined {
  const cls = pvc.spec?.storageClassName ?? '';
  const want = unitValue(pvc.spec?.resources?.requests?.['storage']);
  const modes = pvc.spec?.accessModes ?? [];
  const mode = pvc.spec?.volumeMode ?? 'Filesystem';
  const selector = pvc.spec?.selector === undefined ? undefined : compileLabelSelector(pvc.spec.selector);
  let best: PersistentVolume | undefined;
  let bestSize = Infinity;
  for (const pv of pvs) {
    const name = pv.metadata.name ?? '';
    if (taken.has(name)) continue;
    if ((pv.spec?.storageClassName ?? '') !== cls) continue;
    if (pv.metadata.deletionTimestamp !== undefined && pv.metadata.deletionTimestamp !== null) continue;
    const prebound = boundToClaim(pv, pvc);
    if (pv.spec?.claimRef !== undefined && !prebound) continue;
    if ((pv.spec?.volumeMode ?? 'Filesystem') !== mode) continue;
    const pvModes = new Set(pv.spec?.accessModes ?? []);
    if (!modes.every((m) => pvModes.has(m))) continue;
    const size = unitValue(pv.spec?.capacity?.['storage']);
    if (size < want) continue;
    if (selector !== undefined && !selector(pv.metadata.labels)) continue;
    if (!volumeFitsNode(pv, node)) continue;
    if (prebound) return pv;
    if (size < bestSize) {
      best = pv;
      bestSize = size;
    }
  }
  return best;
}
