/**
 * kube's PersistentVolumeClaimResize: growing a claim's `spec.resources.requests.storage` needs a
 * StorageClass with `allowVolumeExpansion: true`.
 */
import { isJsonObject, type JsonObject } from '../api/object.js';
import { compareQuantities, parseQuantity } from '../validation/quantity.js';
import type { AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import { admissionForbidden } from './forbidden.js';
import { isCore, specOf } from './pod-spec.js';

function storageOf(pvc: JsonObject | undefined): ReturnType<typeof parseQuantity> {
  if (pvc === undefined) return undefined;
  const r = specOf(pvc)['resources'];
  return parseQuantity(isJsonObject(r) && isJsonObject(r['requests']) ? r['requests']['storage'] : undefined);
}

export function pvcResize(objects: AdmissionObjects): AdmissionPlugin {
  return {
    name: 'PersistentVolumeClaimResize',
    handles: (a) =>
      isCore(a, 'PersistentVolumeClaim') && a.operation === 'UPDATE' && a.subresource === undefined,
    validate: async (a) => {
      const next = storageOf(a.object);
      const prev = storageOf(a.oldObject);
      if (next === undefined || prev === undefined || compareQuantities(next, prev) <= 0) return;
      const refuse = admissionForbidden(
        a,
        'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
      );
      const name = a.oldObject === undefined ? '' : specOf(a.oldObject)['storageClassName'];
      if (typeof name !== 'string' || name === '') throw refuse;
      const sc = await objects.get(KINDS.storageClass, undefined, name);
      if (sc?.['allowVolumeExpansion'] !== true) throw refuse;
    },
  };
}
