/**
 * The statefulset pod reconcile and the daemonset placement and plan, on plain objects: what a
 * sync decides for OrderedReady vs Parallel, OnDelete, maxUnavailable; which nodes a DaemonSet
 * runs on; maxSurge rolling updates.
 */
import { describe, expect, it } from 'vitest';
import type { DaemonSet } from '../../src/api/types/apps-v1.js';
import type { Node, Pod } from '../../src/api/types/core-v1.js';
import { shouldRunOn } from '../../src/controllers/daemonset/placement.js';
import { podForNode } from '../../src/controllers/daemonset/pods.js';
import { planDaemonPods } from '../../src/controllers/daemonset/sync.js';
import { newPod, type TypedStatefulSet } from '../../src/controllers/statefulset/identity.js';
import { syncStatefulSetPods, type StatefulSetActions } from '../../src/controllers/statefulset/sync.js';

const NOW = Date.parse('2026-12-02T00:00:00Z');

function running(p: Pod, ready = true): Pod {
  return {
    ...p,
    metadata: {
      ...p.metadata,
      uid: `uid-${p.metadata.name ?? p.metadata.generateName ?? ''}`,
      creationTimestamp: '2026-12-01T00:00:00Z',
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-12-01T00:00:00Z' },
      ],
    },
  };
}

function set(spec: Partial<NonNullable<TypedStatefulSet['spec']>>): TypedStatefulSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'set-uid' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c' }] } },
      ...spec,
    },
  };
}

function recorder(): { act: StatefulSetActions; created: string[]; deleted: string[] } {
  const created: string[] = [];
  const deleted: string[] = [];
  return {
    created,
    deleted,
    act: {
      now: () => new Date(NOW),
      createPod: (_s, p) => {
        created.push(p.metadata.name ?? '');
        return Promise.resolve();
      },
      deletePod: (_s, p) => {
        deleted.push(p.metadata.name ?? '');
        return Promise.resolve();
      },
      updatePod: () => Promise.resolve(),
      ownClaimsByPod: () => Promise.resolve(),
      event: () => undefined,
    },
  };
}

describe('statefulset pod reconcile', () => {
  it('creates one pod at a time with OrderedReady, all at once with Parallel', async () => {
    const r1 = recorder();
    await syncStatefulSetPods(set({}), [], { current: 'r1', update: 'r1' }, r1.act);
    expect(r1.created).toEqual(['web-0']);
    const r2 = recorder();
    await syncStatefulSetPods(
      set({ podManagementPolicy: 'Parallel' }),
      [],
      { current: 'r1', update: 'r1' },
      r2.act,
    );
    expect(r2.created).toEqual(['web-0', 'web-1', 'web-2']);
    const r3 = recorder();
    const s = set({});
    await syncStatefulSetPods(
      s,
      [running(newPod(s, 0, 'r1'), false)],
      { current: 'r1', update: 'r1' },
      r3.act,
    );
    expect(r3.created).toEqual([]);
  });

  it('leaves old pods alone with OnDelete, replaces from the top with RollingUpdate', async () => {
    const s = set({ updateStrategy: { type: 'OnDelete' } });
    const pods = [0, 1, 2].map((i) => running(newPod(s, i, 'old')));
    const r1 = recorder();
    await syncStatefulSetPods(s, pods, { current: 'old', update: 'new' }, r1.act);
    expect(r1.deleted).toEqual([]);
    const rolling = set({});
    const r2 = recorder();
    await syncStatefulSetPods(rolling, pods, { current: 'old', update: 'new' }, r2.act);
    expect(r2.deleted).toEqual(['web-2']);
    const r3 = recorder();
    await syncStatefulSetPods(
      set({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } }),
      pods,
      { current: 'old', update: 'new' },
      r3.act,
    );
    expect(r3.deleted).toEqual(['web-2', 'web-1']);
  });
});

function node(
  name: string,
  taints: NonNullable<Node['spec']>['taints'] = [],
  labels: Record<string, string> = {},
): Node {
  return { metadata: { name, labels }, spec: { taints } };
}

function daemonSet(spec: Partial<NonNullable<DaemonSet['spec']>> = {}, generation = 1): DaemonSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns', uid: 'ds-uid', generation },
    spec: {
      selector: { matchLabels: { app: 'a' } },
      template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c' }] } },
      ...spec,
    },
  };
}

describe('daemonset placement and plan', () => {
  it('decides by nodeSelector, affinity and taints with the automatic tolerations', () => {
    const ds = daemonSet({
      template: { metadata: {}, spec: { nodeSelector: { disk: 'ssd' }, containers: [] } },
    });
    expect(shouldRunOn(node('a', [], { disk: 'ssd' }), ds)).toEqual({
      shouldRun: true,
      shouldContinueRunning: true,
    });
    expect(shouldRunOn(node('b', [], { disk: 'hdd' }), ds).shouldRun).toBe(false);
    const plain = daemonSet();
    expect(
      shouldRunOn(node('c', [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }]), plain)
        .shouldRun,
    ).toBe(true);
    expect(shouldRunOn(node('d', [{ key: 'x', effect: 'NoSchedule' }]), plain)).toEqual({
      shouldRun: false,
      shouldContinueRunning: true,
    });
    expect(shouldRunOn(node('e', [{ key: 'x', effect: 'NoExecute' }]), plain)).toEqual({
      shouldRun: false,
      shouldContinueRunning: false,
    });
    expect(
      shouldRunOn(node('f', [{ key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }]), plain)
        .shouldRun,
    ).toBe(false);
  });

  it('surges a new pod beside an old one (maxSurge), then deletes the old one once the new is available', () => {
    const ds = daemonSet(
      { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
      2,
    );
    const ref = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true };
    const nodes = [node('n1'), node('n2')];
    const old = nodes.map((n) => {
      const p = running(podForNode(daemonSet(), ref, n.metadata.name ?? '', 'oldhash'));
      p.metadata.name = `old-${n.metadata.name ?? ''}`;
      return p;
    });
    const first = planDaemonPods(ds, nodes, old, 'newhash', NOW);
    expect(first.createOn).toHaveLength(1);
    expect(first.delete).toEqual([]);
    const target = first.createOn[0] ?? '';
    const fresh = running(podForNode(ds, ref, target, 'newhash'));
    fresh.metadata.name = `new-${target}`;
    const second = planDaemonPods(ds, nodes, [...old, fresh], 'newhash', NOW);
    expect(second.delete.map((p) => p.metadata.name)).toEqual([`old-${target}`]);
  });
});
