/**
 * The controller manager's informer transform: pods keep every field (controllers write them back
 * from their cached copies) while the parts a workload's pods repeat are held once and frozen.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { cloneJson } from '../../src/api/object.js';
import { podSharingTransform } from '../../src/client/pod-sharing.js';

const replica = (i: number): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `web-abc-${i}`,
    generateName: 'web-abc-',
    namespace: 'default',
    uid: `uid-${i}`,
    resourceVersion: String(100 + i),
    labels: { app: 'web', 'pod-template-hash': 'abc' },
    ownerReferences: [
      {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: 'web-abc',
        uid: 'rs',
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
    managedFields: [{ manager: 'kube-controller-manager', operation: 'Update' }],
  },
  spec: {
    nodeName: `node-${i % 2}`,
    schedulerName: 'default-scheduler',
    restartPolicy: 'Always',
    containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '10m' } } }],
    tolerations: [
      {
        key: 'node.kubernetes.io/not-ready',
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: 300,
      },
    ],
    securityContext: {},
  },
  status: { phase: 'Running', podIP: `10.244.0.${i}`, hostIP: '10.1.0.1', hostIPs: [{ ip: '10.1.0.1' }] },
});

describe('the controller manager’s informer transform', () => {
  it('keeps every field of a pod but managedFields', () => {
    const transform = podSharingTransform();
    const { managedFields: _dropped, ...meta } = replica(1).metadata;
    expect(transform(replica(1))).toEqual({ ...replica(1), metadata: meta });
  });

  it('holds the parts the pods of one workload repeat once, frozen', () => {
    const transform = podSharingTransform();
    const [a, b] = [transform(replica(1)) as Pod, transform(replica(2)) as Pod];
    expect(a.spec?.containers).toBe(b.spec?.containers);
    expect(a.spec?.tolerations).toBe(b.spec?.tolerations);
    expect(a.metadata.labels).toBe(b.metadata.labels);
    expect(a.metadata.ownerReferences).toBe(b.metadata.ownerReferences);
    expect(a.status?.hostIPs).toBe(b.status?.hostIPs);
    expect(Object.isFrozen(a.spec?.containers?.[0])).toBe(true);
    // What differs stays each pod's own.
    expect(a.metadata.name).toBe('web-abc-1');
    expect(b.status?.podIP).toBe('10.244.0.2');
    expect(a.spec?.nodeName).toBe('node-1');
    expect(b.spec?.nodeName).toBe('node-0');
    expect(() => {
      a.spec?.containers?.push({ name: 'extra' });
    }).toThrow(TypeError);
  });

  it('gives controllers writable copies through cloneJson and structuredClone', () => {
    const transform = podSharingTransform();
    const cached = transform(replica(1)) as Pod;
    transform(replica(2));
    for (const copy of [cloneJson(cached), structuredClone(cached)]) {
      copy.metadata.labels = { ...copy.metadata.labels, extra: 'x' };
      copy.spec?.containers?.push({ name: 'side' });
      (copy.metadata.ownerReferences ?? [])[0]!.controller = false;
      expect(copy.spec?.containers).toHaveLength(2);
    }
    expect(cached.spec?.containers).toHaveLength(1);
    expect(cached.metadata.ownerReferences?.[0]?.controller).toBe(true);
  });

  it('leaves other kinds whole but for managedFields', () => {
    const transform = podSharingTransform();
    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-abc', labels: { app: 'web' }, managedFields: [{ manager: 'm' }] },
      spec: { replicas: 2 },
    };
    const out = transform(rs);
    expect(out).toEqual({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-abc', labels: { app: 'web' } },
      spec: { replicas: 2 },
    });
    expect(Object.isFrozen(out.metadata?.labels)).toBe(false);
  });
});
