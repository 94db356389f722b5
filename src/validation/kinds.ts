/**
 * What validation needs to know about each built-in kind before looking inside it: whether it
 * is namespaced and which name rule kube-apiserver's `Validate<Kind>` passes to
 * `ValidateObjectMeta`. Kinds not listed (custom resources) get kube's custom-resource rule:
 * DNS-1123 subdomain names, scope unknown here.
 */

/** kube's per-kind `ValidateNameFunc` choices. */
export type NameRule =
  /** `NameIsDNSSubdomain`: most kinds. */
  | 'subdomain'
  /** `NameIsDNSLabel`: Namespace, StatefulSet. */
  | 'label'
  /** `NameIsDNS1035Label`: Service. */
  | 'dns1035'
  /** `path.IsValidPathSegmentName`: RBAC, flow control, APIService. */
  | 'path'
  /** CSIDriver: at most 63 bytes, a DNS subdomain once lower-cased. */
  | 'csidriver'
  /** CertificateSigningRequest: any name. */
  | 'any'
  /** Review kinds: never stored, no metadata validation. */
  | 'virtual';

/** Scope and name rule of a built-in kind. */
export interface KindInfo {
  readonly namespaced: boolean;
  readonly name: NameRule;
}

const NS_SUB: KindInfo = { namespaced: true, name: 'subdomain' };
const CL_SUB: KindInfo = { namespaced: false, name: 'subdomain' };
const NS_PATH: KindInfo = { namespaced: true, name: 'path' };
const CL_PATH: KindInfo = { namespaced: false, name: 'path' };
const VIRTUAL: KindInfo = { namespaced: false, name: 'virtual' };

const TABLE: ReadonlyMap<string, KindInfo> = new Map<string, KindInfo>([
  ['/Pod', NS_SUB],
  ['/PodTemplate', NS_SUB],
  ['/ReplicationController', NS_SUB],
  ['/Service', { namespaced: true, name: 'dns1035' }],
  ['/Endpoints', NS_SUB],
  ['/Node', CL_SUB],
  ['/Namespace', { namespaced: false, name: 'label' }],
  ['/Secret', NS_SUB],
  ['/ConfigMap', NS_SUB],
  ['/ServiceAccount', NS_SUB],
  ['/PersistentVolume', CL_SUB],
  ['/PersistentVolumeClaim', NS_SUB],
  ['/LimitRange', NS_SUB],
  ['/ResourceQuota', NS_SUB],
  ['/Event', NS_SUB],
  ['apps/Deployment', NS_SUB],
  ['apps/ReplicaSet', NS_SUB],
  ['apps/DaemonSet', NS_SUB],
  ['apps/StatefulSet', { namespaced: true, name: 'label' }],
  ['apps/ControllerRevision', NS_SUB],
  ['batch/Job', NS_SUB],
  ['batch/CronJob', NS_SUB],
  ['autoscaling/HorizontalPodAutoscaler', NS_SUB],
  ['networking.k8s.io/Ingress', NS_SUB],
  ['networking.k8s.io/IngressClass', CL_SUB],
  ['networking.k8s.io/NetworkPolicy', NS_SUB],
  ['networking.k8s.io/ServiceCIDR', CL_SUB],
  // kube checks the name itself (a canonical IP address) in ValidateIPAddress.
  ['networking.k8s.io/IPAddress', { namespaced: false, name: 'any' }],
  ['policy/PodDisruptionBudget', NS_SUB],
  ['rbac.authorization.k8s.io/Role', NS_PATH],
  ['rbac.authorization.k8s.io/RoleBinding', NS_PATH],
  ['rbac.authorization.k8s.io/ClusterRole', CL_PATH],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', CL_PATH],
  ['coordination.k8s.io/Lease', NS_SUB],
  ['storage.k8s.io/StorageClass', CL_SUB],
  ['storage.k8s.io/CSIDriver', { namespaced: false, name: 'csidriver' }],
  ['storage.k8s.io/CSINode', CL_SUB],
  ['storage.k8s.io/VolumeAttachment', CL_SUB],
  ['storage.k8s.io/CSIStorageCapacity', NS_SUB],
  ['storage.k8s.io/VolumeAttributesClass', CL_SUB],
  ['scheduling.k8s.io/PriorityClass', CL_SUB],
  ['node.k8s.io/RuntimeClass', CL_SUB],
  ['apiextensions.k8s.io/CustomResourceDefinition', CL_SUB],
  ['apiregistration.k8s.io/APIService', CL_PATH],
  ['certificates.k8s.io/CertificateSigningRequest', { namespaced: false, name: 'any' }],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', CL_SUB],
  ['admissionregistration.k8s.io/ValidatingWebhookConfiguration', CL_SUB],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicy', CL_SUB],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding', CL_SUB],
  ['events.k8s.io/Event', NS_SUB],
  ['discovery.k8s.io/EndpointSlice', NS_SUB],
  ['flowcontrol.apiserver.k8s.io/FlowSchema', CL_PATH],
  ['flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration', CL_PATH],
  ['authentication.k8s.io/TokenReview', VIRTUAL],
  ['authentication.k8s.io/SelfSubjectReview', VIRTUAL],
  ['authorization.k8s.io/SubjectAccessReview', VIRTUAL],
  ['authorization.k8s.io/LocalSubjectAccessReview', { namespaced: true, name: 'virtual' }],
  ['authorization.k8s.io/SelfSubjectAccessReview', VIRTUAL],
  ['authorization.k8s.io/SelfSubjectRulesReview', VIRTUAL],
]);

/** The table key of a group and kind. */
export function kindKey(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** What is known about a built-in kind, or undefined for custom resources. */
export function kindInfo(group: string, kind: string): KindInfo | undefined {
  return TABLE.get(kindKey(group, kind));
}
