/**
 * InterPodAffinity: required pod affinity and anti-affinity of the incoming pod, and the required
 * anti-affinity of pods already placed (symmetry), over any topology key; preferred terms of both
 * sides score. PreFilter counts matching pods per topology pair once per cycle, so Filter is a
 * few map lookups per node.
 */
import type { Handle, NodeScore, Plugin, Snapshot } from '../framework/types.js';
import { MAX_NODE_SCORE } from '../framework/types.js';
import { Code, SKIP } from '../framework/status.js';
import type { NodeInfo } from '../node-info.js';
import { termMatches, type AffinityTerm, type NamespaceLabels, type PodInfo } from '../pod-info.js';
import { PLUGIN } from './names.js';

/** Counts per `key\0value` topology pair. */
type PairCounts = Map<string, number>;

interface FilterState {
  readonly existingAnti: PairCounts;
  readonly affinity: PairCounts;
  readonly anti: PairCounts;
  readonly matchesSelf: boolean;
}

const pair = (k: string, v: string): string => `${k}\0${v}`;

function bump(counts: PairCounts, node: NodeInfo, key: string, by: number): void {
  const v = node.node?.metadata.labels?.[key];
  if (v === undefined) return;
  const p = pair(key, v);
  counts.set(p, (counts.get(p) ?? 0) + by);
}

function matchesAll(terms: readonly AffinityTerm[], pod: PodInfo, ns: NamespaceLabels): boolean {
  if (terms.length === 0) return false;
  for (const t of terms) if (!termMatches(t, pod.pod, ns)) return false;
  return true;
}

/** The counts the filter needs (exported for tests and preemption's dry runs). */
export function affinityFilterState(pod: PodInfo, snap: Snapshot, ns: NamespaceLabels): FilterState {
  const existingAnti: PairCounts = new Map();
  for (const node of snap.nodesWithRequiredAntiAffinityPods()) {
    for (const other of node.podsWithRequiredAntiAffinity) {
      for (const t of other.requiredAntiAffinity) {
        if (termMatches(t, pod.pod, ns)) bump(existingAnti, node, t.topologyKey, 1);
      }
    }
  }
  const affinity: PairCounts = new Map();
  const anti: PairCounts = new Map();
  if (pod.requiredAffinity.length > 0 || pod.requiredAntiAffinity.length > 0) {
    for (const node of snap.nodes) {
      if (node.node === undefined) continue;
      for (const other of node.pods.values()) {
        if (pod.requiredAffinity.length > 0 && matchesAll(pod.requiredAffinity, other, ns)) {
          for (const t of pod.requiredAffinity) bump(affinity, node, t.topologyKey, 1);
        }
        for (const t of pod.requiredAntiAffinity) {
          if (termMatches(t, other.pod, ns)) bump(anti, node, t.topologyKey, 1);
        }
      }
    }
  }
  return { existingAnti, affinity, anti, matchesSelf: matchesAll(pod.requiredAffinity, pod, ns) };
}

function satisfiesAffinity(s: FilterState, pod: PodInfo, node: NodeInfo): boolean {
  const labels = node.node?.metadata.labels ?? {};
  let exist = true;
  for (const t of pod.requiredAffinity) {
    const v = labels[t.topologyKey];
    if (v === undefined) return false;
    if ((s.affinity.get(pair(t.topologyKey, v)) ?? 0) <= 0) exist = false;
  }
  return exist || (s.affinity.size === 0 && s.matchesSelf);
}

function satisfiesAnti(s: FilterState, pod: PodInfo, node: NodeInfo): boolean {
  const labels = node.node?.metadata.labels ?? {};
  for (const t of pod.requiredAntiAffinity) {
    const v = labels[t.topologyKey];
    if (v !== undefined && (s.anti.get(pair(t.topologyKey, v)) ?? 0) > 0) return false;
  }
  return true;
}

function satisfiesExistingAnti(s: FilterState, node: NodeInfo): boolean {
  if (s.existingAnti.size === 0) return true;
  const labels = node.node?.metadata.labels ?? {};
  for (const k in labels) {
    if ((s.existingAnti.get(pair(k, labels[k] as string)) ?? 0) > 0) return false;
  }
  return true;
}

/** Topology scores: key → value → score. */
type TopologyScore = Map<string, Map<string, number>>;

function addScore(ts: TopologyScore, node: NodeInfo, key: string, w: number): void {
  const v = node.node?.metadata.labels?.[key];
  if (v === undefined || w === 0) return;
  let m = ts.get(key);
  if (m === undefined) ts.set(key, (m = new Map<string, number>()));
  m.set(v, (m.get(v) ?? 0) + w);
}

/** Pods on a node matching a term, cached by term key and node generation. */
class TermCountCache {
  readonly #byTerm = new Map<string, Map<NodeInfo, { gen: number; n: number }>>();

  count(node: NodeInfo, t: AffinityTerm, ns: NamespaceLabels): number {
    let m = this.#byTerm.get(t.key);
    if (m === undefined) {
      if (this.#byTerm.size >= 256) this.#byTerm.clear();
      this.#byTerm.set(t.key, (m = new Map<NodeInfo, { gen: number; n: number }>()));
    }
    const hit = m.get(node);
    if (hit !== undefined && hit.gen === node.generation) return hit.n;
    let n = 0;
    for (const other of node.pods.values()) if (termMatches(t, other.pod, ns)) n++;
    m.set(node, { gen: node.generation, n });
    return n;
  }
}

/** The scoring terms of the pods on a node, summed per distinct term (signed weights). */
class ExistingTermsCache {
  readonly #byNode = new Map<
    NodeInfo,
    { gen: number; terms: Map<string, { term: AffinityTerm; weight: number }> }
  >();

  of(
    node: NodeInfo,
    hardWeight: number,
    ignorePreferred: boolean,
  ): Map<string, { term: AffinityTerm; weight: number }> {
    const hit = this.#byNode.get(node);
    if (hit !== undefined && hit.gen === node.generation) return hit.terms;
    const terms = new Map<string, { term: AffinityTerm; weight: number }>();
    const add = (t: AffinityTerm, w: number, kind: string): void => {
      if (w === 0) return;
      const k = `${kind}\0${t.key}`;
      const e = terms.get(k);
      if (e === undefined) terms.set(k, { term: t, weight: w });
      else e.weight += w;
    };
    for (const other of node.podsWithAffinity) {
      if (hardWeight > 0) for (const t of other.requiredAffinity) add(t, hardWeight, 'r');
      if (ignorePreferred) continue;
      for (const t of other.preferredAffinity) add(t, t.weight, 'p');
      for (const t of other.preferredAntiAffinity) add(t, -t.weight, 'a');
    }
    this.#byNode.set(node, { gen: node.generation, terms });
    return terms;
  }
}

const FILTER = `${PLUGIN.InterPodAffinity}/filter`;
const SCORE = `${PLUGIN.InterPodAffinity}/score`;

/** The plugin; args: hardPodAffinityWeight (default 1), ignorePreferredTermsOfExistingPods. */
export function interPodAffinity(args: Record<string, unknown>, handle: Handle): Plugin {
  const hardWeight = (args['hardPodAffinityWeight'] as number | undefined) ?? 1;
  const ignoreExisting = (args['ignorePreferredTermsOfExistingPods'] as boolean | undefined) ?? false;
  const ns: NamespaceLabels = (n) => handle.lister.namespaceLabels(n);
  const counts = new TermCountCache();
  const summaries = new ExistingTermsCache();
  return {
    name: PLUGIN.InterPodAffinity,
    events: [
      { resource: 'Pod', action: '*' },
      { resource: 'Node', action: 'Add' },
      { resource: 'Node', action: 'Update' },
      { resource: 'Namespace', action: '*' },
    ],
    preFilter(state, pod, snap) {
      const s = affinityFilterState(pod, snap, ns);
      if (
        pod.requiredAffinity.length === 0 &&
        pod.requiredAntiAffinity.length === 0 &&
        s.existingAnti.size === 0
      ) {
        return { status: SKIP };
      }
      state.write(FILTER, s);
      return undefined;
    },
    filter(state, pod, node) {
      const s = state.read<FilterState>(FILTER);
      if (s === undefined) return undefined;
      if (!satisfiesAffinity(s, pod, node)) {
        return {
          code: Code.UnschedulableAndUnresolvable,
          reasons: ["node(s) didn't match pod affinity rules"],
        };
      }
      if (!satisfiesAnti(s, pod, node)) {
        return { code: Code.Unschedulable, reasons: ["node(s) didn't match pod anti-affinity rules"] };
      }
      if (!satisfiesExistingAnti(s, node)) {
        return {
          code: Code.Unschedulable,
          reasons: ["node(s) didn't satisfy existing pods anti-affinity rules"],
        };
      }
      return undefined;
    },
    preScore(state, pod) {
      const snap = handle.snapshot();
      const hasPreferred = pod.preferredAffinity.length + pod.preferredAntiAffinity.length > 0;
      const ts: TopologyScore = new Map();
      let any = false;
      const matchesIncoming = new Map<string, boolean>();
      if (hasPreferred) {
        for (const node of snap.nodes) {
          if (node.pods.size === 0) continue;
          any = true;
          for (const t of pod.preferredAffinity)
            addScore(ts, node, t.topologyKey, t.weight * counts.count(node, t, ns));
          for (const t of pod.preferredAntiAffinity)
            addScore(ts, node, t.topologyKey, -t.weight * counts.count(node, t, ns));
        }
      }
      for (const node of snap.nodesWithAffinityPods()) {
        any = true;
        for (const e of summaries.of(node, hardWeight, ignoreExisting).values()) {
          let m = matchesIncoming.get(e.term.key);
          if (m === undefined) matchesIncoming.set(e.term.key, (m = termMatches(e.term, pod.pod, ns)));
          if (m) addScore(ts, node, e.term.topologyKey, e.weight);
        }
      }
      if (!any || ts.size === 0) return SKIP;
      state.write(SCORE, ts);
      return undefined;
    },
    score(state, _pod, node) {
      const ts = state.read<TopologyScore>(SCORE);
      if (ts === undefined) return 0;
      const labels = node.node?.metadata.labels ?? {};
      let total = 0;
      for (const [key, values] of ts) {
        const v = labels[key];
        if (v !== undefined) total += values.get(v) ?? 0;
      }
      return total;
    },
    normalizeScore(_state, _pod, scores: NodeScore[]) {
      if (scores.length === 0) return;
      let min = Infinity;
      let max = -Infinity;
      for (const s of scores) {
        min = Math.min(min, s.score);
        max = Math.max(max, s.score);
      }
      const diff = max - min;
      for (const s of scores) s.score = diff > 0 ? Math.trunc((MAX_NODE_SCORE * (s.score - min)) / diff) : 0;
    },
  };
}
