import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object.js';
import { printerFor } from '../../src/table/index.js';

const now = new Date('2024-05-01T12:00:00Z');
const created = '2024-04-30T12:00:00Z'; // 24h before now

function cells(
  group: string,
  resource: string,
  object: Omit<KubeObject, 'metadata'> & { metadata?: object },
): unknown[] {
  const full = { ...object, metadata: { name: 'x', creationTimestamp: created, ...object.metadata } };
  return printerFor(group, resource).cells(full, now);
}

const template = {
  spec: {
    containers: [
      { name: 'app', image: 'nginx:1' },
      { name: 'log', image: 'fluent' },
    ],
  },
};

describe('apps', () => {
  it('prints a deployment with a selector string', () => {
    const d = {
      spec: {
        replicas: 3,
        selector: {
          matchLabels: { app: 'web' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['prod', 'canary'] },
            { key: 'legacy', operator: 'DoesNotExist' },
          ],
        },
        template,
      },
      status: { readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2 },
    };
    expect(cells('apps', 'deployments', d)).toEqual([
      'x',
      '2/3',
      3,
      2,
      '24h',
      'app,log',
      'nginx:1,fluent',
      'app=web,!legacy,tier in (canary,prod)',
    ]);
  });

  it('defaults desired replicas to 1 and prints empty and invalid deployment selectors as kube does', () => {
    expect(cells('apps', 'deployments', { spec: {} }).slice(1, 4)).toEqual(['0/1', 0, 0]);
    expect(cells('apps', 'deployments', { spec: { selector: {} } })[7]).toBe('');
    expect(
      cells('apps', 'deployments', {
        spec: { selector: { matchExpressions: [{ key: 'a', operator: 'Bogus' }] } },
      })[7],
    ).toBe('<invalid>');
  });

  it('prints replica sets with <none> and <error> selectors', () => {
    const rs = { spec: { replicas: 0, template }, status: { replicas: 1, readyReplicas: 0 } };
    expect(cells('apps', 'replicasets', rs)).toEqual([
      'x',
      0,
      1,
      0,
      '24h',
      'app,log',
      'nginx:1,fluent',
      '<none>',
    ]);
    const bad = { spec: { selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } } };
    expect(cells('apps', 'replicasets', bad)[7]).toBe('<error>');
    const exists = {
      spec: {
        selector: {
          matchExpressions: [
            { key: 'a', operator: 'Exists' },
            { key: 'b', operator: 'NotIn', values: ['z', 'y'] },
          ],
        },
      },
    };
    expect(cells('apps', 'replicasets', exists)[7]).toBe('a,b notin (y,z)');
  });

  it('prints stateful sets and daemon sets', () => {
    expect(
      cells('apps', 'statefulsets', { spec: { replicas: 2, template }, status: { readyReplicas: 1 } }),
    ).toEqual(['x', '1/2', '24h', 'app,log', 'nginx:1,fluent']);
    const ds = {
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { spec: { ...template.spec, nodeSelector: { 'kubernetes.io/os': 'linux' } } },
      },
      status: {
        desiredNumberScheduled: 3,
        currentNumberScheduled: 3,
        numberReady: 2,
        updatedNumberScheduled: 1,
        numberAvailable: 2,
      },
    };
    expect(cells('apps', 'daemonsets', ds)).toEqual([
      'x',
      3,
      3,
      2,
      1,
      2,
      'kubernetes.io/os=linux',
      '24h',
      'app,log',
      'nginx:1,fluent',
      'app=agent',
    ]);
    expect(cells('apps', 'daemonsets', {})[6]).toBe('<none>');
  });

  it('prints the controller of a revision as kind.group/name', () => {
    const owners = [
      { apiVersion: 'v1', kind: 'Pod', name: 'other', controller: false },
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', controller: true },
    ];
    expect(
      cells('apps', 'controllerrevisions', { metadata: { ownerReferences: owners }, revision: 4 }),
    ).toEqual(['x', 'statefulset.apps/db', 4, '24h']);
    expect(cells('apps', 'controllerrevisions', {})[1]).toBe('<none>');
  });
});

describe('batch', () => {
  it('prints job status, completions and duration', () => {
    const job = {
      spec: {
        completions: 3,
        parallelism: 2,
        selector: { matchLabels: { 'batch.kubernetes.io/job-name': 'x' } },
        template,
      },
      status: {
        succeeded: 3,
        startTime: '2024-05-01T11:00:00Z',
        completionTime: '2024-05-01T11:02:05Z',
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True' },
          { type: 'Complete', status: 'True' },
        ],
      },
    };
    expect(cells('batch', 'jobs', job)).toEqual([
      'x',
      'Complete',
      '3/3',
      '2m5s',
      '24h',
      'app,log',
      'nginx:1,fluent',
      'batch.kubernetes.io/job-name=x',
    ]);
  });

  it('prints running, failed, suspended, terminating jobs and work-queue completions', () => {
    const running = { spec: { parallelism: 4 }, status: { startTime: '2024-05-01T11:30:00Z' } };
    expect(cells('batch', 'jobs', running).slice(1, 4)).toEqual(['Running', '0/1 of 4', '30m']);
    expect(cells('batch', 'jobs', { spec: { parallelism: 1 } }).slice(1, 4)).toEqual(['Running', '0/1', '']);
    const failed = {
      status: {
        conditions: [
          { type: 'FailureTarget', status: 'True' },
          { type: 'Failed', status: 'True' },
        ],
      },
    };
    expect(cells('batch', 'jobs', failed)[1]).toBe('Failed');
    expect(
      cells('batch', 'jobs', { status: { conditions: [{ type: 'FailureTarget', status: 'True' }] } })[1],
    ).toBe('FailureTarget');
    const suspended = { status: { conditions: [{ type: 'Suspended', status: 'True' }] } };
    expect(cells('batch', 'jobs', suspended)[1]).toBe('Suspended');
    expect(cells('batch', 'jobs', { ...suspended, metadata: { deletionTimestamp: created } })[1]).toBe(
      'Terminating',
    );
    expect(
      cells('batch', 'jobs', { status: { conditions: [{ type: 'Complete', status: 'False' }] } })[1],
    ).toBe('Running');
  });

  it('prints cron jobs', () => {
    const cj = {
      spec: {
        schedule: '*/5 * * * *',
        timeZone: 'Etc/UTC',
        suspend: false,
        jobTemplate: { spec: { template } },
      },
      status: { active: [{ name: 'x-1' }], lastScheduleTime: '2024-05-01T11:55:00Z' },
    };
    expect(cells('batch', 'cronjobs', cj)).toEqual([
      'x',
      '*/5 * * * *',
      'Etc/UTC',
      'False',
      1,
      '5m',
      '24h',
      'app,log',
      'nginx:1,fluent',
      '<none>',
    ]);
    expect(cells('batch', 'cronjobs', { spec: {} }).slice(2, 6)).toEqual(['<none>', '<unset>', 0, '<none>']);
  });
});

describe('networking and discovery', () => {
  it('prints an ingress', () => {
    const ing = {
      spec: {
        ingressClassName: 'nginx',
        rules: [{ host: 'a.example.com' }, {}, { host: 'b.example.com' }],
        tls: [{ hosts: ['a.example.com'] }],
      },
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.10' }, { hostname: 'lb.example.com' }] } },
    };
    expect(cells('networking.k8s.io', 'ingresses', ing)).toEqual([
      'x',
      'nginx',
      'a.example.com,b.example.com',
      '203.0.113.10,lb.example.com',
      '80, 443',
      '24h',
    ]);
  });

  it('prints ingress host overflow as kube counts it, and * without hosts', () => {
    const rules = ['a', 'b', '', 'c', 'd', 'e'].map((host) => (host === '' ? {} : { host }));
    expect(cells('networking.k8s.io', 'ingresses', { spec: { rules } }).slice(1, 5)).toEqual([
      '<none>',
      'a,b,c + 3 more...',
      '',
      '80',
    ]);
    expect(cells('networking.k8s.io', 'ingresses', { spec: { rules: [{}] } })[2]).toBe('*');
  });

  it('prints ingress classes, network policies, service CIDRs and IP addresses', () => {
    const ic = {
      spec: {
        controller: 'k8s.io/ingress-nginx',
        parameters: { apiGroup: 'k8s.example.com', kind: 'Params', name: 'p' },
      },
    };
    expect(cells('networking.k8s.io', 'ingressclasses', ic)).toEqual([
      'x',
      'k8s.io/ingress-nginx',
      'Params.k8s.example.com/p',
      '24h',
    ]);
    expect(cells('networking.k8s.io', 'ingressclasses', { spec: {} })[2]).toBe('<none>');
    expect(cells('networking.k8s.io', 'networkpolicies', { spec: { podSelector: {} } })).toEqual([
      'x',
      '<none>',
      '24h',
    ]);
    expect(
      cells('networking.k8s.io', 'networkpolicies', {
        spec: { podSelector: { matchLabels: { role: 'db' } } },
      })[1],
    ).toBe('role=db');
    expect(
      cells('networking.k8s.io', 'servicecidrs', { spec: { cidrs: ['10.96.0.0/12', 'fd00::/108'] } })[1],
    ).toBe('10.96.0.0/12,fd00::/108');
    const ip = {
      spec: { parentRef: { group: '', resource: 'services', namespace: 'default', name: 'kubernetes' } },
    };
    expect(cells('networking.k8s.io', 'ipaddresses', ip)).toEqual(['x', 'services/default/kubernetes']);
  });

  it('prints endpoint slices', () => {
    const slice = {
      addressType: 'IPv4',
      ports: [{ port: 80 }, { name: 'metrics' }, {}, { port: 9000 }],
      endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2', '10.0.0.3'] }],
    };
    expect(cells('discovery.k8s.io', 'endpointslices', slice)).toEqual([
      'x',
      'IPv4',
      '80,metrics,* + 1 more...',
      '10.0.0.1,10.0.0.2,10.0.0.3',
      '24h',
    ]);
    expect(cells('discovery.k8s.io', 'endpointslices', {}).slice(2, 4)).toEqual(['<unset>', '<unset>']);
  });
});

describe('rbac', () => {
  it('prints role bindings with subjects by kind', () => {
    const rb = {
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', name: 'alice' },
        { kind: 'Group', name: 'devs' },
        { kind: 'ServiceAccount', namespace: 'ci', name: 'runner' },
        { kind: 'User', name: 'bob' },
      ],
    };
    expect(cells('rbac.authorization.k8s.io', 'rolebindings', rb)).toEqual([
      'x',
      'ClusterRole/view',
      '24h',
      'alice, bob',
      'devs',
      'ci/runner',
    ]);
    expect(cells('rbac.authorization.k8s.io', 'clusterrolebindings', {}).slice(1)).toEqual([
      '/',
      '24h',
      '',
      '',
      '',
    ]);
  });
});

describe('storage', () => {
  it('prints storage classes with defaults and the default marker', () => {
    const sc = {
      metadata: { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'csi.example.com',
    };
    expect(cells('storage.k8s.io', 'storageclasses', sc)).toEqual([
      'x (default)',
      'csi.example.com',
      'Delete',
      'Immediate',
      false,
      '24h',
    ]);
    const custom = {
      provisioner: 'p',
      reclaimPolicy: 'Retain',
      volumeBindingMode: 'WaitForFirstConsumer',
      allowVolumeExpansion: true,
    };
    expect(cells('storage.k8s.io', 'storageclasses', custom).slice(0, 5)).toEqual([
      'x',
      'p',
      'Retain',
      'WaitForFirstConsumer',
      true,
    ]);
  });

  it('prints CSI drivers with their defaults', () => {
    expect(cells('storage.k8s.io', 'csidrivers', { spec: {} })).toEqual([
      'x',
      true,
      false,
      false,
      '<unset>',
      false,
      '<none>',
      '24h',
    ]);
    const driver = {
      spec: {
        attachRequired: false,
        podInfoOnMount: true,
        storageCapacity: true,
        tokenRequests: [{ audience: 'vault' }, { audience: 'gcp' }],
        requiresRepublish: true,
        volumeLifecycleModes: ['Persistent', 'Ephemeral'],
      },
    };
    expect(cells('storage.k8s.io', 'csidrivers', driver)).toEqual([
      'x',
      false,
      true,
      true,
      'vault,gcp',
      true,
      'Persistent,Ephemeral',
      '24h',
    ]);
  });

  it('prints CSI nodes, volume attachments and storage capacities', () => {
    expect(
      cells('storage.k8s.io', 'csinodes', { spec: { drivers: [{ name: 'a' }, { name: 'b' }] } }),
    ).toEqual(['x', 2, '24h']);
    const va = {
      spec: { attacher: 'csi.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv-1' } },
      status: { attached: true },
    };
    expect(cells('storage.k8s.io', 'volumeattachments', va)).toEqual([
      'x',
      'csi.example.com',
      'pv-1',
      'n1',
      true,
      '24h',
    ]);
    expect(
      cells('storage.k8s.io', 'csistoragecapacities', { storageClassName: 'fast', capacity: '100Gi' }),
    ).toEqual(['x', 'fast', '100Gi']);
    expect(cells('storage.k8s.io', 'csistoragecapacities', {})[2]).toBe('<unset>');
  });
});

describe('other groups', () => {
  it('prints leases', () => {
    expect(cells('coordination.k8s.io', 'leases', { spec: { holderIdentity: 'node-1' } })).toEqual([
      'x',
      'node-1',
      '24h',
    ]);
    expect(cells('coordination.k8s.io', 'leases', {})[1]).toBe('');
  });

  it('prints pod disruption budgets', () => {
    expect(
      cells('policy', 'poddisruptionbudgets', {
        spec: { minAvailable: 2 },
        status: { disruptionsAllowed: 1 },
      }),
    ).toEqual(['x', '2', 'N/A', 1, '24h']);
    expect(cells('policy', 'poddisruptionbudgets', { spec: { maxUnavailable: '25%' } }).slice(1, 4)).toEqual([
      'N/A',
      '25%',
      0,
    ]);
  });

  it('prints horizontal pod autoscalers', () => {
    const hpa = {
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
          },
          {
            type: 'Resource',
            resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } },
          },
          { type: 'Pods', pods: { metric: { name: 'qps' }, target: { averageValue: '10' } } },
        ],
      },
      status: {
        currentReplicas: 3,
        currentMetrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', current: { averageUtilization: 45, averageValue: '90m' } },
          },
        ],
      },
    };
    expect(cells('autoscaling', 'horizontalpodautoscalers', hpa)).toEqual([
      'x',
      'Deployment/web',
      'cpu: 45%/80%, memory: <unknown>/500Mi + 1 more...',
      '2',
      10,
      3,
      '24h',
    ]);
    const v1 = {
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        maxReplicas: 3,
        targetCPUUtilizationPercentage: 50,
      },
    };
    expect(cells('autoscaling', 'horizontalpodautoscalers', v1).slice(2, 4)).toEqual([
      'cpu: <unknown>/50%',
      '<unset>',
    ]);
    const external = {
      spec: {
        metrics: [{ type: 'External', external: { target: { type: 'AverageValue', averageValue: '30' } } }],
      },
      status: { currentMetrics: [{ type: 'External', external: { current: { averageValue: '12' } } }] },
    };
    expect(cells('autoscaling', 'horizontalpodautoscalers', external)[2]).toBe('12/30 (avg)');
    expect(cells('autoscaling', 'horizontalpodautoscalers', { spec: { metrics: [] } })[2]).toBe('<none>');
  });

  it('prints priority classes and runtime classes', () => {
    expect(
      cells('scheduling.k8s.io', 'priorityclasses', {
        value: 1000,
        globalDefault: true,
        preemptionPolicy: 'Never',
      }),
    ).toEqual(['x', 1000, true, '24h', 'Never']);
    expect(cells('node.k8s.io', 'runtimeclasses', { handler: 'runc' })).toEqual(['x', 'runc', '24h']);
  });

  it('prints webhook configurations and admission policies', () => {
    expect(
      cells('admissionregistration.k8s.io', 'validatingwebhookconfigurations', { webhooks: [{}, {}] }),
    ).toEqual(['x', 2, '24h']);
    const policy = { spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{}] } };
    expect(cells('admissionregistration.k8s.io', 'validatingadmissionpolicies', policy)).toEqual([
      'x',
      1,
      'v1/ConfigMap',
      '24h',
    ]);
    const binding = (paramRef: object | undefined): unknown =>
      cells('admissionregistration.k8s.io', 'validatingadmissionpolicybindings', {
        spec: { policyName: 'p', paramRef },
      })[2];
    expect(binding({ namespace: 'ns', name: 'cfg' })).toBe('ns/cfg');
    expect(binding({ name: 'cfg' })).toBe('*/cfg');
    expect(binding({ selector: { matchLabels: { a: 'b' } } })).toBe('a=b');
    expect(binding(undefined)).toBe('<unset>');
  });

  it('prints API services', () => {
    const local = {
      spec: { group: 'apps', version: 'v1' },
      status: { conditions: [{ type: 'Available', status: 'True', reason: 'Local' }] },
    };
    expect(cells('apiregistration.k8s.io', 'apiservices', local)).toEqual(['x', 'Local', 'True', '24h']);
    const remote = {
      spec: { service: { namespace: 'kube-system', name: 'metrics-server' } },
      status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] },
    };
    expect(cells('apiregistration.k8s.io', 'apiservices', remote).slice(1, 3)).toEqual([
      'kube-system/metrics-server',
      'False (MissingEndpoints)',
    ]);
    expect(cells('apiregistration.k8s.io', 'apiservices', {})[2]).toBe('Unknown');
  });

  it('prints certificate signing requests', () => {
    const csr = {
      spec: {
        signerName: 'kubernetes.io/kube-apiserver-client',
        username: 'alice',
        expirationSeconds: 86400,
      },
      status: { conditions: [{ type: 'Approved', status: 'True' }], certificate: 'LS0t' },
    };
    expect(cells('certificates.k8s.io', 'certificatesigningrequests', csr)).toEqual([
      'x',
      '24h',
      'kubernetes.io/kube-apiserver-client',
      'alice',
      '24h',
      'Approved,Issued',
    ]);
    expect(cells('certificates.k8s.io', 'certificatesigningrequests', {}).slice(2)).toEqual([
      '<none>',
      '',
      '<none>',
      'Pending',
    ]);
  });

  it('prints flow schemas and priority levels', () => {
    const fs = {
      spec: {
        priorityLevelConfiguration: { name: 'workload-low' },
        matchingPrecedence: 9000,
        distinguisherMethod: { type: 'ByUser' },
      },
      status: { conditions: [{ type: 'Dangling', status: 'False' }] },
    };
    expect(cells('flowcontrol.apiserver.k8s.io', 'flowschemas', fs)).toEqual([
      'x',
      'workload-low',
      9000,
      'ByUser',
      '24h',
      'False',
    ]);
    const limited = {
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 30,
          limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 } },
        },
      },
    };
    expect(cells('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations', limited)).toEqual([
      'x',
      'Limited',
      30,
      64,
      6,
      50,
      '24h',
    ]);
    expect(
      cells('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations', { spec: { type: 'Exempt' } }),
    ).toEqual(['x', 'Exempt', '<none>', '<none>', '<none>', '<none>', '24h']);
  });
});
