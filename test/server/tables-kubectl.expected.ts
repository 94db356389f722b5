/**
 * What kube-apiserver's printers (pkg/printers/internalversion/printers.go, Kubernetes 1.33) make
 * `kubectl get` print for the objects of `fixtures/manifests/tables.yaml`: the header line and the
 * row of the sample object, plain and with `-o wide`. Headers are kubectl's upper-cased column
 * names; a `RegExp` cell stands for a time that depends on when the test runs (ages, "last seen").
 */

/** One expected cell: exact text, or a pattern for a time-dependent value. */
export type Cell = string | RegExp;

/** The expected output of `kubectl get <resource>` for one kind. */
export interface TableCase {
  /** The resource as given to kubectl (plural, with group where kubectl needs it). */
  readonly resource: string;
  /** Namespace to pass with `-n`, or undefined for cluster-scoped kinds. */
  readonly namespace?: string;
  /** Name of the sample object (to find its row among others, e.g. default service accounts). */
  readonly name: string;
  /** Column and cell that find the row in a table without a `NAME` column (plain events). */
  readonly rowKey?: readonly [column: string, value: string];
  readonly header: readonly string[];
  readonly row: readonly Cell[];
  readonly wideHeader: readonly string[];
  readonly wideRow: readonly Cell[];
  /** Edge-case samples of the same kind, printed in the same tables. */
  readonly more?: readonly ExtraRow[];
}

/** Another sample's row in a {@link TableCase}'s tables. */
export interface ExtraRow {
  readonly name: string;
  readonly rowKey?: readonly [column: string, value: string];
  readonly row: readonly Cell[];
  readonly wideRow: readonly Cell[];
}

/** An age as kube's `HumanDuration` prints it for a few seconds up to some years. */
const AGE = /^\d+[smhdy](\d+[smhd])?$/;
/** `Created At`: a date cell, printed by kubectl as RFC 3339 in UTC. */
const CREATED = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
const NS = 'tables';

/** Cases whose wide form only appends columns. */
function appended(
  c: Omit<TableCase, 'wideHeader' | 'wideRow'>,
  wideHeader: readonly string[] = [],
  wideCells: readonly Cell[] = [],
  more: readonly ExtraRow[] = [],
): TableCase {
  return { ...c, wideHeader: [...c.header, ...wideHeader], wideRow: [...c.row, ...wideCells], more };
}

/** Another sample whose wide row appends `wideCells` to `row`. */
function extra(name: string, row: readonly Cell[], wideCells: readonly Cell[] = []): ExtraRow {
  return { name, row, wideRow: [...row, ...wideCells] };
}

const WORKLOAD_WIDE = ['CONTAINERS', 'IMAGES', 'SELECTOR'];
const PV_COLUMNS = [
  'NAME',
  'CAPACITY',
  'ACCESS MODES',
  'RECLAIM POLICY',
  'STATUS',
  'CLAIM',
  'STORAGECLASS',
  'VOLUMEATTRIBUTESCLASS',
  'REASON',
  'AGE',
];
const PVC_COLUMNS = [
  'NAME',
  'STATUS',
  'VOLUME',
  'CAPACITY',
  'ACCESS MODES',
  'STORAGECLASS',
  'VOLUMEATTRIBUTESCLASS',
  'AGE',
];
const PROBE_MESSAGE = 'Liveness probe failed: HTTP probe failed with statuscode: 500';
const EVENT_MESSAGE = 'Back-off restarting failed container sidecar in pod web-0_tables';

/** Every kind of issue 5's point 3, in the order the test reports them. */
export const TABLE_CASES: readonly TableCase[] = [
  appended(
    {
      resource: 'pods',
      namespace: NS,
      name: 'web-0',
      header: ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
      row: ['web-0', '1/2', 'CrashLoopBackOff', '4', AGE],
    },
    ['IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'],
    ['10.244.0.5', 'node-1', '<none>', '<none>'],
    [
      extra('init-1', ['init-1', '0/1', 'Init:0/1', '0', AGE], ['<none>', '<none>', '<none>', '<none>']),
      extra('done-1', ['done-1', '0/1', 'Completed', '0', AGE], ['<none>', '<none>', 'node-2', '1/1']),
      // The last restart's time shows as "(<age> ago)".
      extra(
        'crash-1',
        ['crash-1', '0/1', 'Error', /^3 \(\d+d ago\)$/, AGE],
        ['10.244.0.9', 'node-1', '<none>', '<none>'],
      ),
      extra(
        'terminating-1',
        ['terminating-1', '0/1', 'Terminating', '0', AGE],
        ['<none>', '<none>', '<none>', '<none>'],
      ),
      // A started sidecar (restartable init container) counts among the ready containers.
      extra(
        'sidecar-1',
        ['sidecar-1', '2/2', 'Running', '1', AGE],
        ['10.244.0.10', 'node-1', '<none>', '<none>'],
      ),
      extra(
        'gated-1',
        ['gated-1', '0/1', 'SchedulingGated', '0', AGE],
        ['<none>', '<none>', '<none>', '<none>'],
      ),
      // One container completed, one running, and the pod not Ready.
      extra(
        'mixed-1',
        ['mixed-1', '1/2', 'NotReady', '0', AGE],
        ['10.244.0.11', 'node-1', '<none>', '<none>'],
      ),
      // The pod's own reason wins over its phase.
      extra('evicted-1', ['evicted-1', '0/1', 'Evicted', '0', AGE], ['<none>', '<none>', '<none>', '<none>']),
      // Terminated without a reason: the first container's signal (or exit code) is shown.
      extra('killed-1', ['killed-1', '0/2', 'Signal:9', '0', AGE], ['<none>', '<none>', '<none>', '<none>']),
      extra(
        'init-crash-1',
        ['init-crash-1', '0/1', 'Init:CrashLoopBackOff', '2', AGE],
        ['<none>', '<none>', '<none>', '<none>'],
      ),
    ],
  ),
  appended(
    {
      resource: 'nodes',
      name: 'node-1',
      header: ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'],
      row: ['node-1', 'Ready,SchedulingDisabled', 'control-plane', AGE, 'v1.33.0'],
    },
    ['INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME'],
    ['10.0.0.10', '203.0.113.10', 'Debian GNU/Linux 12 (bookworm)', '6.1.0-18-amd64', 'containerd://1.7.13'],
    [
      // No Ready condition, no roles, no node info.
      extra(
        'node-2',
        ['node-2', 'Unknown', '<none>', AGE, ''],
        ['<none>', '<none>', '<unknown>', '<unknown>', '<unknown>'],
      ),
      // Roles from both label forms, sorted.
      extra(
        'node-3',
        ['node-3', 'Unknown,SchedulingDisabled', 'infra,worker', AGE, ''],
        ['<none>', '<none>', '<unknown>', '<unknown>', '<unknown>'],
      ),
    ],
  ),
  appended({ resource: 'namespaces', name: NS, header: ['NAME', 'STATUS', 'AGE'], row: [NS, 'Active', AGE] }),
  appended(
    {
      resource: 'services',
      namespace: NS,
      name: 'web',
      header: ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'],
      row: ['web', 'LoadBalancer', '10.96.0.42', '203.0.113.7', '80:30080/TCP,443:30443/TCP', AGE],
    },
    ['SELECTOR'],
    ['app=web'],
    [
      extra('db', ['db', 'ClusterIP', 'None', '<none>', '5432/TCP', AGE], ['app=db']),
      extra('ext', ['ext', 'ExternalName', '<none>', 'db.example.com', '<none>', AGE], ['<none>']),
      // A load balancer not provisioned yet.
      extra('lb', ['lb', 'LoadBalancer', '10.96.0.43', '<pending>', '8080:31080/TCP', AGE], ['app=web']),
      extra(
        'np',
        ['np', 'NodePort', '10.96.0.44', '198.51.100.1', '80:30081/TCP,53:30053/UDP', AGE],
        ['app=web'],
      ),
    ],
  ),
  appended({
    resource: 'endpoints',
    namespace: NS,
    name: 'web',
    header: ['NAME', 'ENDPOINTS', 'AGE'],
    row: ['web', '10.244.0.5:8080,10.244.0.6:8080', AGE],
    more: [
      extra('empty', ['empty', '<none>', AGE]),
      extra('many', ['many', '10.0.1.1:80,10.0.1.2:80,10.0.1.3:80 + 1 more...', AGE]),
      // Only ready addresses count.
      extra('warming', ['warming', '<none>', AGE]),
      // A subset without ports lists bare addresses.
      extra('headless', ['headless', '10.0.3.1,10.0.3.2', AGE]),
    ],
  }),
  appended({
    resource: 'configmaps',
    namespace: NS,
    name: 'web-config',
    header: ['NAME', 'DATA', 'AGE'],
    // data and binaryData entries both count.
    row: ['web-config', '3', AGE],
  }),
  appended({
    resource: 'secrets',
    namespace: NS,
    name: 'web-tls',
    header: ['NAME', 'TYPE', 'DATA', 'AGE'],
    row: ['web-tls', 'kubernetes.io/tls', '2', AGE],
    // stringData is merged into data when the secret is written.
    more: [extra('creds', ['creds', 'Opaque', '2', AGE])],
  }),
  appended({
    resource: 'serviceaccounts',
    namespace: NS,
    name: 'builder',
    header: ['NAME', 'SECRETS', 'AGE'],
    row: ['builder', '1', AGE],
  }),
  appended(
    {
      resource: 'deployments',
      namespace: NS,
      name: 'web',
      header: ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'],
      row: ['web', '2/3', '3', '2', AGE],
    },
    WORKLOAD_WIDE,
    ['app,sidecar', 'nginx:1.25,busybox:1.36', 'app=web'],
    [extra('api', ['api', '0/0', '0', '0', AGE], ['api', 'example/api:2', 'app=api,tier in (backend)'])],
  ),
  appended(
    {
      resource: 'replicasets',
      namespace: NS,
      name: 'web-5d9c7b',
      header: ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE'],
      row: ['web-5d9c7b', '3', '3', '2', AGE],
    },
    WORKLOAD_WIDE,
    ['app', 'nginx:1.25', 'app=web,pod-template-hash=5d9c7b'],
  ),
  appended(
    {
      resource: 'statefulsets',
      namespace: NS,
      name: 'db',
      header: ['NAME', 'READY', 'AGE'],
      row: ['db', '1/2', AGE],
    },
    ['CONTAINERS', 'IMAGES'],
    ['postgres', 'postgres:16'],
  ),
  appended(
    {
      resource: 'daemonsets',
      namespace: NS,
      name: 'agent',
      header: ['NAME', 'DESIRED', 'CURRENT', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'NODE SELECTOR', 'AGE'],
      row: ['agent', '3', '3', '2', '3', '2', 'kubernetes.io/os=linux', AGE],
    },
    WORKLOAD_WIDE,
    ['agent', 'fluent/fluent-bit:3.0', 'app=agent'],
  ),
  appended(
    {
      resource: 'jobs',
      namespace: NS,
      name: 'migrate',
      header: ['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE'],
      // completionTime - startTime = 65 s.
      row: ['migrate', 'Complete', '1/1', '65s', AGE],
    },
    WORKLOAD_WIDE,
    [
      'migrate',
      'migrate/migrate:v4',
      'batch.kubernetes.io/controller-uid=9a6f3f8e-0000-4000-8000-000000000001',
    ],
    [
      extra(
        'batch-run',
        ['batch-run', 'Running', '1/3', AGE, AGE],
        ['work', 'busybox:1.36', 'job=batch-run'],
      ),
      // No completions and parallelism 2; suspended before it started, so no duration.
      extra('paused', ['paused', 'Suspended', '0/1 of 2', '', AGE], ['work', 'busybox:1.36', 'job=paused']),
      extra('broken', ['broken', 'Failed', '0/1', AGE, AGE], ['work', 'busybox:1.36', 'job=broken']),
    ],
  ),
  appended(
    {
      resource: 'cronjobs',
      namespace: NS,
      name: 'backup',
      header: ['NAME', 'SCHEDULE', 'TIMEZONE', 'SUSPEND', 'ACTIVE', 'LAST SCHEDULE', 'AGE'],
      row: ['backup', '*/5 * * * *', 'Etc/UTC', 'False', '1', AGE, AGE],
    },
    WORKLOAD_WIDE,
    // The job template has no selector of its own.
    ['backup', 'restic/restic:0.16', '<none>'],
    [
      extra(
        'nightly',
        ['nightly', '0 3 * * *', '<none>', 'True', '0', '<none>', AGE],
        ['report', 'example/report:1', '<none>'],
      ),
    ],
  ),
  appended({
    resource: 'ingresses',
    namespace: NS,
    name: 'web',
    header: ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE'],
    row: ['web', 'nginx', 'example.com,www.example.com', '203.0.113.8', '80, 443', AGE],
    // No class, a rule for any host, no load balancer yet.
    more: [
      extra('bare', ['bare', '<none>', '*', '', '80', AGE]),
      extra('multi', [
        'multi',
        '<none>',
        'a.example.com,b.example.com,c.example.com + 1 more...',
        '',
        '80',
        AGE,
      ]),
    ],
  }),
  {
    resource: 'events',
    namespace: NS,
    name: 'web-0.17a0c1d2e3f4a5b6',
    rowKey: ['OBJECT', 'pod/web-0'],
    header: ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
    row: [AGE, 'Warning', 'BackOff', 'pod/web-0', EVENT_MESSAGE],
    // The wide columns sit between the others here, and the name comes last.
    wideHeader: [
      'LAST SEEN',
      'TYPE',
      'REASON',
      'OBJECT',
      'SUBOBJECT',
      'SOURCE',
      'MESSAGE',
      'FIRST SEEN',
      'COUNT',
      'NAME',
    ],
    wideRow: [
      AGE,
      'Warning',
      'BackOff',
      'pod/web-0',
      'spec.containers{sidecar}',
      'kubelet, node-1',
      EVENT_MESSAGE,
      AGE,
      '5',
      'web-0.17a0c1d2e3f4a5b6',
    ],
    more: [
      {
        // events.k8s.io style: eventTime only, reporting controller instead of source, no count.
        name: 'web.scaled',
        rowKey: ['OBJECT', 'deployment/web'],
        row: [AGE, 'Normal', 'ScalingReplicaSet', 'deployment/web', 'Scaled up replica set web-5d9c7b to 3'],
        wideRow: [
          AGE,
          'Normal',
          'ScalingReplicaSet',
          'deployment/web',
          '',
          'deployment-controller, kcm-7d9f',
          'Scaled up replica set web-5d9c7b to 3',
          AGE,
          '1',
          'web.scaled',
        ],
      },
      {
        // A series: its last observation and count.
        name: 'crash-1.series',
        rowKey: ['OBJECT', 'pod/crash-1'],
        row: [AGE, 'Warning', 'Unhealthy', 'pod/crash-1', PROBE_MESSAGE],
        wideRow: [
          AGE,
          'Warning',
          'Unhealthy',
          'pod/crash-1',
          '',
          'kubelet, node-1',
          PROBE_MESSAGE,
          AGE,
          '7',
          'crash-1.series',
        ],
      },
    ],
  },
  appended({
    resource: 'leases',
    namespace: NS,
    name: 'web-leader',
    header: ['NAME', 'HOLDER', 'AGE'],
    row: ['web-leader', 'web-0_7f3c', AGE],
  }),
  appended({
    resource: 'roles',
    namespace: NS,
    name: 'pod-reader',
    header: ['NAME', 'CREATED AT'],
    row: ['pod-reader', CREATED],
  }),
  appended({
    resource: 'clusterroles',
    name: 'widget-viewer',
    header: ['NAME', 'CREATED AT'],
    row: ['widget-viewer', CREATED],
  }),
  appended(
    {
      resource: 'rolebindings',
      namespace: NS,
      name: 'read-pods',
      header: ['NAME', 'ROLE', 'AGE'],
      row: ['read-pods', 'Role/pod-reader', AGE],
    },
    ['USERS', 'GROUPS', 'SERVICEACCOUNTS'],
    ['jane', 'devs', 'tables/builder'],
  ),
  appended(
    {
      resource: 'clusterrolebindings',
      name: 'view-widgets',
      header: ['NAME', 'ROLE', 'AGE'],
      row: ['view-widgets', 'ClusterRole/widget-viewer', AGE],
    },
    ['USERS', 'GROUPS', 'SERVICEACCOUNTS'],
    ['', 'system:authenticated', 'tables/builder'],
  ),
  appended(
    {
      resource: 'persistentvolumes',
      name: 'pv-data',
      header: PV_COLUMNS,
      // No volume attributes class prints as <unset>; no reason prints as an empty cell.
      row: ['pv-data', '10Gi', 'RWO', 'Retain', 'Bound', 'tables/data', 'fast', '<unset>', '', AGE],
    },
    ['VOLUMEMODE'],
    ['Filesystem'],
  ),
  appended(
    {
      resource: 'persistentvolumeclaims',
      namespace: NS,
      name: 'data',
      header: PVC_COLUMNS,
      row: ['data', 'Bound', 'pv-data', '10Gi', 'RWO', 'fast', '<unset>', AGE],
    },
    ['VOLUMEMODE'],
    ['Filesystem'],
    [extra('claim-pending', ['claim-pending', 'Pending', '', '', '', 'fast', '<unset>', AGE], ['Block'])],
  ),
  appended({
    resource: 'storageclasses',
    name: 'fast (default)',
    header: ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE'],
    row: ['fast (default)', 'ebs.csi.aws.com', 'Delete', 'WaitForFirstConsumer', 'true', AGE],
  }),
  // CRDs have no printer of their own in kube-apiserver: the default Name / Created At table.
  appended({
    resource: 'customresourcedefinitions',
    name: 'widgets.example.com',
    header: ['NAME', 'CREATED AT'],
    row: ['widgets.example.com', CREATED],
  }),
];
