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

function compile(c: TopologySpreadConstraint, selector: LabelPredicate): SpreadConstraint {
  return {
    maxSkew: c.maxSkew ?? 1,
    topologyKey: c.topologyKey ?? '',
    hard: (c.whenUnsatisfiable ?? 'DoNotSchedule') === 'DoNotSchedule',
    minDomains: c.minDomains ?? 1,
    selector,
    honorNodeAffinity: (c.nodeAffinityPolicy ?? 'Honor') === 'Honor',
    honorTaints: (c.nodeTaintsPolicy ?? 'Ignore') === 'Honor',
  };
}

/** The selector of the pod's owners and services, or undefined when nothing selects it. */
export function defaultSelector(pod: PodInfo, lister: ClusterLister): LabelPredicate | undefined {
  const ns = pod.pod.metadata.namespace ?? '';
  const labels = pod.pod.metadata.labels;
  const preds: LabelPredicate[] = [];
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
  if (Object.keys(maps).length > 0) preds.push(compileMapSelector(maps));
  for (const owner of [...lister.replicaSets(ns), ...lister.statefulSets(ns)]) {
    const p = compileLabelSelector(owner.spec?.selector);
    if (p(labels)) preds.push(p);
  }
  if (preds.length === 0) return undefined;
  return (l) => preds.every((p) => p(l));
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
    return own.map((c) =>
      compile(c, compileLabelSelector(withMatchLabelKeys(c.labelSelector, c.matchLabelKeys ?? [], pod))),
    );
  }
  if (defaults.length === 0) return [];
  const sel = defaultSelector(pod, lister);
  if (sel === undefined) return [];
  return defaults.map((c) => compile(c, sel));
}
