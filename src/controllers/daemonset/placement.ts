/**
 * Where a DaemonSet runs, as kube's `NodeShouldRunDaemonPod`: the template's `nodeName` (if
 * any), `nodeSelector` and required node affinity must admit the node, and its NoSchedule and
 * NoExecute taints must be tolerated (with kube's automatic DaemonSet tolerations added). A pod
 * already there keeps running unless a NoExecute taint is not tolerated.
 */
import type { DaemonSet } from '../../api/types/apps-v1.js';
import type {
  Affinity,
  Node,
  NodeSelectorRequirement,
  PodSpec,
  Taint,
  Toleration,
} from '../../api/types/core-v1.js';

/** kube's tolerations every DaemonSet pod gets (`AddOrUpdateDaemonPodTolerations`). */
export function daemonTolerations(spec: PodSpec): Toleration[] {
  const add: Toleration[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec.hostNetwork === true)
    add.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  const out = [...(spec.tolerations ?? [])];
  for (const t of add) {
    // kube's AddOrUpdateTolerationInPodSpec: a toleration with the same key, operator and
    // effect is replaced; an identical one is left alone.
    const i = out.findIndex(
      (o) =>
        (o.key ?? '') === t.key && (o.operator ?? 'Equal') === t.operator && (o.effect ?? '') === t.effect,
    );
    if (i >= 0) out[i] = t;
    else out.push(t);
  }
  return out;
}

/** A toleration tolerates a taint (kube's `ToleratesTaint`). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if ((t.effect ?? '') !== '' && t.effect !== taint.effect) return false;
  if ((t.key ?? '') !== '' && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** The first taint matching `filter` that no toleration tolerates. */
export function untoleratedTaint(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
  filter: (t: Taint) => boolean,
): Taint | undefined {
  return taints.find((taint) => filter(taint) && !tolerations.some((t) => tolerates(t, taint)));
}

function requirementMatches(req: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      const v = Number.parseInt(value ?? '', 10);
      const bound = Number.parseInt(values[0] ?? '', 10);
      if (!Number.isFinite(v) || !Number.isFinite(bound)) return false;
      return req.operator === 'Gt' ? v > bound : v < bound;
    }
    default:
      return false;
  }
}

/** The node satisfies `nodeSelector` and the required node affinity (terms ORed). */
export function nodeMatches(
  node: Node,
  nodeSelector: Record<string, string> | undefined,
  affinity: Affinity | undefined,
): boolean {
  const labels = node.metadata.labels ?? {};
  for (const [k, v] of Object.entries(nodeSelector ?? {})) if (labels[k] !== v) return false;
  const terms = affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms === undefined) return true;
  return terms.some((term) => {
    const exprs = term.matchExpressions ?? [];
    const fields = term.matchFields ?? [];
    if (exprs.length === 0 && fields.length === 0) return false;
    return (
      exprs.every((r) => requirementMatches(r, labels[r.key ?? ''])) &&
      fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.metadata.name))
    );
  });
}

/** Whether the DaemonSet should run on `node`, and whether a pod already there may stay. */
export function shouldRunOn(
  node: Node,
  ds: DaemonSet,
): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = ds.spec?.template?.spec ?? { containers: [] };
  const nodeName = spec.nodeName ?? '';
  if (nodeName !== '' && nodeName !== node.metadata.name)
    return { shouldRun: false, shouldContinueRunning: false };
  if (!nodeMatches(node, spec.nodeSelector, spec.affinity))
    return { shouldRun: false, shouldContinueRunning: false };
  const taints = node.spec?.taints ?? [];
  const tolerations = daemonTolerations(spec);
  const blocking = untoleratedTaint(
    taints,
    tolerations,
    (t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute',
  );
  if (blocking === undefined) return { shouldRun: true, shouldContinueRunning: true };
  const evicting = untoleratedTaint(taints, tolerations, (t) => t.effect === 'NoExecute');
  return { shouldRun: false, shouldContinueRunning: evicting === undefined };
}

/**
 * kube's `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes one term
 * matching the node by `metadata.name` (the controller already checked the rest).
 */
export function pinToNode(affinity: Affinity | undefined, nodeName: string): Affinity {
  return {
    ...(affinity ?? {}),
    nodeAffinity: {
      ...(affinity?.nodeAffinity ?? {}),
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
      },
    },
  };
}

/** The node a daemon pod is for: its `nodeName`, else its `metadata.name` node affinity. */
export function targetNode(spec: PodSpec | undefined): string | undefined {
  if ((spec?.nodeName ?? '') !== '') return spec?.nodeName;
  for (const term of spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution
    ?.nodeSelectorTerms ?? [])
    for (const f of term.matchFields ?? [])
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  return undefined;
}
