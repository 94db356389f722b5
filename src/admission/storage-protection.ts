/**
 * kube's StorageObjectInUseProtection: new PersistentVolumeClaims get the
 * `kubernetes.io/pvc-protection` finalizer and new PersistentVolumes `kubernetes.io/pv-protection`.
 */
import type { AdmissionPlugin } from './types.js';
import { isCore } from './pod-spec.js';

const FINALIZERS: Readonly<Record<string, string>> = {
  PersistentVolumeClaim: 'kubernetes.io/pvc-protection',
  PersistentVolume: 'kubernetes.io/pv-protection',
};

export function storageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: 'StorageObjectInUseProtection',
    handles: (a) =>
      a.operation === 'CREATE' &&
      a.subresource === undefined &&
      (isCore(a, 'PersistentVolumeClaim') || isCore(a, 'PersistentVolume')),
    admit: (a) => {
      const finalizer = FINALIZERS[a.type.kind];
      if (a.object === undefined || finalizer === undefined) return;
      const current = a.object.metadata.finalizers ?? [];
      if (!current.includes(finalizer)) a.object.metadata.finalizers = [...current, finalizer];
    },
  };
}
