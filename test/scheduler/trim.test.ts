/**
 * The scheduler's informer transform: a pod as a kubelet has written it, and a node as it
 * reports itself, keep what the scheduler reads and lose the rest. (test/scheduler/harness.ts
 * passes every pod and node of the plugin tests through the same transform, so those tests show
 * that the plugins decide alike on trimmed objects.)
 */
import { describe, expect, it } from 'vitest';
import type { Node, Pod } from '../../src/api/types/core-v1.js';
import { podRequests } from '../../src/scheduler/resources.js';
import { schedulerTransform, trimNode, trimPod } from '../../src/scheduler/trim.js';

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
});
