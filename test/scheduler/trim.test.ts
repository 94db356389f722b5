/**
 * The scheduler's informer transform: a pod as a kubelet has written it, and a node as it
 * reports itself, keep what the scheduler reads and lose the rest. (test/scheduler/harness.ts
 * passes every pod and node of the plugin tests through the same transform, so those tests show
 * that the plugins decide alike on trimmed objects.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types/core-v1.js';
import { podRequests } from '../../src/scheduler/resources.js';
import { createSchedulerTransform, trimNode, trimPod } from '../../src/scheduler/trim.js';
import { ValueSharer } from '../../src/client/share.js';

const schedulerTransform = createSchedulerTransform();

const running: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-1',
    namespace: 'default',
    uid: 'u1',
    resourceVersion: '42',
    generation: 1,
    creationTimestamp: '2026-12-02T10:00:00Z',
    labels: { app: 'web' },
    annotations: { note: 'x' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs' }],
    managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
  },
  spec: {
    nodeName: 'n1',
    schedulerName: 'default-scheduler',
    priority: 10,
    tolerations: [{ key: 'k', operator: 'Exists' }],
    nodeSelector: { disk: 'ssd' },
    volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    serviceAccountName: 'default',
    initContainers: [
      { name: 'side', image: 'envoy', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
    ],
    containers: [
      {
        name: 'c',
        image: 'nginx',
        command: ['nginx'],
        env: [{ name: 'A', value: 'b' }],
        ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }],
        resources: { requests: { cpu: '1', memory: '1Gi' } },
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
        terminationMessagePath: '/dev/termination-log',
        imagePullPolicy: 'IfNotPresent',
      },
    ],
  },
  status: {
    phase: 'Running',
    startTime: '2026-12-02T10:00:01Z',
    podIP: '10.0.0.5',
    hostIP: '192.168.0.1',
    qosClass: 'Burstable',
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', status: 'True', lastTransitionTime: '2026-12-02T10:00:02Z' },
    ],
    containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'nginx', imageID: 'sha' }],
  },
};

describe('schedulerTransform', () => {
  it('keeps what the scheduler reads of a running pod, and nothing else', () => {
    const t = schedulerTransform(running) as Pod;
    expect(t).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-1',
        namespace: 'default',
        uid: 'u1',
        resourceVersion: '42',
        creationTimestamp: '2026-12-02T10:00:00Z',
        labels: { app: 'web' },
        annotations: { note: 'x' },
      },
      spec: {
        nodeName: 'n1',
        schedulerName: 'default-scheduler',
        priority: 10,
        tolerations: [{ key: 'k', operator: 'Exists' }],
        nodeSelector: { disk: 'ssd' },
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
        initContainers: [
          { name: 'side', image: 'envoy', restartPolicy: 'Always', resources: { requests: { cpu: '100m' } } },
        ],
        containers: [
          {
            name: 'c',
            image: 'nginx',
            ports: [{ containerPort: 80, hostPort: 8080, protocol: 'TCP' }],
            resources: { requests: { cpu: '1', memory: '1Gi' } },
          },
        ],
      },
      status: {
        phase: 'Running',
        startTime: '2026-12-02T10:00:01Z',
        conditions: [{ type: 'PodScheduled', status: 'True' }],
      },
    });
    expect(podRequests(t)).toEqual(podRequests(running));
    // The informer's object is left as it was.
    expect(running.status?.containerStatuses).toHaveLength(1);
    expect(running.metadata.managedFields).toHaveLength(1);
  });

  it('keeps a pending pod’s nominated node and a deleting pod’s deletionTimestamp', () => {
    const p = trimPod({
      metadata: { name: 'p', deletionTimestamp: '2026-12-02T11:00:00Z' },
      status: {
        phase: 'Pending',
        nominatedNodeName: 'n2',
        conditions: [{ type: 'Initialized', status: 'True' }],
      },
    });
    expect(p).toEqual({
      metadata: { name: 'p', deletionTimestamp: '2026-12-02T11:00:00Z' },
      status: { phase: 'Pending', nominatedNodeName: 'n2' },
    });
  });

  it('keeps a node’s labels, taints, cordon, resources and images', () => {
    const n: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'n1',
        uid: 'nu',
        resourceVersion: '7',
        labels: { 'kubernetes.io/hostname': 'n1' },
        annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
      },
      spec: { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }], podCIDR: '10.0.1.0/24' },
      status: {
        capacity: { cpu: '4' },
        allocatable: { cpu: '3' },
        images: [{ names: ['nginx'], sizeBytes: 1 }],
        conditions: [{ type: 'Ready', status: 'True' }],
        addresses: [{ type: 'InternalIP', address: '192.168.0.1' }],
        nodeInfo: { kubeletVersion: 'v1.33.13' },
      },
    };
    expect(trimNode(n)).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n1', uid: 'nu', resourceVersion: '7', labels: { 'kubernetes.io/hostname': 'n1' } },
      spec: { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] },
      status: {
        capacity: { cpu: '4' },
        allocatable: { cpu: '3' },
        images: [{ names: ['nginx'], sizeBytes: 1 }],
      },
    });
  });

  it('leaves other kinds whole but for managedFields', () => {
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c', annotations: { a: 'b' }, managedFields: [{ manager: 'm' }] },
      spec: { volumeName: 'pv' },
    };
    expect(schedulerTransform(pvc)).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c', annotations: { a: 'b' } },
      spec: { volumeName: 'pv' },
    });
  });

  it('holds the equal parts of many pods once, frozen, and leaves the informer’s objects alone', () => {
    const transform = createSchedulerTransform();
    const replica = (i: number): Pod =>
      structuredClone({ ...running, metadata: { ...running.metadata, name: `web-${i}`, uid: `u${i}` } });
    const sources = [replica(1), replica(2)];
    const [a, b] = sources.map((p) => transform(p) as Pod) as [Pod, Pod];
    expect(a.metadata.name).toBe('web-1');
    expect(b.metadata.name).toBe('web-2');
    for (const part of [
      (p: Pod) => p.metadata.labels,
      (p: Pod) => p.metadata.annotations,
      (p: Pod) => p.spec?.containers,
      (p: Pod) => p.spec?.initContainers,
      (p: Pod) => p.spec?.tolerations,
      (p: Pod) => p.spec?.nodeSelector,
      (p: Pod) => p.spec?.volumes,
      (p: Pod) => p.status?.conditions,
    ]) {
      expect(part(a)).toBeDefined();
      expect(part(a)).toBe(part(b));
      expect(Object.isFrozen(part(a))).toBe(true);
    }
    expect(Object.isFrozen(a.spec?.containers?.[0]?.resources?.requests)).toBe(true);
    expect(() => {
      (a.metadata.labels as Record<string, string>)['app'] = 'other';
    }).toThrow(TypeError);
    // The pods' own fields are not shared, and the sources stay writable.
    expect(a.metadata).not.toBe(b.metadata);
    expect(Object.isFrozen(a.metadata)).toBe(false);
    expect(Object.isFrozen(sources[0]?.metadata.labels)).toBe(false);
    // A different value gets its own copy.
    const other = transform({
      ...replica(3),
      metadata: { ...replica(3).metadata, labels: { app: 'db' } },
    }) as Pod;
    expect(other.metadata.labels).toEqual({ app: 'db' });
    expect(other.metadata.labels).not.toBe(a.metadata.labels);
  });

  it('shares equal node capacity and taints between nodes', () => {
    const transform = createSchedulerTransform();
    const node = (name: string): Node => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name } },
      spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] },
      status: { capacity: { cpu: '4', pods: '110' }, allocatable: { cpu: '4', pods: '110' } },
    });
    const [x, y] = [transform(node('n1')) as Node, transform(node('n2')) as Node];
    expect(x.status?.capacity).toBe(y.status?.capacity);
    expect(x.status?.allocatable).toBe(y.status?.capacity);
    expect(x.spec?.taints).toBe(y.spec?.taints);
    expect(x.metadata.labels).toEqual({ 'kubernetes.io/hostname': 'n1' });
  });
});

describe('ValueSharer', () => {
  it('starts over when full instead of growing', () => {
    const sharer = new ValueSharer(2);
    const first = sharer.value({ a: '1' });
    expect(sharer.value({ a: '1' })).toBe(first);
    sharer.value({ a: '2' });
    sharer.value({ a: '3' }); // full: the table starts over
    const again = sharer.value({ a: '1' });
    expect(again).toEqual({ a: '1' });
    expect(again).not.toBe(first);
    expect(sharer.value(undefined)).toBeUndefined();
    expect(sharer.string('default')).toBe('default');
  });

  it('hands out, for a field, a copy with the same JSON text as the value, key order included', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    // Values of one field in a row, often equal or equal but for key order.
    const reordered = (v: unknown): unknown =>
      typeof v === 'object' && v !== null && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).reverse())
        : v;
    fc.assert(
      fc.property(fc.array(fc.tuple(json, fc.boolean()), { maxLength: 12 }), (steps) => {
        const sharer = new ValueSharer(4);
        let previous: unknown = {};
        for (const [fresh, repeat] of steps) {
          const v = repeat ? reordered(JSON.parse(JSON.stringify(previous)) as unknown) : fresh;
          const text = JSON.stringify(v);
          const shared = sharer.value(JSON.parse(text) as unknown, 'spec');
          expect(JSON.stringify(shared)).toBe(text);
          previous = v;
        }
      }),
    );
    const sharer = new ValueSharer();
    const first = sharer.value({ a: '1', b: ['x'] }, 'labels');
    expect(sharer.value({ a: '1', b: ['x'] }, 'labels')).toBe(first);
    expect(sharer.value({ b: ['x'], a: '1' }, 'labels')).not.toBe(first);
  });
});
