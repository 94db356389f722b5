/**
 * InterPodAffinity: required pod affinity and anti-affinity of the incoming pod, and the required
 * anti-affinity of pods already placed (symmetry), over any topology key; preferred terms of both
 * sides score. PreFilter reads the counts of matching pods per topology pair, kept by the cache
 * as pods come and go, so a cycle costs lookups per term and Filter a few per node.
 */
import type { Handle, NodeScore, Plugin, Snapshot } from '../framework/types.js';
import { MAX_NODE_SCORE } from '../framework/types.js';
import { Code, SKIP } from '../framework/status.js';
import type { NodeInfo } from '../node-info.js';
import { termMatches, type AffinityTerm, type NamespaceLabels, type PodInfo } from '../pod-info.js';
import {
  bumpTopology,
  cacheKey,
  NodeAntiTerms,
  NodeMatchCounts,
  topologyCount,
  type TopologyCounts,
} from './affinity-counts.js';
import { PLUGIN } from './names.js';

/** Pods per value of one topology key. */
interface KeyCounts {
  readonly topologyKey: string;
  readonly counts: ReadonlyMap<string, number>;
}

interface FilterState {
  /** Existing pods' required anti-affinity terms matching the incoming pod: their pods per topology. */
  readonly existingAnti: readonly KeyCounts[];
  /** Existing pods matching all of the incoming pod's required affinity terms. */
  readonly affinity: TopologyCounts;
  /** Existing pods matching the incoming pod's required anti-affinity terms (any entry counts). */
  readonly anti: readonly TopologyCounts[];
  readonly matchesSelf: boolean;
}

function matchesAll(terms: readonly AffinityTerm[], pod: PodInfo, ns: NamespaceLabels): boolean {
  if (terms.length === 0) return false;
  for (const t of terms) if (!termMatches(t, pod.pod, ns)) return false;
  return true;
}

/** The caches the filter state is computed from (one set per plugin instance). */
export interface AffinityCaches {
  readonly matches: NodeMatchCounts;
  readonly antiTerms: NodeAntiTerms;
}

/** Fresh caches (tests and one-off callers). */
export function affinityCaches(): AffinityCaches {
  return { matches: new NodeMatchCounts(), antiTerms: new NodeAntiTerms() };
}

/**
 * Placed pods matching all of `terms`, per topology key of each term and value: from the
 * snapshot's index when it has one and counts these terms, else node by node (per-node results
 * cached by node generation).
 */
function matchingCounts(
  terms: readonly AffinityTerm[],
  snap: Snapshot,
  ns: NamespaceLabels,
  caches: AffinityCaches,
): TopologyCounts {
  const indexed = snap.affinityIndex?.matching(terms);
  if (indexed !== undefined) return indexed;
  const counts: TopologyCounts = new Map();
  const key = cacheKey(terms);
  const matches = (other: PodInfo): boolean => matchesAll(terms, other, ns);
  for (const node of snap.nodes) {
    if (node.node === undefined || node.pods.size === 0) continue;
    const n = caches.matches.count(node, key, matches);
    if (n > 0) for (const t of terms) bumpTopology(counts, node, t.topologyKey, n);
  }
  return counts;
}

/** Existing pods' required anti-affinity terms that select `pod`, with their pods per topology. */
function existingAntiCounts(
  pod: PodInfo,
  snap: Snapshot,
  ns: NamespaceLabels,
  caches: AffinityCaches,
): KeyCounts[] {
  const index = snap.affinityIndex;
  if (index !== undefined) {
    const out: KeyCounts[] = [];
    for (const e of index.antiTerms())
      if (termMatches(e.term, pod.pod, ns)) out.push({ topologyKey: e.term.topologyKey, counts: e.counts });
    return out;
  }
  const counts: TopologyCounts = new Map();
  const matched = new Map<string, boolean>();
  for (const node of snap.nodesWithRequiredAntiAffinityPods()) {
    for (const e of caches.antiTerms.of(node)) {
      let m = matched.get(e.term.key);
      if (m === undefined) matched.set(e.term.key, (m = termMatches(e.term, pod.pod, ns)));
      if (m) bumpTopology(counts, node, e.term.topologyKey, e.count);
    }
  }
  return [...counts].map(([topologyKey, c]) => ({ topologyKey, counts: c }));
}

/**
 * The counts the filter needs (exported for tests and preemption's dry runs), as kube's
 * PreFilter: existing pods' anti-affinity terms matching the pod, and existing pods matching the
 * pod's affinity and anti-affinity terms, per topology pair. The cache's snapshot keeps them with
 * its pods (src/scheduler/affinity-index.ts); other snapshots count node by node, from per-node
 * results cached by node generation.
 */
export function affinityFilterState(
  pod: PodInfo,
  snap: Snapshot,
  ns: NamespaceLabels,
  caches: AffinityCaches = affinityCaches(),
): FilterState {
  const required = pod.requiredAffinity;
  return {
    existingAnti: existingAntiCounts(pod, snap, ns, caches),
    affinity:
      required.length > 0
        ? matchingCounts(required, snap, ns, caches)
        : new Map<string, Map<string, number>>(),
    anti: pod.requiredAntiAffinity.map((t) => matchingCounts([t], snap, ns, caches)),
    matchesSelf: matchesAll(required, pod, ns),
  };
}

function satisfiesAffinity(s: FilterState, pod: PodInfo, node: NodeInfo): boolean {
  const labels = node.node?.metadata.labels ?? {};
  let exist = true;
  for (const t of pod.requiredAffinity) {
    const v = labels[t.topologyKey];
    if (v === undefined) return false;
    if (topologyCount(s.affinity, t.topologyKey, v) <= 0) exist = false;
  }
  return exist || (s.affinity.size === 0 && s.matchesSelf);
}

function satisfiesAnti(s: FilterState, pod: PodInfo, node: NodeInfo): boolean {
  const labels = node.node?.metadata.labels ?? {};
  for (const t of pod.requiredAntiAffinity) {
    const v = labels[t.topologyKey];
    if (v === undefined) continue;
    for (const counts of s.anti) if (topologyCount(counts, t.topologyKey, v) > 0) return false;
  }
  return true;
}

function satisfiesExistingAnti(s: FilterState, node: NodeInfo): boolean {
  if (s.existingAnti.length === 0) return true;
  const labels = node.node?.metadata.labels ?? {};
  for (const e of s.existingAnti) {
    const v = labels[e.topologyKey];
    if (v !== undefined && (e.counts.get(v) ?? 0) > 0) return false;
  }
  return true;
}

/** Topology scores: key → value → score. */
type TopologyScore = TopologyCounts;

const addScore = bumpTopology;

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
  const caches = affinityCaches();
  const countMatching = (node: NodeInfo, t: AffinityTerm): number =>
    caches.matches.count(node, cacheKey([t]), (other) => termMatches(t, other.pod, ns));
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
      const s = affinityFilterState(pod, snap, ns, caches);
      if (
        pod.requiredAffinity.length === 0 &&
        pod.requiredAntiAffinity.length === 0 &&
        s.existingAnti.length === 0
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
            addScore(ts, node, t.topologyKey, t.weight * countMatching(node, t));
          for (const t of pod.preferredAntiAffinity)
            addScore(ts, node, t.topologyKey, -t.weight * countMatching(node, t));
        }
      }
      for (const node of snap.nodesWithAffinityPods()) {
        any = true;
        if (node.podsWithScoringTerms === 0) continue;
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
