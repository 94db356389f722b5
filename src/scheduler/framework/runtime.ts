/**
 * A profile's framework: its plugins in order at each extension point, score weights, and the
 * loops that run them as kube's framework runtime does (first rejecting filter wins; scores
 * normalized per plugin, then weighted and summed).
 */
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { Code, SKIP, errorStatus, type MaybeStatus, type Status } from './status.js';
import type { CycleState, NodeScore, Plugin, QueuedPod, Snapshot } from './types.js';

/** The plugins of one profile at each extension point. */
export interface PluginSet {
  readonly queueSort: Plugin;
  readonly preEnqueue: readonly Plugin[];
  readonly preFilter: readonly Plugin[];
  readonly filter: readonly Plugin[];
  readonly postFilter: readonly Plugin[];
  readonly preScore: readonly Plugin[];
  readonly score: readonly { readonly plugin: Plugin; readonly weight: number }[];
  readonly reserve: readonly Plugin[];
  readonly preBind: readonly Plugin[];
  readonly bind: readonly Plugin[];
  /** Every distinct plugin, for queueing events. */
  readonly all: readonly Plugin[];
}

/** The outcome of PreFilter for one pod. */
export interface PreFilterOutcome {
  readonly status: MaybeStatus;
  /** Nodes the PreFilter plugins restricted the pod to (undefined: all). */
  readonly nodeNames: ReadonlySet<string> | undefined;
}

function tag(s: Status, plugin: string): Status {
  if (s.plugin === undefined) s.plugin = plugin;
  return s;
}

/** Runs a profile's plugins. */
export class Framework {
  constructor(
    readonly schedulerName: string,
    readonly plugins: PluginSet,
    readonly percentageOfNodesToScore: number | undefined,
  ) {}

  /** kube's PreEnqueue: the first plugin refusing keeps the pod out of the active queue. */
  runPreEnqueue(pod: PodInfo): MaybeStatus {
    for (const p of this.plugins.preEnqueue) {
      const s = p.preEnqueue?.(pod.pod);
      if (s !== undefined) return tag({ ...s }, p.name);
    }
    return undefined;
  }

  less(a: QueuedPod, b: QueuedPod): boolean {
    return this.plugins.queueSort.less?.(a, b) ?? a.timestamp < b.timestamp;
  }

  runPreFilters(state: CycleState, pod: PodInfo, snap: Snapshot): PreFilterOutcome {
    let names: Set<string> | undefined;
    for (const p of this.plugins.preFilter) {
      let r;
      try {
        r = p.preFilter?.(state, pod, snap);
      } catch (err) {
        return {
          status: tag(errorStatus(err, `running PreFilter plugin "${p.name}"`), p.name),
          nodeNames: undefined,
        };
      }
      if (r?.status !== undefined) {
        if (r.status.code === Code.Skip) {
          state.skipFilter.add(p.name);
          continue;
        }
        return { status: tag({ ...r.status }, p.name), nodeNames: undefined };
      }
      if (r?.nodeNames !== undefined) {
        if (names === undefined) names = new Set(r.nodeNames);
        else for (const n of names) if (!r.nodeNames.has(n)) names.delete(n);
      }
    }
    return { status: undefined, nodeNames: names };
  }

  /** Runs every Filter plugin not skipped; the first rejection is the node's status. */
  runFilters(state: CycleState, pod: PodInfo, node: NodeInfo): MaybeStatus {
    for (const p of this.plugins.filter) {
      if (state.skipFilter.has(p.name) || p.filter === undefined) continue;
      let s: MaybeStatus;
      try {
        s = p.filter(state, pod, node);
      } catch (err) {
        s = errorStatus(err, `running Filter plugin "${p.name}"`);
      }
      if (s !== undefined) return tag(s, p.name);
    }
    return undefined;
  }

  /** PreScore then Score, NormalizeScore and weights: total per node, in `nodes` order. */
  runScores(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): NodeScore[] {
    for (const p of this.plugins.preScore) {
      const s = p.preScore?.(state, pod, nodes);
      if (s === SKIP || s?.code === Code.Skip) state.skipScore.add(p.name);
      else if (s !== undefined) throw new Error(`PreScore plugin "${p.name}": ${s.reasons.join(', ')}`);
    }
    const totals: NodeScore[] = nodes.map((n) => ({ name: n.name, score: 0 }));
    for (const { plugin, weight } of this.plugins.score) {
      if (state.skipScore.has(plugin.name) || plugin.score === undefined) continue;
      const scores: NodeScore[] = nodes.map((n) => ({
        name: n.name,
        score: plugin.score?.(state, pod, n) ?? 0,
      }));
      plugin.normalizeScore?.(state, pod, scores);
      for (let i = 0; i < scores.length; i++)
        (totals[i] as NodeScore).score += (scores[i] as NodeScore).score * weight;
    }
    return totals;
  }

  /** Reserve in order; on failure the ones already run are unreserved. */
  runReserve(state: CycleState, pod: PodInfo, nodeName: string): MaybeStatus {
    for (let i = 0; i < this.plugins.reserve.length; i++) {
      const p = this.plugins.reserve[i] as Plugin;
      let s: MaybeStatus;
      try {
        s = p.reserve?.(state, pod, nodeName);
      } catch (err) {
        s = errorStatus(err, `running Reserve plugin "${p.name}"`);
      }
      if (s !== undefined) {
        this.runUnreserve(state, pod, nodeName);
        return tag(s, p.name);
      }
    }
    return undefined;
  }

  /** Unreserve in reverse order; never throws. */
  runUnreserve(state: CycleState, pod: PodInfo, nodeName: string): void {
    for (let i = this.plugins.reserve.length - 1; i >= 0; i--) {
      try {
        this.plugins.reserve[i]?.unreserve?.(state, pod, nodeName);
      } catch {
        // Unreserve must not fail; a broken plugin cannot stop the others from releasing.
      }
    }
  }

  async runPreBind(state: CycleState, pod: PodInfo, nodeName: string): Promise<MaybeStatus> {
    for (const p of this.plugins.preBind) {
      if (state.skipFilter.has(p.name)) continue;
      const s = await p.preBind?.(state, pod, nodeName);
      if (s !== undefined) return tag(s, p.name);
    }
    return undefined;
  }

  /** The first Bind plugin that does not Skip binds. */
  async runBind(state: CycleState, pod: PodInfo, nodeName: string): Promise<MaybeStatus> {
    for (const p of this.plugins.bind) {
      const s = await p.bind?.(state, pod, nodeName);
      if (s?.code === Code.Skip) continue;
      return s === undefined ? undefined : tag(s, p.name);
    }
    return { code: Code.Error, reasons: ['no bind plugin bound the pod'] };
  }
}
