/**
 * Per-node summaries InterPodAffinity reads every cycle, cached by node and recomputed only when
 * the node's generation moved (a pod came or went, the node changed). A cycle then costs a few
 * lookups per node instead of a label-selector match per placed pod: the PreFilter of a pod with
 * required anti-affinity on a cluster of P pods was O(P) selector matches, it is now O(nodes)
 * lookups plus O(pods changed since the last cycle) matches.
 */
import { termsKey, type TopologyCounts } from '../affinity-index.js';
import type { NodeInfo } from '../node-info.js';
import type { AffinityTerm, PodInfo } from '../pod-info.js';

export type { TopologyCounts };

/** Adds `by` to the count of the node's value of `key` (nodes without the label count nowhere). */
export function bumpTopology(counts: TopologyCounts, node: NodeInfo, key: string, by: number): void {
  const v = node.node?.metadata.labels?.[key];
  if (v === undefined || by === 0) return;
  let m = counts.get(key);
  if (m === undefined) counts.set(key, (m = new Map<string, number>()));
  m.set(v, (m.get(v) ?? 0) + by);
}

/** The count of `value` under `key`. */
export function topologyCount(counts: TopologyCounts, key: string, value: string): number {
  return counts.get(key)?.get(value) ?? 0;
}

/**
 * Pods on a node matching a predicate, by predicate key (a term's key, or several terms' keys
 * for "matches them all"), per node generation. At most 256 predicates are remembered. A key of
 * `undefined` is never cached: terms with a namespace selector, whose matches change with
 * namespace labels and not with the node.
 */
export class NodeMatchCounts {
  readonly #byKey = new Map<string, WeakMap<NodeInfo, { gen: number; n: number }>>();

  count(node: NodeInfo, key: string | undefined, matches: (pod: PodInfo) => boolean): number {
    if (key === undefined) return countPods(node, matches);
    let m = this.#byKey.get(key);
    if (m === undefined) {
      if (this.#byKey.size >= 256) this.#byKey.clear();
      this.#byKey.set(key, (m = new WeakMap<NodeInfo, { gen: number; n: number }>()));
    }
    const hit = m.get(node);
    if (hit !== undefined && hit.gen === node.generation) return hit.n;
    const n = countPods(node, matches);
    m.set(node, { gen: node.generation, n });
    return n;
  }
}

function countPods(node: NodeInfo, matches: (pod: PodInfo) => boolean): number {
  let n = 0;
  for (const other of node.pods.values()) if (matches(other)) n++;
  return n;
}

/** The cache key of a term's matches; undefined (not cacheable) with a namespace selector. */
export const cacheKey = termsKey;

/** One distinct term of the pods on a node, with how many of them carry it. */
export interface CountedTerm {
  readonly term: AffinityTerm;
  count: number;
}

/**
 * The distinct required anti-affinity terms of the pods on each node (by term key), per node
 * generation: pods of one workload share their terms, so a node of many such pods has one entry.
 */
export class NodeAntiTerms {
  readonly #byNode = new WeakMap<NodeInfo, { gen: number; terms: CountedTerm[] }>();

  of(node: NodeInfo): readonly CountedTerm[] {
    const hit = this.#byNode.get(node);
    if (hit !== undefined && hit.gen === node.generation) return hit.terms;
    const byKey = new Map<string, CountedTerm>();
    for (const pod of node.podsWithRequiredAntiAffinity) {
      for (const t of pod.requiredAntiAffinity) {
        const e = byKey.get(t.key);
        if (e === undefined) byKey.set(t.key, { term: t, count: 1 });
        else e.count++;
      }
    }
    const terms = [...byKey.values()];
    this.#byNode.set(node, { gen: node.generation, terms });
    return terms;
  }
}
