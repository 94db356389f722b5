/**
 * One pod's placement decision (kube's schedulePod): PreFilter, Filter over as many nodes as
 * `percentageOfNodesToScore` asks for (starting where the last cycle stopped, so nodes share the
 * work), then Score and a random pick among the best. Synchronous: it reads only the snapshot.
 */
import { NOT_IN_PREFILTER_RESULT, type Diagnosis } from './fit-error.js';
import { Code, statusMessage, type MaybeStatus, type Status } from './framework/status.js';
import type { Framework } from './framework/runtime.js';
import type { CycleState, NodeScore, Snapshot } from './framework/types.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';

/** kube's minimum number of feasible nodes to look for. */
const MIN_FEASIBLE_NODES_TO_FIND = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE = 5;

/** How many feasible nodes to find before scoring (kube's numFeasibleNodesToFind). */
export function numFeasibleNodesToFind(percentage: number, numAllNodes: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  let pct = percentage;
  if (pct <= 0) {
    pct = 50 - Math.trunc(numAllNodes / 125);
    if (pct < MIN_FEASIBLE_NODES_PERCENTAGE) pct = MIN_FEASIBLE_NODES_PERCENTAGE;
  }
  if (pct >= 100) return numAllNodes;
  const n = Math.trunc((numAllNodes * pct) / 100);
  return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : n;
}

/** The outcome of one decision. */
export type Decision =
  | { readonly kind: 'fit'; readonly node: string; readonly evaluated: number; readonly feasible: number }
  | { readonly kind: 'unschedulable'; readonly diagnosis: Diagnosis; readonly plugins: Set<string> }
  | { readonly kind: 'error'; readonly message: string };

/** Pods nominated to a node that a pod must leave room for. */
export type NominatedPods = (node: string) => readonly PodInfo[];

/** Decides where one pod goes. Keeps the round-robin start between calls. */
export class Algorithm {
  #nextStart = 0;

  constructor(private readonly nominated: NominatedPods) {}

  /** Filters on the node, counting pods nominated there with at least the pod's priority. */
  #filter(fw: Framework, state: CycleState, pod: PodInfo, node: NodeInfo): MaybeStatus {
    const nominated = this.nominated(node.name);
    if (nominated.length > 0) {
      let copy: NodeInfo | undefined;
      for (const n of nominated) {
        if (n.key === pod.key || n.priority < pod.priority) continue;
        copy ??= node.clone();
        copy.addPod(n);
      }
      if (copy !== undefined) {
        const s = fw.runFilters(state, pod, copy);
        if (s !== undefined) return s;
      }
    }
    return fw.runFilters(state, pod, node);
  }

  decide(fw: Framework, state: CycleState, pod: PodInfo, snap: Snapshot): Decision {
    const all = snap.nodes;
    if (all.length === 0) return { kind: 'error', message: 'no nodes available to schedule pods' };
    const pf = fw.runPreFilters(state, pod, snap);
    if (pf.status !== undefined) {
      if (pf.status.code === Code.Error) return { kind: 'error', message: statusMessage(pf.status) };
      const statuses = new Map<string, Status>();
      for (const n of all) statuses.set(n.name, pf.status);
      return {
        kind: 'unschedulable',
        diagnosis: {
          numAllNodes: all.length,
          nodeStatuses: statuses,
          preFilterMessage: statusMessage(pf.status),
        },
        plugins: new Set(pf.status.plugin === undefined ? [] : [pf.status.plugin]),
      };
    }
    const plugins = new Set<string>();
    const statuses = new Map<string, Status>();
    // A pod nominated by an earlier preemption tries its node first.
    const nominatedNode = pod.pod.status?.nominatedNodeName;
    if (nominatedNode !== undefined && nominatedNode !== '') {
      const n = snap.get(nominatedNode);
      if (n !== undefined && (pf.nodeNames === undefined || pf.nodeNames.has(n.name))) {
        const s = this.#filter(fw, state, pod, n);
        if (s === undefined) return { kind: 'fit', node: n.name, evaluated: 1, feasible: 1 };
      }
    }
    const nodes = pf.nodeNames === undefined ? all : all.filter((n) => pf.nodeNames?.has(n.name));
    const want = numFeasibleNodesToFind(fw.percentageOfNodesToScore ?? 0, nodes.length);
    const feasible: NodeInfo[] = [];
    let processed = 0;
    const start = nodes.length === 0 ? 0 : this.#nextStart % nodes.length;
    for (let i = 0; i < nodes.length && feasible.length < want; i++) {
      const node = nodes[(start + i) % nodes.length] as NodeInfo;
      processed++;
      const s = this.#filter(fw, state, pod, node);
      if (s === undefined) {
        feasible.push(node);
        continue;
      }
      if (s.code === Code.Error) return { kind: 'error', message: statusMessage(s) };
      statuses.set(node.name, s);
      if (s.plugin !== undefined) plugins.add(s.plugin);
    }
    this.#nextStart = nodes.length === 0 ? 0 : (start + processed) % nodes.length;
    if (feasible.length === 0) {
      const diagnosis: Diagnosis = {
        numAllNodes: all.length,
        nodeStatuses: statuses,
        ...(pf.nodeNames === undefined ? {} : { absent: NOT_IN_PREFILTER_RESULT }),
      };
      if (pf.nodeNames !== undefined) plugins.add('NodeAffinity');
      return { kind: 'unschedulable', diagnosis, plugins };
    }
    if (feasible.length === 1) {
      return { kind: 'fit', node: (feasible[0] as NodeInfo).name, evaluated: processed, feasible: 1 };
    }
    let scores: NodeScore[];
    try {
      scores = fw.runScores(state, pod, feasible);
    } catch (err) {
      return { kind: 'error', message: err instanceof Error ? err.message : String(err) };
    }
    return { kind: 'fit', node: selectHost(scores), evaluated: processed, feasible: feasible.length };
  }
}

/** The highest score; ties broken uniformly at random (reservoir sampling, as kube). */
export function selectHost(scores: readonly NodeScore[], random: () => number = Math.random): string {
  let best = scores[0] as NodeScore;
  let ties = 1;
  for (let i = 1; i < scores.length; i++) {
    const s = scores[i] as NodeScore;
    if (s.score > best.score) {
      best = s;
      ties = 1;
    } else if (s.score === best.score) {
      ties++;
      if (random() * ties < 1) best = s;
    }
  }
  return best.name;
}
