/**
 * kube-apiserver's defaulting of the built-in kinds, applied in place to a decoded object.
 * One table maps group and kind to the defaulter; kinds without defaults (and custom
 * resources) are left untouched.
 */
import type { JsonObject } from '../validation/json.js';
import {
  defaultEndpoints,
  defaultLimitRange,
  defaultNamespace,
  defaultNode,
  defaultPersistentVolume,
  defaultPersistentVolumeClaim,
  defaultResourceQuota,
  defaultSecret,
  defaultService,
} from './core.js';
import {
  defaultAPIService,
  defaultCRD,
  defaultCSIDriver,
  defaultEndpointSlice,
  defaultFlowSchema,
  defaultHPA,
  defaultIngressClass,
  defaultNetworkPolicy,
  defaultPriorityClass,
  defaultPriorityLevelConfiguration,
  defaultRoleBinding,
  defaultStorageClass,
  defaultValidatingAdmissionPolicy,
  defaultValidatingAdmissionPolicyBinding,
  defaultWebhookConfiguration,
} from './groups.js';
import { defaultPod } from './pod.js';
import {
  defaultCronJob,
  defaultDaemonSet,
  defaultDeployment,
  defaultJob,
  defaultPodTemplate,
  defaultReplicaSet,
  defaultReplicationController,
  defaultStatefulSet,
} from './workloads.js';

type Defaulter = (obj: JsonObject) => void;

const DEFAULTERS: ReadonlyMap<string, Defaulter> = new Map<string, Defaulter>([
  ['/Pod', defaultPod],
  ['/PodTemplate', defaultPodTemplate],
  ['/ReplicationController', defaultReplicationController],
  ['/Service', defaultService],
  ['/Secret', defaultSecret],
  ['/Namespace', defaultNamespace],
  ['/PersistentVolume', defaultPersistentVolume],
  ['/PersistentVolumeClaim', defaultPersistentVolumeClaim],
  ['/Endpoints', defaultEndpoints],
  ['/LimitRange', defaultLimitRange],
  ['/ResourceQuota', defaultResourceQuota],
  ['/Node', defaultNode],
  ['apps/Deployment', defaultDeployment],
  ['apps/ReplicaSet', defaultReplicaSet],
  ['apps/DaemonSet', defaultDaemonSet],
  ['apps/StatefulSet', defaultStatefulSet],
  ['batch/Job', defaultJob],
  ['batch/CronJob', defaultCronJob],
  ['networking.k8s.io/NetworkPolicy', defaultNetworkPolicy],
  ['networking.k8s.io/IngressClass', defaultIngressClass],
  ['rbac.authorization.k8s.io/RoleBinding', defaultRoleBinding],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', defaultRoleBinding],
  ['storage.k8s.io/StorageClass', defaultStorageClass],
  ['storage.k8s.io/CSIDriver', defaultCSIDriver],
  ['scheduling.k8s.io/PriorityClass', defaultPriorityClass],
  ['autoscaling/HorizontalPodAutoscaler', defaultHPA],
  ['admissionregistration.k8s.io/MutatingWebhookConfiguration', (o) => defaultWebhookConfiguration(o, true)],
  [
    'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
    (o) => defaultWebhookConfiguration(o, false),
  ],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicy', defaultValidatingAdmissionPolicy],
  ['admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding', defaultValidatingAdmissionPolicyBinding],
  ['apiextensions.k8s.io/CustomResourceDefinition', defaultCRD],
  ['discovery.k8s.io/EndpointSlice', defaultEndpointSlice],
  ['flowcontrol.apiserver.k8s.io/FlowSchema', defaultFlowSchema],
  ['flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration', defaultPriorityLevelConfiguration],
  ['apiregistration.k8s.io/APIService', defaultAPIService],
]);

/**
 * Applies kube-apiserver's defaults for `group`/`kind` to `obj`, in place.
 *
 * Covers the defaulters of `k8s.io/kubernetes pkg/apis/<group>/<version>/defaults.go`, the
 * field-level `+default` markers of `k8s.io/api`, and the v1 Secret `stringData` merge. Also
 * canonicalises the quantities kube's defaulters round (resource lists) so objects read back
 * as kube-apiserver returns them.
 *
 * Edge cases:
 * - Idempotent: defaulting a defaulted object changes nothing.
 * - Unknown kinds (custom resources) and kinds without defaults are left as they are.
 * - Malformed parts (a string where an object belongs, ...) are skipped, never thrown on;
 *   validation reports them.
 * - Only defaults that need nothing but the object: IP families, cluster IPs, Job selectors,
 *   Namespace finalizers and other create-time fields are `prepareForCreate`'s.
 *
 * @param group API group (`''` for core).
 * @param kind Kind, e.g. `Deployment`.
 * @param obj The decoded object; mutated.
 */
export function defaultObject(group: string, kind: string, obj: Record<string, unknown>): void {
  DEFAULTERS.get(`${group}/${kind}`)?.(obj);
}
