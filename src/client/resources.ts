/**
 * Resource references: what a {@link ResourceClient} needs to build URLs (group, version, plural,
 * scope) and the kind it serves. The built-in refs below cover what the cluster side uses;
 * subresources (`pods/binding`, `pods/eviction`, `status`, `serviceaccounts/token`, ...) are
 * reached through a resource client's subresource methods, not refs of their own.
 */
import { formatApiVersion } from '../api/group-version.js';

/** A served resource: `/api/v1/...` when `group` is '', else `/apis/<group>/<version>/...`. */
export interface ResourceRef {
  /** '' for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural, lower case (`deployments`). */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** A ref (frozen); for custom resources and anything not listed here. */
export function resourceRef(
  group: string,
  version: string,
  resource: string,
  kind: string,
  namespaced: boolean,
): ResourceRef {
  return Object.freeze({ group, version, resource, kind, namespaced });
}

/** `apiVersion` of a ref's objects (`v1`, `apps/v1`). */
export function apiVersionOf(ref: ResourceRef): string {
  return formatApiVersion(ref.group, ref.version);
}

/** `group/resource` (or `resource` for core): the informer factory's key and messages. */
export function groupResource(ref: ResourceRef): string {
  return ref.group === '' ? ref.resource : `${ref.resource}.${ref.group}`;
}

const N = true;
const C = false;

// core/v1
export const PODS = resourceRef('', 'v1', 'pods', 'Pod', N);
export const NODES = resourceRef('', 'v1', 'nodes', 'Node', C);
export const NAMESPACES = resourceRef('', 'v1', 'namespaces', 'Namespace', C);
export const SERVICES = resourceRef('', 'v1', 'services', 'Service', N);
export const ENDPOINTS = resourceRef('', 'v1', 'endpoints', 'Endpoints', N);
export const CONFIG_MAPS = resourceRef('', 'v1', 'configmaps', 'ConfigMap', N);
export const SECRETS = resourceRef('', 'v1', 'secrets', 'Secret', N);
export const SERVICE_ACCOUNTS = resourceRef('', 'v1', 'serviceaccounts', 'ServiceAccount', N);
export const CORE_EVENTS = resourceRef('', 'v1', 'events', 'Event', N);
export const PERSISTENT_VOLUMES = resourceRef('', 'v1', 'persistentvolumes', 'PersistentVolume', C);
export const PERSISTENT_VOLUME_CLAIMS = resourceRef(
  '',
  'v1',
  'persistentvolumeclaims',
  'PersistentVolumeClaim',
  N,
);
export const REPLICATION_CONTROLLERS = resourceRef(
  '',
  'v1',
  'replicationcontrollers',
  'ReplicationController',
  N,
);
export const RESOURCE_QUOTAS = resourceRef('', 'v1', 'resourcequotas', 'ResourceQuota', N);
export const LIMIT_RANGES = resourceRef('', 'v1', 'limitranges', 'LimitRange', N);
export const POD_TEMPLATES = resourceRef('', 'v1', 'podtemplates', 'PodTemplate', N);
export const COMPONENT_STATUSES = resourceRef('', 'v1', 'componentstatuses', 'ComponentStatus', C);

// apps/v1
export const DEPLOYMENTS = resourceRef('apps', 'v1', 'deployments', 'Deployment', N);
export const REPLICA_SETS = resourceRef('apps', 'v1', 'replicasets', 'ReplicaSet', N);
export const STATEFUL_SETS = resourceRef('apps', 'v1', 'statefulsets', 'StatefulSet', N);
export const DAEMON_SETS = resourceRef('apps', 'v1', 'daemonsets', 'DaemonSet', N);
export const CONTROLLER_REVISIONS = resourceRef('apps', 'v1', 'controllerrevisions', 'ControllerRevision', N);

// batch/v1
export const JOBS = resourceRef('batch', 'v1', 'jobs', 'Job', N);
export const CRON_JOBS = resourceRef('batch', 'v1', 'cronjobs', 'CronJob', N);

// autoscaling
export const HORIZONTAL_POD_AUTOSCALERS = resourceRef(
  'autoscaling',
  'v2',
  'horizontalpodautoscalers',
  'HorizontalPodAutoscaler',
  N,
);

// coordination.k8s.io/v1
export const LEASES = resourceRef('coordination.k8s.io', 'v1', 'leases', 'Lease', N);

// discovery.k8s.io/v1
export const ENDPOINT_SLICES = resourceRef('discovery.k8s.io', 'v1', 'endpointslices', 'EndpointSlice', N);

// events.k8s.io/v1
export const EVENTS = resourceRef('events.k8s.io', 'v1', 'events', 'Event', N);

// policy/v1
export const POD_DISRUPTION_BUDGETS = resourceRef(
  'policy',
  'v1',
  'poddisruptionbudgets',
  'PodDisruptionBudget',
  N,
);

// scheduling.k8s.io/v1
export const PRIORITY_CLASSES = resourceRef('scheduling.k8s.io', 'v1', 'priorityclasses', 'PriorityClass', C);

// storage.k8s.io/v1
export const STORAGE_CLASSES = resourceRef('storage.k8s.io', 'v1', 'storageclasses', 'StorageClass', C);
export const CSI_NODES = resourceRef('storage.k8s.io', 'v1', 'csinodes', 'CSINode', C);
export const CSI_DRIVERS = resourceRef('storage.k8s.io', 'v1', 'csidrivers', 'CSIDriver', C);
export const CSI_STORAGE_CAPACITIES = resourceRef(
  'storage.k8s.io',
  'v1',
  'csistoragecapacities',
  'CSIStorageCapacity',
  N,
);
export const VOLUME_ATTACHMENTS = resourceRef(
  'storage.k8s.io',
  'v1',
  'volumeattachments',
  'VolumeAttachment',
  C,
);

// certificates.k8s.io/v1
export const CERTIFICATE_SIGNING_REQUESTS = resourceRef(
  'certificates.k8s.io',
  'v1',
  'certificatesigningrequests',
  'CertificateSigningRequest',
  C,
);

// node.k8s.io/v1
export const RUNTIME_CLASSES = resourceRef('node.k8s.io', 'v1', 'runtimeclasses', 'RuntimeClass', C);

// networking.k8s.io/v1
export const NETWORK_POLICIES = resourceRef('networking.k8s.io', 'v1', 'networkpolicies', 'NetworkPolicy', N);
export const INGRESSES = resourceRef('networking.k8s.io', 'v1', 'ingresses', 'Ingress', N);
export const INGRESS_CLASSES = resourceRef('networking.k8s.io', 'v1', 'ingressclasses', 'IngressClass', C);
export const IP_ADDRESSES = resourceRef('networking.k8s.io', 'v1', 'ipaddresses', 'IPAddress', C);
export const SERVICE_CIDRS = resourceRef('networking.k8s.io', 'v1', 'servicecidrs', 'ServiceCIDR', C);

// rbac.authorization.k8s.io/v1
export const ROLES = resourceRef('rbac.authorization.k8s.io', 'v1', 'roles', 'Role', N);
export const ROLE_BINDINGS = resourceRef('rbac.authorization.k8s.io', 'v1', 'rolebindings', 'RoleBinding', N);
export const CLUSTER_ROLES = resourceRef('rbac.authorization.k8s.io', 'v1', 'clusterroles', 'ClusterRole', C);
export const CLUSTER_ROLE_BINDINGS = resourceRef(
  'rbac.authorization.k8s.io',
  'v1',
  'clusterrolebindings',
  'ClusterRoleBinding',
  C,
);

// authentication / authorization (create-only reviews)
export const TOKEN_REVIEWS = resourceRef('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', C);
export const SELF_SUBJECT_REVIEWS = resourceRef(
  'authentication.k8s.io',
  'v1',
  'selfsubjectreviews',
  'SelfSubjectReview',
  C,
);
export const SUBJECT_ACCESS_REVIEWS = resourceRef(
  'authorization.k8s.io',
  'v1',
  'subjectaccessreviews',
  'SubjectAccessReview',
  C,
);
export const SELF_SUBJECT_ACCESS_REVIEWS = resourceRef(
  'authorization.k8s.io',
  'v1',
  'selfsubjectaccessreviews',
  'SelfSubjectAccessReview',
  C,
);

// admission and extension APIs
export const MUTATING_WEBHOOK_CONFIGURATIONS = resourceRef(
  'admissionregistration.k8s.io',
  'v1',
  'mutatingwebhookconfigurations',
  'MutatingWebhookConfiguration',
  C,
);
export const VALIDATING_WEBHOOK_CONFIGURATIONS = resourceRef(
  'admissionregistration.k8s.io',
  'v1',
  'validatingwebhookconfigurations',
  'ValidatingWebhookConfiguration',
  C,
);
export const CUSTOM_RESOURCE_DEFINITIONS = resourceRef(
  'apiextensions.k8s.io',
  'v1',
  'customresourcedefinitions',
  'CustomResourceDefinition',
  C,
);
export const API_SERVICES = resourceRef('apiregistration.k8s.io', 'v1', 'apiservices', 'APIService', C);
export const FLOW_SCHEMAS = resourceRef('flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas', 'FlowSchema', C);
export const PRIORITY_LEVEL_CONFIGURATIONS = resourceRef(
  'flowcontrol.apiserver.k8s.io',
  'v1',
  'prioritylevelconfigurations',
  'PriorityLevelConfiguration',
  C,
);
