/**
 * kube's DefaultStorageClass: a new PersistentVolumeClaim without `spec.storageClassName` (and
 * without the beta annotation) gets the default StorageClass's name (annotation
 * `storageclass.kubernetes.io/is-default-class: "true"`, or its beta form).
 */
import type { AdmissionPlugin } from './types.js';
import { KINDS, type AdmissionObjects } from './objects.js';
import { pickDefault } from './default-class.js';
import { isCore, specOf } from './pod-spec.js';

const IS_DEFAULT = 'storageclass.kubernetes.io/is-default-class';
const IS_DEFAULT_BETA = 'storageclass.beta.kubernetes.io/is-default-class';
const BETA_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

export function defaultStorageClass(objects: AdmissionObjects): AdmissionPlugin {
  return {
    name: 'DefaultStorageClass',
    handles: (a) =>
      isCore(a, 'PersistentVolumeClaim') && a.operation === 'CREATE' && a.subresource === undefined,
    admit: async (a) => {
      const pvc = a.object;
      if (pvc === undefined) return;
      const spec = specOf(pvc, true);
      if (spec['storageClassName'] !== undefined && spec['storageClassName'] !== null) return;
      if (pvc.metadata.annotations?.[BETA_CLASS_ANNOTATION] !== undefined) return;
      const classes = await objects.list(KINDS.storageClass, undefined);
      const def = pickDefault(
        classes,
        (c) =>
          c.metadata.annotations?.[IS_DEFAULT] === 'true' ||
          c.metadata.annotations?.[IS_DEFAULT_BETA] === 'true',
      );
      if (def !== undefined) spec['storageClassName'] = def.metadata.name;
    },
  };
}
