/**
 * The topology spread constraints PodTopologySpread applies to a pod: its own, or the cluster's
 * default constraints with a selector built from the Services, ReplicationControllers,
 * ReplicaSets and StatefulSets that select it (kube's DefaultSelector).
 */
import type { LabelSelector } from '../../api/types/meta-v1.js';
import type { TopologySpreadConstraint } from '../../api/types/core-v1.js';
import type { ClusterLister } from '../framework/types.js';
import type { PodInfo } from '../pod-info.js';
import { compileLabelSelector, compileMapSelector, type LabelPredicate } from '../selectors.js';

/** A constraint ready to evaluate. */
export interface SpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly hard: boolean;
  readonly minDomains: number;
  readonly selector: LabelPredicate;
  /** Identifies the selector (and namespace): counts of matching pods per node are cached under it. */
  readonly selectorKey: string;
  readonly honorNodeAffinity: boolean;
  readonly honorTaints: boolean;
}

/** kube's system default constraints (defaultingType System). */
export const SYSTEM_DEFAULT_CONSTRAINTS: readonly TopologySpreadConstraint[] = [
  { maxSkew: 3, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway' },
  { maxSkew: 5, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
];

function withMatchLabelKeys(
  sel: LabelSelector | undefined,
  keys: readonly string[],
  pod: PodInfo,
): LabelSelector | undefined {
  if (sel === undefined || keys.length === 0) return sel;
  const labels = pod.pod.metadata.labels ?? {};
  const extra = keys
    .filter((k) => labels[k] !== undefined)
    .map((k) => ({ key: k, operator: 'In', values: [labels[k] as string] }));
  return { ...sel, matchExpressions: [...(sel.matchExpressions ?? []), ...extra] };
}

function compile(
  c: TopologySpreadConstraint,
  selector: LabelPredicate,
  selectorKey: string,
): SpreadConstraint {
  return {
    selectorKey,
    maxSkew: c.maxSkew ?? 1,
    topologyKey: c.topologyKey ?? '',
    hard: (c.whenUnsatisfiable ?? 'DoNotSchedule') === 'DoNotSchedule',
    minDomains: c.minDomains ?? 1,
    selector,
    honorNodeAffinity: (c.nodeAffinityPolicy ?? 'Honor') === 'Honor',
    honorTaints: (c.nodeTaintsPolicy ?? 'Ignore') === 'Honor',
  };
}

/** The selector of the pod's owners and services (and its key), or undefined when nothing selects it. */
export function defaultSelector(pod: PodInfo, lister: ClusterLister): [LabelPredicate, string] | undefined {
  const ns = pod.pod.metadata.namespace ?? '';
  const labels = pod.pod.metadata.labels;
  const preds: LabelPredicate[] = [];
  const keys: unknown[] = [ns];
  const maps: Record<string, string> = {};
  for (const s of lister.services(ns)) {
    const sel = s.spec?.selector;
    if (sel !== undefined && Object.keys(sel).length > 0 && compileMapSelector(sel)(labels))
      Object.assign(maps, sel);
  }
  for (const rc of lister.replicationControllers(ns)) {
    const sel = rc.spec?.selector;
    if (sel !== undefined && Object.keys(sel).length > 0 && compileMapSelector(sel)(labels))
      Object.assign(maps, sel);
  }
  if (Object.keys(maps).length > 0) {
    preds.push(compileMapSelector(maps));
    keys.push(maps);
  }
  for (const owner of [...lister.replicaSets(ns), ...lister.statefulSets(ns)]) {
    const p = compileLabelSelector(owner.spec?.selector);
    if (p(labels)) {
      preds.push(p);
      keys.push(owner.spec?.selector);
    }
  }
  if (preds.length === 0) return undefined;
  return [(l) => preds.every((p) => p(l)), JSON.stringify(keys)];
}

/**
 * The pod's hard (DoNotSchedule) and soft (ScheduleAnyway) constraints. `defaults` are used
 * only when the pod has none of its own.
 */
export function podSpreadConstraints(
  pod: PodInfo,
  lister: ClusterLister,
  defaults: readonly TopologySpreadConstraint[],
): readonly SpreadConstraint[] {
  const own = pod.pod.spec?.topologySpreadConstraints ?? [];
  if (own.length > 0) {
    const ns = pod.pod.metadata.namespace ?? '';
    return own.map((c) => {
      const sel = withMatchLabelKeys(c.labelSelector, c.matchLabelKeys ?? [], pod);
      return compile(c, compileLabelSelector(sel), JSON.stringify([ns, sel ?? null]));
    });
  }
  if (defaults.length === 0) return [];
  const sel = defaultSelector(pod, lister);
  if (sel === undefined) return [];
  return defaults.map((c) => compile(c, sel[0], sel[1]));
}
