/**
 * InterPodAffinity's PreFilter state is read from the cache's affinity index (counts kept as
 * pods and nodes change) or, in snapshots without one, computed from per-node caches kept across
 * cycles (by node generation): all must equal a computation from fresh caches after pods are
 * assumed, removed and replaced, after a node's labels change, and after a node goes and comes back.
 */
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import { SchedulerCache } from '../../src/scheduler/cache.js';
import type { Snapshot } from '../../src/scheduler/framework/types.js';
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

type State = ReturnType<typeof affinityFilterState>;

/** Counts summed per topology key and value, zeros left out, sorted. */
function merged(
  entries: Iterable<readonly [string, ReadonlyMap<string, number>]>,
): [string, [string, number][]][] {
  const m = new Map<string, Map<string, number>>();
  for (const [k, counts] of entries) {
    for (const [v, n] of counts) {
      let byValue = m.get(k);
      if (byValue === undefined) m.set(k, (byValue = new Map<string, number>()));
      byValue.set(v, (byValue.get(v) ?? 0) + n);
    }
  }
  return [...m]
    .map(([k, byValue]): [string, [string, number][]] => [k, [...byValue].filter(([, n]) => n !== 0).sort()])
    .filter(([, values]) => values.length > 0)
    .sort();
}

const existingAnti = (s: State): [string, [string, number][]][] =>
  merged(s.existingAnti.map((e) => [e.topologyKey, e.counts] as const));
const anti = (s: State): [string, [string, number][]][] => merged(s.anti.flatMap((c) => [...c]));

const plain = (s: State): unknown => ({
  existingAnti: existingAnti(s),
  affinity: merged(s.affinity),
  anti: anti(s),
  matchesSelf: s.matchesSelf,
});

/** The count of `value` under `key`, or 0. */
function at(counts: [string, [string, number][]][], key: string, value: string): number {
  return counts.find(([k]) => k === key)?.[1].find(([v]) => v === value)?.[1] ?? 0;
}

/** The cache's nodes without its affinity index (as a preemption dry run's snapshot). */
function withoutIndex(cache: SchedulerCache): Snapshot {
  return {
    get nodes() {
      return cache.nodes;
    },
    get: (name) => cache.get(name),
    nodesWithAffinityPods: () => cache.nodesWithAffinityPods(),
    nodesWithRequiredAntiAffinityPods: () => cache.nodesWithRequiredAntiAffinityPods(),
    imageNodeCount: (image) => cache.imageNodeCount(image),
  };
}

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
    const bare = withoutIndex(cache);
    const check = (): void => {
      const fresh = plain(affinityFilterState(incoming, bare, ns));
      expect(plain(affinityFilterState(incoming, cache, ns, caches))).toEqual(fresh);
      expect(plain(affinityFilterState(incoming, bare, ns, caches))).toEqual(fresh);
    };
    check();
    cache.upsertPod(member('a', 'g0', 'n0'));
    cache.upsertPod(member('b', 'g1', 'n0'));
    check();
    const s = affinityFilterState(incoming, cache, ns, caches);
    expect(at(existingAnti(s), 'kubernetes.io/hostname', 'n0')).toBe(1);
    expect(at(anti(s), 'kubernetes.io/hostname', 'n0')).toBe(1);
    expect(s.affinity.get('zone')?.get('z0')).toBe(1);
    cache.assume(new PodInfo(member('c', 'g0', 'n1')), 'n1');
    check();
    expect(at(anti(affinityFilterState(incoming, cache, ns, caches)), 'kubernetes.io/hostname', 'n1')).toBe(
      1,
    );
    cache.forget('default/c');
    cache.removePod('default/a');
    check();
    expect(affinityFilterState(incoming, cache, ns, caches).existingAnti).toEqual([]);
    // The same pod re-labelled into the incoming pod's group.
    cache.upsertPod(member('b', 'g0', 'n0'));
    check();
    // A node moving zone: its counts follow.
    const moved = node('n0');
    moved.metadata.labels = { ...moved.metadata.labels, zone: 'z1' };
    cache.upsertNode(moved);
    check();
    expect(affinityFilterState(incoming, cache, ns, caches).affinity.get('zone')?.get('z1')).toBe(1);
    // A node gone (its pods stay, counted nowhere) and back.
    cache.upsertPod(member('d', 'g0', 'n2'));
    check();
    cache.removeNode('n2');
    check();
    expect(at(anti(affinityFilterState(incoming, cache, ns, caches)), 'kubernetes.io/hostname', 'n2')).toBe(
      0,
    );
    const back = node('n2');
    back.metadata.labels = { ...back.metadata.labels, zone: 'z0' };
    cache.upsertNode(back);
    check();
    expect(at(anti(affinityFilterState(incoming, cache, ns, caches)), 'kubernetes.io/hostname', 'n2')).toBe(
      1,
    );
    // A pod asking about another group: its counter is built from the pods already placed.
    const other = new PodInfo(member('in2', 'g1', undefined, true));
    expect(plain(affinityFilterState(other, cache, ns))).toEqual(plain(affinityFilterState(other, bare, ns)));
    cache.removePod('default/b');
    cache.removePod('default/d');
    check();
    expect(plain(affinityFilterState(other, cache, ns))).toEqual(plain(affinityFilterState(other, bare, ns)));
  });
});
