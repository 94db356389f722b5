/**
 * NodeAffinity: `spec.nodeSelector` and required node affinity filter (unresolvable), preferred
 * node affinity scores by the weights of the terms a node matches. Args: `addedAffinity`, which
 * every pod of the profile must also satisfy.
 */
import type { NodeAffinity as NodeAffinitySpec, Pod } from '../../api/types/core-v1.js';
import { defaultNormalizeScore, SKIP_NONE, type Plugin } from '../framework/types.js';
import { SKIP, unresolvable } from '../framework/status.js';
import {
  compileMapSelector,
  compileNodeSelector,
  compileNodeSelectorTerm,
  type NodePredicate,
} from '../selectors.js';
import { PLUGIN } from './names.js';

/** Compiled required and preferred node constraints of one pod. */
export interface PodNodeConstraints {
  readonly required: NodePredicate | undefined;
  readonly preferred: readonly { readonly weight: number; readonly match: NodePredicate }[];
}

/** The pod's nodeSelector and required node affinity as one predicate (undefined: none). */
export function requiredNodePredicate(pod: Pod): NodePredicate | undefined {
  const sel = pod.spec?.nodeSelector;
  const req = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const preds: NodePredicate[] = [];
  if (sel !== undefined && Object.keys(sel).length > 0) {
    const m = compileMapSelector(sel);
    preds.push((n) => m(n.metadata.labels));
  }
  if (req !== undefined) preds.push(compileNodeSelector(req));
  if (preds.length === 0) return undefined;
  return (n) => preds.every((p) => p(n));
}

function preferred(aff: NodeAffinitySpec | undefined): PodNodeConstraints['preferred'] {
  return (aff?.preferredDuringSchedulingIgnoredDuringExecution ?? [])
    .filter((t) => (t.weight ?? 0) !== 0)
    .map((t) => ({ weight: t.weight ?? 0, match: compileNodeSelectorTerm(t.preference ?? {}) }));
}

/** Node names that a required term pins the pod to via `metadata.name` matchFields, if every term does. */
function pinnedNodeNames(pod: Pod): Set<string> | undefined {
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms === undefined || terms.length === 0) return undefined;
  const names = new Set<string>();
  for (const t of terms) {
    const f = (t.matchFields ?? []).find((r) => r.key === 'metadata.name' && r.operator === 'In');
    if (f === undefined) return undefined;
    for (const v of f.values ?? []) names.add(v);
  }
  return names;
}

const STATE = `${PLUGIN.NodeAffinity}/state`;

/** The plugin. */
export function nodeAffinity(args: Record<string, unknown>): Plugin {
  const added = args['addedAffinity'] as NodeAffinitySpec | undefined;
  const addedRequired =
    added?.requiredDuringSchedulingIgnoredDuringExecution === undefined
      ? undefined
      : compileNodeSelector(added.requiredDuringSchedulingIgnoredDuringExecution);
  const addedPreferred = preferred(added);
  return {
    name: PLUGIN.NodeAffinity,
    events: [
      { resource: 'Node', action: 'Add' },
      { resource: 'Node', action: 'Update' },
      { resource: 'Pod', action: 'Update' },
    ],
    preFilter(state, pod) {
      const required = requiredNodePredicate(pod.pod);
      state.write(STATE, required);
      if (required === undefined && addedRequired === undefined) return { status: SKIP };
      const pinned = pinnedNodeNames(pod.pod);
      if (pinned !== undefined && pinned.size === 0) {
        return { status: unresolvable("node(s) didn't match Pod's node affinity/selector") };
      }
      return pinned === undefined ? undefined : { nodeNames: pinned };
    },
    filter(state, _pod, node) {
      if (node.node === undefined) return unresolvable('node not found');
      if (addedRequired !== undefined && !addedRequired(node.node)) {
        return unresolvable("node(s) didn't match scheduler-enforced node affinity");
      }
      const required = state.read<NodePredicate>(STATE);
      if (required !== undefined && !required(node.node)) {
        return unresolvable("node(s) didn't match Pod's node affinity/selector");
      }
      return undefined;
    },
    preScore(state, pod) {
      const terms = [...preferred(pod.pod.spec?.affinity?.nodeAffinity), ...addedPreferred];
      if (terms.length === 0) return SKIP;
      state.write(`${STATE}/preferred`, terms);
      return undefined;
    },
    score(state, _pod, node) {
      const terms = state.read<PodNodeConstraints['preferred']>(`${STATE}/preferred`) ?? SKIP_NONE;
      let total = 0;
      if (node.node === undefined) return 0;
      for (const t of terms) if (t.match(node.node)) total += t.weight;
      return total;
    },
    normalizeScore(_state, _pod, scores) {
      defaultNormalizeScore(scores, false);
    },
  };
}
