/**
 * Facts about core kinds that both defaulting (src/defaults) and validation read; they live on
 * the lower layer (validation) so defaulting can import them without a folder cycle.
 */
import type { JsonObject } from '../json.js';

/** Every volume source key of `v1.VolumeSource`; a volume with none of them gets `emptyDir: {}`. */
export const VOLUME_SOURCES: readonly string[] = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

/** kube's `ExternallyAccessible`: NodePort, LoadBalancer, or ClusterIP with external IPs. */
export function externallyAccessible(spec: JsonObject): boolean {
  const t = spec['type'];
  return t === 'LoadBalancer' || t === 'NodePort' || (t === 'ClusterIP' && nonEmpty(spec['externalIPs']));
}

/** A non-empty array or object (the defaulters' `nonEmpty`). */
function nonEmpty(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  return typeof v === 'object' && v !== null && Object.keys(v).length > 0;
}
