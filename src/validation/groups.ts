/**
 * The validator table of the named groups outside apps and batch.
 */
import { validateWebhookConfiguration } from './admission.js';
import {
  validateValidatingAdmissionPolicy,
  validateValidatingAdmissionPolicyBinding,
} from './admission-policy.js';
import { validateCRD } from './apiextensions.js';
import { validateHPA } from './autoscaling.js';
import { validateCSR } from './certificates.js';
import { validateEvent } from './events.js';
import { validateFlowSchema, validatePriorityLevelConfiguration } from './flowcontrol.js';
import {
  validateEndpointSlice,
  validatePriorityClass,
  validateRuntimeClass,
  validateStorageClass,
  validateVolumeAttachment,
} from './infrastructure.js';
import { validateIngress, validateIngressClass, validateNetworkPolicy } from './networking.js';
import { validateIPAddress, validateServiceCIDR } from './ipam.js';
import { validateLease, validatePodDisruptionBudget } from './policy.js';
import {
  validateClusterRole,
  validateClusterRoleBinding,
  validateRole,
  validateRoleBinding,
} from './rbac.js';
import type { KindValidator } from './validate.js';

/** Group and kind (`group/Kind`) → the kind's own validation, for the named groups above. */
export const GROUP_VALIDATORS: ReadonlyMap<string, KindValidator> = new Map<string, KindValidator>([
  ['networking.k8s.io/Ingress', validateIngress],
  ['networking.k8s.io/IngressClass', validateIngressClass],
  ['networking.k8s.io/NetworkPolicy', validateNetworkPolicy],
  ['networking.k8s.io/ServiceCIDR', validateServiceCIDR],
  ['networking.k8s.io/IPAddress', validateIPAddress],
  ['policy/PodDisruptionBudget', validatePodDisruptionBudget],
  ['coordination.k8s.io/Lease', validateLease],
  ['rbac.authorization.k8s.io/Role', validateRole],
  ['rbac.authorization.k8s.io/ClusterRole', validateClusterRole],
  ['rbac.authorization.k8s.io/RoleBinding', validateRoleBinding],
  ['rbac.authorization.k8s.io/ClusterRoleBinding', validateClusterRoleBinding],
  ['apiextensions.k8s.io/CustomResourceDefinition', validateCRD],
  ['certificates.k8s.io/CertificateSigningRequest', validateCSR],
  [
    'admissionregistration.k8s.io/MutatingWebhookConfiguration',
    (o, _old, e) => validateWebhookConfiguration(o, true, e),
  ],
  [
    'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
    (o, _old, e) => validateWebhookConfiguration(o, false, e),
  ],
  [
    'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
    (o, _old, e) => validateValidatingAdmissionPolicy(o, e),
  ],
  [
    'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
    (o, _old, e) => validateValidatingAdmissionPolicyBinding(o, e),
  ],
  ['events.k8s.io/Event', validateEvent],
  ['scheduling.k8s.io/PriorityClass', validatePriorityClass],
  ['storage.k8s.io/StorageClass', validateStorageClass],
  ['storage.k8s.io/VolumeAttachment', validateVolumeAttachment],
  ['node.k8s.io/RuntimeClass', validateRuntimeClass],
  ['discovery.k8s.io/EndpointSlice', validateEndpointSlice],
  ['autoscaling/HorizontalPodAutoscaler', validateHPA],
  ['flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration', validatePriorityLevelConfiguration],
  ['flowcontrol.apiserver.k8s.io/FlowSchema', validateFlowSchema],
]);
