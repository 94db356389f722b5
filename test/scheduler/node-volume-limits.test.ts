/**
 * NodeVolumeLimits: CSI volumes per driver against the CSINode's allocatable count, with a volume
 * already attached to the node (shared by another pod) counted once, kube's message when full.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { Harness, node, pod } from './harness.js';

function claimant(name: string, claims: string[], nodeName?: string): Pod {
  const p = pod(name);
  p.spec = {
    ...p.spec,
    ...(nodeName === undefined ? {} : { nodeName }),
    volumes: claims.map((c) => ({ name: c, persistentVolumeClaim: { claimName: c } })),
  };
  return p;
}

function boundClaim(h: Harness, name: string, driver = 'csi.example.com'): void {
  h.pvs.set(`pv-${name}`, {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: `pv-${name}` },
    spec: {
      capacity: { storage: '1Gi' },
      accessModes: ['ReadWriteOnce'],
      csi: { driver, volumeHandle: `h-${name}` },
    },
  });
  h.pvcs.set(`default/${name}`, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: {
      volumeName: `pv-${name}`,
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
    },
    status: { phase: 'Bound' },
  });
}

function csiNode(h: Harness, name: string, count: number): void {
  h.csiNodes.set(name, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: { name },
    spec: { drivers: [{ name: 'csi.example.com', nodeID: name, allocatable: { count } }] },
  });
}

describe('NodeVolumeLimits', () => {
  it('a node at its CSI volume count takes no new volume of that driver; a shared one still fits', async () => {
    const h = new Harness();
    h.addNode(node('n1'));
    csiNode(h, 'n1', 2);
    for (const c of ['a', 'b', 'c']) boundClaim(h, c);
    h.addPod(claimant('holder', ['a', 'b'], 'n1'));
    h.addPod(claimant('third', ['c']));
    h.addPod(claimant('sharer', ['a']));
    const placed = await h.run();
    expect(placed.get('default/sharer')).toBe('n1');
    expect(placed.get('default/third')).toBeUndefined();
    expect(h.failure('default/third')).toMatch(
      /^0\/1 nodes are available: 1 node\(s\) exceed max volume count\./,
    );
  });

  it('a node without a CSINode count, or another driver, has no limit', async () => {
    const h = new Harness();
    h.addNode(node('n1'));
    boundClaim(h, 'a');
    boundClaim(h, 'b', 'other.example.com');
    csiNode(h, 'n1', 0);
    h.addPod(claimant('other', ['b']));
    h.addNode(node('n2'));
    h.addPod(claimant('free', ['a']));
    const placed = await h.run();
    expect(placed.get('default/other')).toBeDefined();
    expect(placed.get('default/free')).toBe('n2');
  });
});
