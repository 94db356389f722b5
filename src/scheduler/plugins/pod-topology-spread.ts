/**
 * PodTopologySpread: DoNotSchedule constraints filter nodes whose domain would exceed maxSkew;
 * ScheduleAnyway constraints (and the cluster defaults) score nodes with fewer matching pods in
 * their domains higher. Counting happens once per cycle in PreFilter/PreScore.
 */
import type { TopologySpreadConstraint } from '../../api/types/core-v1.js';
import { MAX_NODE_SCORE, type Handle, type NodeScore, type Plugin } from '../framework/types.js';
import { Code, SKIP } from '../framework/status.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { requiredNodePredicate } from './node-affinity.js';
import { PLUGIN } from './names.js';
import {
  podSpreadConstraints,
  SYSTEM_DEFAULT_CONSTRAINTS,
  type SpreadConstraint,
} from './spread-constraints.js';
import { firstUntolerated } from './taints.js';

const HARD_TAINTS = new Set(['NoSchedule', 'NoExecute']);

interface FilterState {
  readonly constraints: readonly SpreadConstraint[];
  /** Per constraint: topology value → matching pods. */
  readonly counts: readonly Map<string, number>[];
  readonly minMatch: readonly number[];
  readonly selfMatch: readonly number[];
}

interface ScoreState {
  readonly constraints: readonly SpreadConstraint[];
  readonly counts: readonly Map<string, number>[];
  readonly weights: readonly number[];
  readonly ignored: ReadonlySet<string>;
}

function hasAllKeys(node: NodeInfo, cs: readonly SpreadConstraint[]): boolean {
  const labels = node.node?.metadata.labels;
  if (labels === undefined || labels === null) return cs.length === 0;
  for (const c of cs) if (labels[c.topologyKey] === undefined) return false;
  return true;
}

/**
 * Matching pods per node, by selector key, valid while the node's generation is unchanged: a
 * cycle recounts only the nodes whose pods changed since (one, when pods are placed one by one).
 */
export class MatchCountCache {
  readonly #bySelector = new Map<string, Map<NodeInfo, { gen: number; n: number }>>();

  count(node: NodeInfo, c: SpreadConstraint, ns: string): number {
    let m = this.#bySelector.get(c.selectorKey);
    if (m === undefined) {
      if (this.#bySelector.size >= 256) this.#bySelector.clear();
      this.#bySelector.set(c.selectorKey, (m = new Map<NodeInfo, { gen: number; n: number }>()));
    }
    const hit = m.get(node);
    if (hit !== undefined && hit.gen === node.generation) return hit.n;
    const n = countMatching(node, c, ns);
    m.set(node, { gen: node.generation, n });
    return n;
  }
}

function countMatching(node: NodeInfo, c: SpreadConstraint, ns: string): number {
  let n = 0;
  for (const other of node.pods.values()) {
    const m = other.pod.metadata;
    if (m.namespace !== ns || (m.deletionTimestamp !== undefined && m.deletionTimestamp !== null)) continue;
    if (c.selector(m.labels)) n++;
  }
  return n;
}

/** Whether a node counts for a constraint (node affinity and taint policies). */
function eligible(
  node: NodeInfo,
  pod: PodInfo,
  c: SpreadConstraint,
  affinity: ReturnType<typeof requiredNodePredicate>,
): boolean {
  if (node.node === undefined) return false;
  if (c.honorNodeAffinity && affinity !== undefined && !affinity(node.node)) return false;
  if (
    c.honorTaints &&
    firstUntolerated(node.taints, pod.pod.spec?.tolerations ?? [], HARD_TAINTS) !== undefined
  )
    return false;
  return true;
}

const FILTER = `${PLUGIN.PodTopologySpread}/filter`;
const SCORE = `${PLUGIN.PodTopologySpread}/score`;
const ALL = `${PLUGIN.PodTopologySpread}/constraints`;

/** The plugin; args: defaultConstraints, defaultingType (System or List). */
export function podTopologySpread(args: Record<string, unknown>, handle: Handle): Plugin {
  const defaultingType = (args['defaultingType'] as string | undefined) ?? 'System';
  const defaults =
    defaultingType === 'List'
      ? ((args['defaultConstraints'] as TopologySpreadConstraint[] | undefined) ?? [])
      : SYSTEM_DEFAULT_CONSTRAINTS;
  const constraintsOf = (pod: PodInfo): readonly SpreadConstraint[] =>
    podSpreadConstraints(pod, handle.lister, defaults);
  const cache = new MatchCountCache();
  return {
    name: PLUGIN.PodTopologySpread,
    events: [
      { resource: 'Pod', action: '*' },
      { resource: 'Node', action: '*' },
    ],
    preFilter(state, pod, snap) {
      const all = constraintsOf(pod);
      state.write(ALL, all);
      const constraints = all.filter((c) => c.hard);
      if (constraints.length === 0) return { status: SKIP };
      const ns = pod.pod.metadata.namespace ?? '';
      const affinity = requiredNodePredicate(pod.pod);
      const counts = constraints.map(() => new Map<string, number>());
      for (const node of snap.nodes) {
        if (!hasAllKeys(node, constraints)) continue;
        const labels = node.node?.metadata.labels ?? {};
        constraints.forEach((c, i) => {
          if (!eligible(node, pod, c, affinity)) return;
          const v = labels[c.topologyKey] as string;
          const m = counts[i] as Map<string, number>;
          m.set(v, (m.get(v) ?? 0) + cache.count(node, c, ns));
        });
      }
      const minMatch = constraints.map((c, i) => {
        const m = counts[i] as Map<string, number>;
        if (m.size < c.minDomains) return 0;
        let min = Infinity;
        for (const v of m.values()) min = Math.min(min, v);
        return min === Infinity ? 0 : min;
      });
      const selfMatch = constraints.map((c) => (c.selector(pod.pod.metadata.labels) ? 1 : 0));
      state.write(FILTER, { constraints, counts, minMatch, selfMatch } satisfies FilterState);
      return undefined;
    },
    filter(state, _pod, node) {
      const s = state.read<FilterState>(FILTER);
      if (s === undefined) return undefined;
      const labels = node.node?.metadata.labels ?? {};
      for (let i = 0; i < s.constraints.length; i++) {
        const c = s.constraints[i] as SpreadConstraint;
        const v = labels[c.topologyKey];
        if (v === undefined) {
          return {
            code: Code.UnschedulableAndUnresolvable,
            reasons: ["node(s) didn't match pod topology spread constraints (missing required label)"],
          };
        }
        const skew = (s.counts[i]?.get(v) ?? 0) + (s.selfMatch[i] ?? 0) - (s.minMatch[i] ?? 0);
        if (skew > c.maxSkew) {
          return {
            code: Code.Unschedulable,
            reasons: ["node(s) didn't match pod topology spread constraints"],
          };
        }
      }
      return undefined;
    },
    preScore(state, pod, filtered) {
      const all = state.read<readonly SpreadConstraint[]>(ALL) ?? constraintsOf(pod);
      const constraints = all.filter((c) => !c.hard);
      if (constraints.length === 0) return SKIP;
      // Only a pod's own constraints need every key on a node; the system defaults count per key.
      const requireAll =
        (pod.pod.spec?.topologySpreadConstraints ?? []).length > 0 || defaultingType === 'List';
      const usable = (n: NodeInfo): boolean =>
        requireAll ? hasAllKeys(n, constraints) : n.node !== undefined;
      const ignored = new Set<string>();
      const counts = constraints.map(() => new Map<string, number>());
      let hostnameSize = 0;
      for (const node of filtered) {
        if (!usable(node)) {
          ignored.add(node.name);
          continue;
        }
        hostnameSize++;
        const labels = node.node?.metadata.labels ?? {};
        constraints.forEach((c, i) => {
          const v = labels[c.topologyKey];
          if (v !== undefined) counts[i]?.set(v, 0);
        });
      }
      const ns = pod.pod.metadata.namespace ?? '';
      const affinity = requiredNodePredicate(pod.pod);
      for (const node of handle.snapshot().nodes) {
        if (!usable(node)) continue;
        const labels = node.node?.metadata.labels ?? {};
        constraints.forEach((c, i) => {
          const m = counts[i] as Map<string, number>;
          const v = labels[c.topologyKey];
          if (v === undefined) return;
          const cur = m.get(v);
          if (cur === undefined || !eligible(node, pod, c, affinity)) return;
          m.set(v, cur + cache.count(node, c, ns));
        });
      }
      const weights = constraints.map((c, i) =>
        Math.log((c.topologyKey === 'kubernetes.io/hostname' ? hostnameSize : (counts[i]?.size ?? 0)) + 2),
      );
      state.write(SCORE, { constraints, counts, weights, ignored } satisfies ScoreState);
      return undefined;
    },
    score(state, _pod, node) {
      const s = state.read<ScoreState>(SCORE);
      if (s === undefined || s.ignored.has(node.name)) return 0;
      const labels = node.node?.metadata.labels ?? {};
      let score = 0;
      s.constraints.forEach((c, i) => {
        const v = labels[c.topologyKey];
        if (v === undefined) return;
        score += (s.counts[i]?.get(v) ?? 0) * (s.weights[i] ?? 0) + (c.maxSkew - 1);
      });
      return Math.round(score);
    },
    normalizeScore(state, _pod, scores: NodeScore[]) {
      const s = state.read<ScoreState>(SCORE);
      const ignored = s?.ignored ?? new Set<string>();
      let min = Infinity;
      let max = 0;
      for (const x of scores) {
        if (ignored.has(x.name)) continue;
        min = Math.min(min, x.score);
        max = Math.max(max, x.score);
      }
      for (const x of scores) {
        if (ignored.has(x.name)) x.score = 0;
        else if (max === 0) x.score = MAX_NODE_SCORE;
        else x.score = Math.trunc((MAX_NODE_SCORE * (max + min - x.score)) / max);
      }
    },
  };
}
