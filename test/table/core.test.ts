import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/object.js';
import { printerFor } from '../../src/table/index.js';

const now = new Date('2024-05-01T12:00:00Z');
const created = '2024-04-30T12:00:00Z'; // 24h before now

function cells(
  resource: string,
  object: Omit<KubeObject, 'metadata'> & { metadata?: object },
  group = '',
): unknown[] {
  const full = { ...object, metadata: { name: 'x', creationTimestamp: created, ...object.metadata } };
  return printerFor(group, resource).cells(full, now);
}

describe('nodes', () => {
  it('prints status, sorted roles, version and wide node info', () => {
    const node = {
      metadata: {
        labels: {
          'node-role.kubernetes.io/worker': '',
          'node-role.kubernetes.io/control-plane': '',
          'node-role.kubernetes.io/': '',
          'kubernetes.io/role': 'infra',
        },
      },
      spec: { unschedulable: true },
      status: {
        conditions: [
          { type: 'MemoryPressure', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
        addresses: [
          { type: 'Hostname', address: 'n1' },
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.0.0.2' },
        ],
        nodeInfo: {
          kubeletVersion: 'v1.33.1',
          osImage: 'Debian 12',
          containerRuntimeVersion: 'containerd://2.0',
        },
      },
    };
    expect(cells('nodes', node)).toEqual([
      'x',
      'Ready,SchedulingDisabled',
      'control-plane,infra,worker',
      '24h',
      'v1.33.1',
      '10.0.0.1',
      '<none>',
      'Debian 12',
      '<unknown>',
      'containerd://2.0',
    ]);
  });

  it('prints NotReady and Unknown, and <none> without roles', () => {
    const notReady = { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    expect(cells('nodes', notReady).slice(1, 3)).toEqual(['NotReady', '<none>']);
    expect(cells('nodes', {}).slice(1, 3)).toEqual(['Unknown', '<none>']);
  });
});

describe('namespaces, configmaps, secrets, serviceaccounts', () => {
  it('prints the namespace phase', () => {
    expect(cells('namespaces', { status: { phase: 'Terminating' } })).toEqual(['x', 'Terminating', '24h']);
  });

  it('counts data and binaryData of a config map as an integer', () => {
    expect(cells('configmaps', { data: { a: '1', b: '2' }, binaryData: { c: 'AA==' } })).toEqual([
      'x',
      3,
      '24h',
    ]);
    expect(cells('configmaps', {})).toEqual(['x', 0, '24h']);
  });

  it('prints the secret type and data count', () => {
    expect(cells('secrets', { type: 'kubernetes.io/tls', data: { 'tls.crt': '', 'tls.key': '' } })).toEqual([
      'x',
      'kubernetes.io/tls',
      2,
      '24h',
    ]);
  });

  it('counts service account secrets', () => {
    expect(cells('serviceaccounts', { secrets: [{ name: 'a' }] })).toEqual(['x', 1, '24h']);
    expect(cells('serviceaccounts', {})).toEqual(['x', 0, '24h']);
  });
});

describe('services', () => {
  it('prints a ClusterIP service', () => {
    const svc = {
      spec: {
        type: 'ClusterIP',
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        ports: [
          { port: 53, protocol: 'UDP' },
          { port: 9153, protocol: 'TCP' },
        ],
        selector: { 'k8s-app': 'kube-dns', app: 'dns' },
      },
    };
    expect(cells('services', svc)).toEqual([
      'x',
      'ClusterIP',
      '10.96.0.10',
      '<none>',
      '53/UDP,9153/TCP',
      '24h',
      'app=dns,k8s-app=kube-dns',
    ]);
  });

  it('prints node ports, external IPs, headless and port-less services', () => {
    const svc = {
      spec: {
        type: 'NodePort',
        clusterIP: 'None',
        externalIPs: ['1.2.3.4', '5.6.7.8'],
        ports: [{ port: 80, nodePort: 30080 }],
      },
    };
    expect(cells('services', svc).slice(1, 5)).toEqual([
      'NodePort',
      'None',
      '1.2.3.4,5.6.7.8',
      '80:30080/TCP',
    ]);
    expect(cells('services', { spec: {} }).slice(1, 5)).toEqual(['ClusterIP', '<none>', '<none>', '<none>']);
    expect(cells('services', { spec: {} })[6]).toBe('<none>');
  });

  it('prints <pending>, load balancer ingress (sorted, deduplicated) and external names', () => {
    const lb = (status: object, externalIPs?: string[]): unknown =>
      cells('services', { spec: { type: 'LoadBalancer', externalIPs }, status: { loadBalancer: status } })[3];
    expect(lb({})).toBe('<pending>');
    expect(
      lb({
        ingress: [{ ip: '9.9.9.9' }, { hostname: 'a.example.com' }, { ip: '1.1.1.1' }, { ip: '9.9.9.9' }],
      }),
    ).toBe('1.1.1.1,9.9.9.9,a.example.com');
    expect(lb({ ingress: [{ ip: '9.9.9.9' }] }, ['2.2.2.2'])).toBe('9.9.9.9,2.2.2.2');
    expect(lb({}, ['2.2.2.2'])).toBe('2.2.2.2');
    expect(cells('services', { spec: { type: 'ExternalName', externalName: 'db.example.com' } })[3]).toBe(
      'db.example.com',
    );
    expect(cells('services', { spec: { type: 'Other' } })[3]).toBe('<unknown>');
  });
});

describe('endpoints', () => {
  it('prints up to three ip:port pairs and counts the rest', () => {
    const ep = {
      subsets: [
        {
          addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }],
          ports: [
            { name: 'http', port: 80 },
            { name: 'https', port: 443 },
          ],
        },
        { addresses: [{ ip: 'fd00::1' }], ports: [{ port: 8080 }] },
      ],
    };
    expect(cells('endpoints', ep)).toEqual(['x', '10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...', '24h']);
  });

  it('prints bare IPs of port-less subsets, IPv6 in brackets, and <none> without subsets', () => {
    expect(cells('endpoints', { subsets: [{ addresses: [{ ip: '10.0.0.1' }] }] })[1]).toBe('10.0.0.1');
    expect(
      cells('endpoints', { subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] }] })[1],
    ).toBe('[fd00::1]:80');
    expect(cells('endpoints', {})[1]).toBe('<none>');
    expect(cells('endpoints', { subsets: [{}] })[1]).toBe('');
  });
});

describe('replication controllers, resource quotas, pod templates', () => {
  it('prints replica counts, defaulting desired to 1, and wide cells', () => {
    const rc = {
      spec: {
        selector: { app: 'web' },
        template: {
          spec: {
            containers: [
              { name: 'a', image: 'nginx' },
              { name: 'b', image: 'busybox' },
            ],
          },
        },
      },
      status: { replicas: 1, readyReplicas: 1 },
    };
    expect(cells('replicationcontrollers', rc)).toEqual([
      'x',
      1,
      1,
      1,
      '24h',
      'a,b',
      'nginx,busybox',
      'app=web',
    ]);
  });

  it('splits quota usage into request and limit columns, sorted by resource', () => {
    const quota = {
      status: {
        hard: { pods: '10', 'limits.cpu': '4', 'requests.memory': '1Gi', 'limits.memory': '2Gi' },
        used: { pods: '3', 'limits.cpu': '500m', 'limits.memory': '0' },
      },
    };
    expect(cells('resourcequotas', quota)).toEqual([
      'x',
      'pods: 3/10, requests.memory: 0/1Gi',
      'limits.cpu: 500m/4, limits.memory: 0/2Gi',
      '24h',
    ]);
  });

  it('prints pod template containers and labels', () => {
    const pt = {
      template: {
        metadata: { labels: { b: '2', a: '1' } },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      },
    };
    expect(cells('podtemplates', pt)).toEqual(['x', 'c', 'i', 'a=1,b=2']);
  });
});

describe('persistent volumes and claims', () => {
  it('prints a bound volume', () => {
    const pv = {
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOnce', 'ReadWriteOncePod'],
        persistentVolumeReclaimPolicy: 'Retain',
        claimRef: { namespace: 'ns', name: 'data' },
        storageClassName: 'fast',
        volumeMode: 'Filesystem',
      },
      status: { phase: 'Bound' },
    };
    expect(cells('persistentvolumes', pv)).toEqual([
      'x',
      '10Gi',
      'RWO,RWX,RWOP',
      'Retain',
      'Bound',
      'ns/data',
      'fast',
      '<unset>',
      '',
      '24h',
      'Filesystem',
    ]);
  });

  it('prefers the beta storage class annotation and prints Terminating while deleting', () => {
    const pv = {
      metadata: {
        annotations: { 'volume.beta.kubernetes.io/storage-class': 'old' },
        deletionTimestamp: '2024-05-01T11:00:00Z',
      },
      spec: { storageClassName: 'new', volumeAttributesClassName: 'gold' },
      status: { phase: 'Released', reason: 'Why' },
    };
    expect(cells('persistentvolumes', pv)).toEqual([
      'x',
      '0',
      '',
      '',
      'Terminating',
      '',
      'old',
      'gold',
      'Why',
      '24h',
      '<unset>',
    ]);
  });

  it('prints claim capacity and access modes only once bound', () => {
    const pending = {
      spec: { storageClassName: 'fast', resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Pending' },
    };
    expect(cells('persistentvolumeclaims', pending)).toEqual([
      'x',
      'Pending',
      '',
      '',
      '',
      'fast',
      '<unset>',
      '24h',
      '<unset>',
    ]);
    const bound = {
      spec: { volumeName: 'pv-1', volumeMode: 'Block' },
      status: { phase: 'Bound', capacity: { storage: '5Gi' }, accessModes: ['ReadOnlyMany'] },
    };
    expect(cells('persistentvolumeclaims', bound)).toEqual([
      'x',
      'Bound',
      'pv-1',
      '5Gi',
      'ROX',
      '',
      '<unset>',
      '24h',
      'Block',
    ]);
  });
});

describe('events', () => {
  it('prints a core event with every wide cell', () => {
    const event = {
      metadata: { name: 'web.17c' },
      type: 'Warning',
      reason: 'BackOff',
      message: '  Back-off restarting failed container\n',
      involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{app}' },
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2024-05-01T10:00:00Z',
      lastTimestamp: '2024-05-01T11:58:00Z',
      count: 7,
    };
    expect(cells('events', event)).toEqual([
      '2m',
      'Warning',
      'BackOff',
      'pod/web',
      'spec.containers{app}',
      'kubelet, node-1',
      'Back-off restarting failed container',
      '120m',
      7,
      'web.17c',
    ]);
  });

  it('falls back to eventTime (truncated to whole seconds), the reporting controller, and a count of 1', () => {
    const event = {
      involvedObject: { kind: 'Node' },
      eventTime: '2024-05-01T11:59:30.123456Z',
      reportingComponent: 'scheduler',
    };
    const row = cells('events', event);
    expect([row[0], row[3], row[5], row[7], row[8]]).toEqual(['29s', 'node', 'scheduler', '29s', 1]);
  });

  it('uses the series for last seen and count', () => {
    const event = {
      involvedObject: { kind: 'Pod', name: 'p' },
      eventTime: '2024-05-01T11:00:00.000000Z',
      series: { count: 4, lastObservedTime: '2024-05-01T11:55:00.000000Z' },
      reportingComponent: 'kubelet',
      reportingInstance: 'node-2',
    };
    const row = cells('events', event);
    expect([row[0], row[5], row[7], row[8]]).toEqual(['5m', 'kubelet, node-2', '60m', 4]);
  });

  it('reads events.k8s.io field names', () => {
    const event = {
      metadata: { name: 'e' },
      type: 'Normal',
      reason: 'Scheduled',
      note: 'assigned',
      regarding: { kind: 'Pod', name: 'web' },
      reportingController: 'default-scheduler',
      eventTime: '2024-05-01T11:59:00.000000Z',
    };
    expect(cells('events', event, 'events.k8s.io')).toEqual([
      '60s',
      'Normal',
      'Scheduled',
      'pod/web',
      '',
      'default-scheduler',
      'assigned',
      '60s',
      1,
      'e',
    ]);
  });
});
