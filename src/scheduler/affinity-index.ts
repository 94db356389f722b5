/**
 * Per-topology counts InterPodAffinity's PreFilter reads, kept up to date by the cache as pods
 * are placed and removed and as nodes come, go or change labels, so that a cycle costs a few
 * lookups instead of a walk over every node (kube recomputes these counts from every placed pod
 * each cycle, in parallel):
 * - the distinct required anti-affinity terms of placed pods, each with the number of its pods
 *   per value of its topology key (the incoming pod may not go where a term selecting it counts);
 * - for a set of terms an incoming pod asks about (its required affinity terms together, each of
 *   its required anti-affinity terms), the placed pods matching them all, per topology key and
 *   value. Such a counter is built on first use from every placed pod and then kept; at most
 *   {@link MAX_COUNTERS} are kept. Terms with a namespace selector are not counted here (their
 *   matches change with namespace labels): the plugin counts them per cycle.
 *
 * A pod counts only on a node the cache has a Node object for, under that node's labels.
 */
import type { Labels } from './selectors.js';
import type { NodeInfo } from './node-info.js';
import { termMatches, type AffinityTerm, type PodInfo } from './pod-info.js';

/** Counts per topology key, then per topology value (no zero entries, no empty maps). */
export type TopologyCounts = Map<string, Map<string, number>>;

/** One distinct required anti-affinity term of placed pods, with its pods per topology value. */
export interface AntiTermCounts {
  readonly term: AffinityTerm;
  /** Pods carrying the term, per value of `term.topologyKey`. */
  readonly counts: Map<string, number>;
  /** Pods carrying the term (also those on nodes without the topology label). */
  pods: number;
}

interface Counter {
  readonly terms: readonly AffinityTerm[];
  readonly counts: TopologyCounts;
}

/** How many matching-pod counters are kept before they are all dropped (and rebuilt on use). */
export const MAX_COUNTERS = 256;

const NO_NAMESPACE_LABELS = (): Labels => ({});

/** Adds `by` to `m[v]`, deleting the entry at 0. */
function bump(m: Map<string, number>, v: string, by: number): void {
  const n = (m.get(v) ?? 0) + by;
  if (n === 0) m.delete(v);
  else m.set(v, n);
}

/** Adds `by` to `counts[key][labels[key]]` (nothing when the node lacks the label). */
function bumpKey(counts: TopologyCounts, labels: Labels, key: string, by: number): void {
  const v = labels?.[key];
  if (v === undefined) return;
  let m = counts.get(key);
  if (m === undefined) counts.set(key, (m = new Map<string, number>()));
  bump(m, v, by);
  if (m.size === 0) counts.delete(key);
}

/** The key of a set of terms, or undefined when one has a namespace selector. */
export function termsKey(terms: readonly AffinityTerm[]): string | undefined {
  if (terms.some((t) => t.namespaceSelector !== undefined)) return undefined;
  return terms.length === 1 ? (terms[0] as AffinityTerm).key : `all\0${terms.map((t) => t.key).join('\0')}`;
}

function matchesAll(terms: readonly AffinityTerm[], pod: PodInfo): boolean {
  for (const t of terms) if (!termMatches(t, pod.pod, NO_NAMESPACE_LABELS)) return false;
  return terms.length > 0;
}

/** The counts; owned and updated by the scheduler's cache. */
export class AffinityIndex {
  readonly #anti = new Map<string, AntiTermCounts>();
  readonly #counters = new Map<string, Counter>();

  /** @param nodes every node of the cache (a new counter counts their pods). */
  constructor(private readonly nodes: () => Iterable<NodeInfo>) {}

  /** The distinct required anti-affinity terms of placed pods. */
  antiTerms(): Iterable<AntiTermCounts> {
    return this.#anti.values();
  }

  /**
   * Placed pods matching every one of `terms`, per topology key of each term and value;
   * undefined for terms this index does not count (with a namespace selector, or none).
   */
  matching(terms: readonly AffinityTerm[]): TopologyCounts | undefined {
    if (terms.length === 0) return undefined;
    const key = termsKey(terms);
    if (key === undefined) return undefined;
    let c = this.#counters.get(key);
    if (c === undefined) {
      if (this.#counters.size >= MAX_COUNTERS) this.#counters.clear();
      c = { terms, counts: new Map() };
      for (const node of this.nodes()) {
        const labels = node.node?.metadata.labels;
        if (labels === undefined) continue;
        for (const pod of node.pods.values()) if (matchesAll(terms, pod)) this.#count(c, labels, 1);
      }
      this.#counters.set(key, c);
    }
    return c.counts;
  }

  #count(c: Counter, labels: Labels, sign: 1 | -1): void {
    for (const t of c.terms) bumpKey(c.counts, labels, t.topologyKey, sign);
  }

  /** A pod placed on (1) or removed from (-1) `node`; call while the node holds its labels. */
  pod(node: NodeInfo, pod: PodInfo, sign: 1 | -1): void {
    if (node.node === undefined) return;
    const labels = node.node.metadata.labels;
    for (const t of pod.requiredAntiAffinity) {
      let e = this.#anti.get(t.key);
      if (e === undefined) this.#anti.set(t.key, (e = { term: t, counts: new Map(), pods: 0 }));
      e.pods += sign;
      const v = labels?.[t.topologyKey];
      if (v !== undefined) bump(e.counts, v, sign);
      if (e.pods <= 0) this.#anti.delete(t.key);
    }
    for (const c of this.#counters.values()) if (matchesAll(c.terms, pod)) this.#count(c, labels, sign);
  }

  /** Every pod of `node` added (1, the node now has labels) or removed (-1, before they change). */
  node(node: NodeInfo, sign: 1 | -1): void {
    for (const pod of node.pods.values()) this.pod(node, pod, sign);
  }
}
