/**
 * InterPodAffinity's PreFilter state is computed from per-node caches kept across cycles (by
 * node generation): it must equal a computation from fresh caches after pods are assumed,
 * removed and replaced, and after a node's labels change.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { SchedulerCache } from '../../src/scheduler/cache.js';
import { PodInfo } from '../../src/scheduler/pod-info.js';
import { affinityCaches, affinityFilterState } from '../../src/scheduler/plugins/inter-pod-affinity.js';
import { node } from './harness.js';

function member(name: string, group: string, nodeName?: string, withAffinity = false): Pod {
  const term = { labelSelector: { matchLabels: { group } }, topologyKey: 'kubernetes.io/hostname' };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { group } },
    spec: {
      containers: [{ name: 'c', image: 'x' }],
      ...(nodeName === undefined ? {} : { nodeName }),
      affinity: {
        podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] },
        ...(withAffinity
          ? {
              podAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [{ ...term, topologyKey: 'zone' }],
              },
            }
          : {}),
      },
    },
  };
}

const plain = (s: ReturnType<typeof affinityFilterState>): unknown => ({
  existingAnti: [...s.existingAnti].map(([k, v]) => [k, [...v].sort()]),
  affinity: [...s.affinity].map(([k, v]) => [k, [...v].sort()]),
  anti: [...s.anti].map(([k, v]) => [k, [...v].sort()]),
  matchesSelf: s.matchesSelf,
});

describe('InterPodAffinity filter state', () => {
  it('cached per-node counts match fresh ones as pods come and go and labels change', () => {
    const cache = new SchedulerCache();
    for (let i = 0; i < 4; i++) {
      const n = node(`n${i}`);
      n.metadata.labels = { ...n.metadata.labels, zone: `z${i % 2}` };
      cache.upsertNode(n);
    }
    const ns = (): Record<string, string> => ({});
    const caches = affinityCaches();
    const incoming = new PodInfo(member('in', 'g0', undefined, true));
    const check = (): void => {
      const cached = affinityFilterState(incoming, cache, ns, caches);
      expect(plain(cached)).toEqual(plain(affinityFilterState(incoming, cache, ns)));
    };
    check();
    cache.upsertPod(member('a', 'g0', 'n0'));
    cache.upsertPod(member('b', 'g1', 'n0'));
    check();
    const s = affinityFilterState(incoming, cache, ns, caches);
    expect(s.existingAnti.get('kubernetes.io/hostname')?.get('n0')).toBe(1);
    expect(s.anti.get('kubernetes.io/hostname')?.get('n0')).toBe(1);
    expect(s.affinity.get('zone')?.get('z0')).toBe(1);
    cache.assume(new PodInfo(member('c', 'g0', 'n1')), 'n1');
    check();
    expect(
      affinityFilterState(incoming, cache, ns, caches).anti.get('kubernetes.io/hostname')?.get('n1'),
    ).toBe(1);
    cache.forget('default/c');
    cache.removePod('default/a');
    check();
    expect(affinityFilterState(incoming, cache, ns, caches).existingAnti.size).toBe(0);
    // The same pod re-labelled into the incoming pod's group.
    cache.upsertPod(member('b', 'g0', 'n0'));
    check();
    // A node moving zone: its counts follow.
    const moved = node('n0');
    moved.metadata.labels = { ...moved.metadata.labels, zone: 'z1' };
    cache.upsertNode(moved);
    check();
    expect(affinityFilterState(incoming, cache, ns, caches).affinity.get('zone')?.get('z1')).toBe(1);
  });
});
