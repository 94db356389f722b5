/**
 * kube-apiserver v1.33's bootstrap APF objects as `kubectl get -o json` shows their specs,
 * transcribed independently of src/api/flowcontrol-bootstrap.ts from kube's
 * staging/src/k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go.
 */
const all = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] };
const allUrls = { verbs: ['*'], nonResourceURLs: ['*'] };
const everyone = [
  { kind: 'Group', group: { name: 'system:unauthenticated' } },
  { kind: 'Group', group: { name: 'system:authenticated' } },
];
const ksa = (name: string) => ({
  kind: 'ServiceAccount',
  serviceAccount: { name, namespace: 'kube-system' },
});
const user = (name: string) => ({ kind: 'User', user: { name } });
const queued = (shares: number, lendable: number, queues: number, handSize: number) => ({
  type: 'Limited',
  limited: {
    nominalConcurrencyShares: shares,
    lendablePercent: lendable,
    limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit: 50 } },
  },
});
const fs = (pl: string, precedence: number, by: string | undefined, rule: Record<string, unknown>) => ({
  priorityLevelConfiguration: { name: pl },
  matchingPrecedence: precedence,
  ...(by === undefined ? {} : { distinguisherMethod: { type: by } }),
  rules: [rule],
});

/** PriorityLevelConfiguration specs by name. */
export const KUBE_PRIORITY_LEVELS: Record<string, unknown> = {
  exempt: { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } },
  'catch-all': {
    type: 'Limited',
    limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } },
  },
  system: queued(30, 33, 64, 6),
  'node-high': queued(40, 25, 64, 6),
  'leader-election': queued(10, 0, 16, 4),
  'workload-high': queued(40, 50, 128, 6),
  'workload-low': queued(100, 90, 128, 6),
  'global-default': queued(20, 50, 128, 6),
};

/** FlowSchema specs by name. */
export const KUBE_FLOW_SCHEMAS: Record<string, unknown> = {
  exempt: fs('exempt', 1, undefined, {
    subjects: [{ kind: 'Group', group: { name: 'system:masters' } }],
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
  probes: fs('exempt', 2, undefined, {
    subjects: everyone,
    nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }],
  }),
  'system-leader-election': fs('leader-election', 100, 'ByUser', {
    subjects: [user('system:kube-controller-manager'), user('system:kube-scheduler'), ksa('*')],
    resourceRules: [
      {
        verbs: ['get', 'create', 'update'],
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        namespaces: ['*'],
      },
    ],
  }),
  'endpoint-controller': fs('workload-high', 150, 'ByUser', {
    subjects: [
      user('system:kube-controller-manager'),
      ksa('endpoint-controller'),
      ksa('endpointslicemirroring-controller'),
    ],
    resourceRules: [
      { verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] },
    ],
  }),
  'workload-leader-election': fs('leader-election', 200, 'ByUser', {
    subjects: [ksa('*')],
    resourceRules: [
      {
        verbs: ['get', 'create', 'update'],
        apiGroups: [''],
        resources: ['endpoints', 'configmaps'],
        namespaces: ['*'],
      },
      {
        verbs: ['get', 'create', 'update'],
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        namespaces: ['*'],
      },
    ],
  }),
  'system-node-high': fs('node-high', 400, 'ByUser', {
    subjects: [{ kind: 'Group', group: { name: 'system:nodes' } }],
    resourceRules: [
      {
        verbs: ['*'],
        apiGroups: [''],
        resources: ['nodes', 'nodes/status'],
        clusterScope: true,
        namespaces: ['*'],
      },
      { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
    ],
  }),
  'system-nodes': fs('system', 500, 'ByUser', {
    subjects: [{ kind: 'Group', group: { name: 'system:nodes' } }],
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
  'kube-controller-manager': fs('workload-high', 800, 'ByNamespace', {
    subjects: [user('system:kube-controller-manager')],
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
  'kube-scheduler': fs('workload-high', 800, 'ByNamespace', {
    subjects: [user('system:kube-scheduler')],
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
  'kube-system-service-accounts': fs('workload-high', 900, 'ByNamespace', {
    subjects: [ksa('*')],
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
  'service-accounts': fs('workload-low', 9000, 'ByUser', {
    subjects: [{ kind: 'Group', group: { name: 'system:serviceaccounts' } }],
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
  'global-default': fs('global-default', 9900, 'ByUser', {
    subjects: everyone,
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
  'catch-all': fs('catch-all', 10000, 'ByUser', {
    subjects: everyone,
    resourceRules: [all],
    nonResourceRules: [allUrls],
  }),
};
