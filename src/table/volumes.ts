/** Printers of PersistentVolumes and PersistentVolumeClaims (core group). */
import type { KubeObject } from '../api/object.js';
import { AGE, column, columns, NAME, wide } from './columns.js';
import { since } from './duration.js';
import { obj, optStr, str, stringMap } from './fields.js';
import { accessModes } from './format.js';
import type { TablePrinter } from './index.js';

/** The deprecated annotation that, when present, overrides `spec.storageClassName`. */
const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

function deleting(o: KubeObject): boolean {
  return o.metadata.deletionTimestamp !== undefined && o.metadata.deletionTimestamp !== null;
}

/** A storage quantity as printed; a missing one is Go's zero Quantity, printed `0`. */
function storageOf(resources: unknown): string {
  return str(obj(resources)['storage']) || '0';
}

const PERSISTENT_VOLUME: TablePrinter = {
  columns: columns(
    NAME,
    column('Capacity', 'string', 'Storage capacity of the volume.'),
    column('Access Modes', 'string', 'Ways the volume can be mounted.'),
    column('Reclaim Policy', 'string', 'What happens to the volume when its claim is released.'),
    column('Status', 'string', 'Phase of the volume.'),
    column('Claim', 'string', 'Claim bound to the volume, as namespace/name.'),
    column('StorageClass', 'string', 'Storage class of the volume.'),
    column('VolumeAttributesClass', 'string', 'Volume attributes class of the volume.'),
    column('Reason', 'string', 'Reason for a failed phase.'),
    AGE,
    wide('VolumeMode', 'Whether the volume is a filesystem or a block device.'),
  ),
  cells(pv, now) {
    const spec = obj(pv['spec']);
    const status = obj(pv['status']);
    const claimRef = spec['claimRef'];
    const claim =
      claimRef === undefined || claimRef === null
        ? ''
        : `${str(obj(claimRef)['namespace'])}/${str(obj(claimRef)['name'])}`;
    const storageClass =
      stringMap(pv.metadata.annotations).get(BETA_STORAGE_CLASS) ?? str(spec['storageClassName']);
    return [
      pv.metadata.name ?? '',
      storageOf(spec['capacity']),
      accessModes(spec['accessModes']),
      str(spec['persistentVolumeReclaimPolicy']),
      deleting(pv) ? 'Terminating' : str(status['phase']),
      claim,
      storageClass,
      optStr(spec['volumeAttributesClassName']) ?? '<unset>',
      str(status['reason']),
      since(pv.metadata.creationTimestamp, now),
      optStr(spec['volumeMode']) ?? '<unset>',
    ];
  },
};

const PERSISTENT_VOLUME_CLAIM: TablePrinter = {
  columns: columns(
    NAME,
    column('Status', 'string', 'Phase of the claim.'),
    column('Volume', 'string', 'Volume bound to the claim.'),
    column('Capacity', 'string', 'Storage capacity of the bound volume.'),
    column('Access Modes', 'string', 'Access modes of the bound volume.'),
    column('StorageClass', 'string', 'Storage class of the claim.'),
    column('VolumeAttributesClass', 'string', 'Volume attributes class of the claim.'),
    AGE,
    wide('VolumeMode', 'Whether the claim wants a filesystem or a block device.'),
  ),
  cells(pvc, now) {
    const spec = obj(pvc['spec']);
    const status = obj(pvc['status']);
    const volumeName = str(spec['volumeName']);
    // Capacity and access modes describe the bound volume, so they stay empty until binding.
    const bound = volumeName !== '';
    const storageClass =
      stringMap(pvc.metadata.annotations).get(BETA_STORAGE_CLASS) ?? optStr(spec['storageClassName']) ?? '';
    return [
      pvc.metadata.name ?? '',
      deleting(pvc) ? 'Terminating' : str(status['phase']),
      volumeName,
      bound ? storageOf(status['capacity']) : '',
      bound ? accessModes(status['accessModes']) : '',
      storageClass,
      optStr(spec['volumeAttributesClassName']) ?? '<unset>',
      since(pvc.metadata.creationTimestamp, now),
      optStr(spec['volumeMode']) ?? '<unset>',
    ];
  },
};

/** Volume printers of the core group, by resource. */
export const VOLUME_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  persistentvolumes: PERSISTENT_VOLUME,
  persistentvolumeclaims: PERSISTENT_VOLUME_CLAIM,
});
