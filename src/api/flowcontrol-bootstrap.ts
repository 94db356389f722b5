/**
 * The FlowSchemas and PriorityLevelConfigurations kube-apiserver v1.33 creates at start
 * (flowcontrol.apiserver.k8s.io/v1): the mandatory ones (`exempt`, `catch-all`), which always
 * exist with exactly these specs, and the suggested ones, which exist unless an operator took
 * their spec over (see src/flowcontrol/ensure.ts for the `apf.kubernetes.io/autoupdate-spec` rules).
 *
 * The objects are wire data: names, precedences, shares and queue shapes are kube's own.
 */
import type { JsonObject } from './object.js';

/** The annotation that says whether the server keeps an object's spec. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';

/** The group and version of both kinds. */
export const FLOWCONTROL_API_VERSION = 'flowcontrol.apiserver.k8s.io/v1';

/** One bootstrap object: kind, name and spec. */
export interface BootstrapObject {
  readonly kind: 'FlowSchema' | 'PriorityLevelConfiguration';
  readonly name: string;
  readonly spec: JsonObject;
}

type Subject = JsonObject;

const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const kubeSystemServiceAccounts = (...names: string[]): Subject[] =>
  names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } }));

function resourceRule(
  verbs: string[],
  apiGroups: string[],
  resources: string[],
  clusterScope: boolean,
): JsonObject {
  // Every bootstrap rule covers all namespaces; kube omits clusterScope when false.
  return { verbs, apiGroups, resources, ...(clusterScope ? { clusterScope } : {}), namespaces: ['*'] };
}

const nonResourceRule = (verbs: string[], nonResourceURLs: string[]): JsonObject => ({
  verbs,
  nonResourceURLs,
});

/** Everything, cluster-scoped or not, plus every non-resource URL. */
const ALL_RESOURCES = [resourceRule(['*'], ['*'], ['*'], true)];
const ALL_NON_RESOURCES = [nonResourceRule(['*'], ['*'])];

function flowSchema(
  name: string,
  priorityLevel: string,
  matchingPrecedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' | undefined,
  subjects: Subject[],
  resourceRules: JsonObject[],
  nonResourceRules: JsonObject[] = [],
): BootstrapObject {
  const rule: JsonObject = { subjects };
  if (resourceRules.length > 0) rule['resourceRules'] = resourceRules;
  if (nonResourceRules.length > 0) rule['nonResourceRules'] = nonResourceRules;
  return {
    kind: 'FlowSchema',
    name,
    spec: {
      priorityLevelConfiguration: { name: priorityLevel },
      matchingPrecedence,
      ...(distinguisher === undefined ? {} : { distinguisherMethod: { type: distinguisher } }),
      rules: [rule],
    },
  };
}

function queuedLevel(
  name: string,
  nominalConcurrencyShares: number,
  lendablePercent: number,
  queues: number,
  handSize: number,
): BootstrapObject {
  return {
    kind: 'PriorityLevelConfiguration',
    name,
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares,
        lendablePercent,
        limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } },
      },
    },
  };
}

/** `exempt` and `catch-all` levels: always present, specs always kube's. */
export const MANDATORY_PRIORITY_LEVELS: readonly BootstrapObject[] = [
  {
    kind: 'PriorityLevelConfiguration',
    name: 'catch-all',
    spec: {
      type: 'Limited',
      limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } },
    },
  },
  {
    kind: 'PriorityLevelConfiguration',
    name: 'exempt',
    spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  },
];

/** `exempt` (system:masters) and `catch-all` schemas: always present, specs always kube's. */
export const MANDATORY_FLOW_SCHEMAS: readonly BootstrapObject[] = [
  flowSchema('exempt', 'exempt', 1, undefined, groups('system:masters'), ALL_RESOURCES, ALL_NON_RESOURCES),
  flowSchema(
    'catch-all',
    'catch-all',
    10000,
    'ByUser',
    groups('system:unauthenticated', 'system:authenticated'),
    ALL_RESOURCES,
    ALL_NON_RESOURCES,
  ),
];

/** The suggested levels, in kube's order. */
export const SUGGESTED_PRIORITY_LEVELS: readonly BootstrapObject[] = [
  queuedLevel('system', 30, 33, 64, 6),
  queuedLevel('node-high', 40, 25, 64, 6),
  queuedLevel('leader-election', 10, 0, 16, 4),
  queuedLevel('workload-high', 40, 50, 128, 6),
  queuedLevel('workload-low', 100, 90, 128, 6),
  queuedLevel('global-default', 20, 50, 128, 6),
];

const CONTROLLER_MANAGER = 'system:kube-controller-manager';
const SCHEDULER = 'system:kube-scheduler';
const READ_WRITE = ['get', 'create', 'update'];

/** The suggested schemas, in kube's order. */
export const SUGGESTED_FLOW_SCHEMAS: readonly BootstrapObject[] = [
  flowSchema(
    'system-nodes',
    'system',
    500,
    'ByUser',
    groups('system:nodes'),
    ALL_RESOURCES,
    ALL_NON_RESOURCES,
  ),
  flowSchema('system-node-high', 'node-high', 400, 'ByUser', groups('system:nodes'), [
    resourceRule(['*'], [''], ['nodes', 'nodes/status'], true),
    resourceRule(['*'], ['coordination.k8s.io'], ['leases'], false),
  ]),
  flowSchema(
    'probes',
    'exempt',
    2,
    undefined,
    groups('system:unauthenticated', 'system:authenticated'),
    [],
    [nonResourceRule(['get'], ['/healthz', '/readyz', '/livez'])],
  ),
  flowSchema(
    'system-leader-election',
    'leader-election',
    100,
    'ByUser',
    [...users(CONTROLLER_MANAGER, SCHEDULER), ...kubeSystemServiceAccounts('*')],
    [resourceRule(READ_WRITE, ['coordination.k8s.io'], ['leases'], false)],
  ),
  flowSchema('workload-leader-election', 'leader-election', 200, 'ByUser', kubeSystemServiceAccounts('*'), [
    resourceRule(READ_WRITE, [''], ['endpoints', 'configmaps'], false),
    resourceRule(READ_WRITE, ['coordination.k8s.io'], ['leases'], false),
  ]),
  flowSchema(
    'endpoint-controller',
    'workload-high',
    150,
    'ByUser',
    [
      ...users(CONTROLLER_MANAGER),
      ...kubeSystemServiceAccounts('endpoint-controller', 'endpointslicemirroring-controller'),
    ],
    [resourceRule(READ_WRITE, [''], ['endpoints'], false)],
  ),
  flowSchema(
    'kube-controller-manager',
    'workload-high',
    800,
    'ByNamespace',
    users(CONTROLLER_MANAGER),
    ALL_RESOURCES,
    ALL_NON_RESOURCES,
  ),
  flowSchema(
    'kube-scheduler',
    'workload-high',
    800,
    'ByNamespace',
    users(SCHEDULER),
    ALL_RESOURCES,
    ALL_NON_RESOURCES,
  ),
  flowSchema(
    'kube-system-service-accounts',
    'workload-high',
    900,
    'ByNamespace',
    kubeSystemServiceAccounts('*'),
    ALL_RESOURCES,
    ALL_NON_RESOURCES,
  ),
  flowSchema(
    'service-accounts',
    'workload-low',
    9000,
    'ByUser',
    groups('system:serviceaccounts'),
    ALL_RESOURCES,
    ALL_NON_RESOURCES,
  ),
  flowSchema(
    'global-default',
    'global-default',
    9900,
    'ByUser',
    groups('system:unauthenticated', 'system:authenticated'),
    ALL_RESOURCES,
    ALL_NON_RESOURCES,
  ),
];

/** Whether `name` of `kind` is a mandatory object. */
export function isMandatory(kind: BootstrapObject['kind'], name: string): boolean {
  const list = kind === 'FlowSchema' ? MANDATORY_FLOW_SCHEMAS : MANDATORY_PRIORITY_LEVELS;
  return list.some((o) => o.name === name);
}

/** The bootstrap object `kind`/`name`, mandatory or suggested. */
export function bootstrapObject(kind: BootstrapObject['kind'], name: string): BootstrapObject | undefined {
  const lists =
    kind === 'FlowSchema'
      ? [MANDATORY_FLOW_SCHEMAS, SUGGESTED_FLOW_SCHEMAS]
      : [MANDATORY_PRIORITY_LEVELS, SUGGESTED_PRIORITY_LEVELS];
  for (const list of lists) {
    const found = list.find((o) => o.name === name);
    if (found !== undefined) return found;
  }
  return undefined;
}
