/**
 * The annotations, finalizers and event reasons kube's volume controllers use
 * (`pkg/controller/volume/persistentvolume/util`, `pkg/controller/volume/events`).
 */

/** On a claim: the binding is complete (the claim side was written). */
export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
/** On a claim or volume: the controller (not the user) wrote its half of the binding. */
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
/** On a claim: the node the scheduler chose (WaitForFirstConsumer). */
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
/** On a claim: the provisioner asked to provision it. */
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
/** The same, under its deprecated beta name (kube still writes both). */
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
/** On a volume: the provisioner that made it. */
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
/** On a claim: the class marked as the cluster default. */
export const ANN_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';

/** The provisioner name meaning "never provision" (local volumes made by hand). */
export const NO_PROVISIONER = 'kubernetes.io/no-provisioner';

/** Finalizers the StorageObjectInUseProtection admission plugin adds. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** kube's event reasons (`pkg/controller/volume/events`). */
export const REASON = {
  FailedBinding: 'FailedBinding',
  VolumeMismatch: 'VolumeMismatch',
  VolumeFailedRecycle: 'VolumeFailedRecycle',
  VolumeFailedDelete: 'VolumeFailedDelete',
  ExternalProvisioning: 'ExternalProvisioning',
  ProvisioningFailed: 'ProvisioningFailed',
  ProvisioningSucceeded: 'ProvisioningSucceeded',
  ClaimLost: 'ClaimLost',
  ClaimMisbound: 'ClaimMisbound',
  WaitForFirstConsumer: 'WaitForFirstConsumer',
  WaitForPodScheduled: 'WaitForPodScheduled',
} as const;

/** True when `annotations` has `key` (any value). */
export function hasAnnotation(
  annotations: Readonly<Record<string, string>> | undefined,
  key: string,
): boolean {
  return annotations !== undefined && Object.hasOwn(annotations, key);
}
