/**
 * kube's FitError message: "0/3 nodes are available: 1 node(s) had untolerated taint {a: b},
 * 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for
 * scheduling." Reasons are counted over nodes, each rendered "<count> <reason>", sorted as
 * strings and joined by ", ", ending with a period; PostFilter's message follows as it is.
 */
import { Code, type Status } from './framework/status.js';

/** Why a pod fits no node. */
export interface Diagnosis {
  readonly numAllNodes: number;
  /** Status per evaluated node; nodes absent count with `absent` (when given). */
  readonly nodeStatuses: ReadonlyMap<string, Status>;
  /** The status given to nodes not in the map (PreFilter's node restriction, or preemption's "not helpful"). */
  readonly absent?: Status;
  /** The PreFilter rejection's message, when PreFilter rejected the pod. */
  readonly preFilterMessage?: string;
  /** PostFilter's (preemption's) message. */
  postFilterMessage?: string;
}

/** The FailedScheduling text for a diagnosis. */
export function fitErrorMessage(d: Diagnosis): string {
  let msg = `0/${d.numAllNodes} nodes are available:`;
  if (d.preFilterMessage !== undefined && d.preFilterMessage !== '') {
    msg += ` ${d.preFilterMessage}.`;
  } else {
    const counts = new Map<string, number>();
    for (const s of d.nodeStatuses.values()) {
      for (const r of s.reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
    }
    const absent = d.numAllNodes - d.nodeStatuses.size;
    if (absent > 0 && d.absent !== undefined) {
      for (const r of d.absent.reasons) counts.set(r, (counts.get(r) ?? 0) + absent);
    }
    const parts = [...counts].map(([r, n]) => `${n} ${r}`).sort();
    if (parts.length > 0) msg += ` ${parts.join(', ')}.`;
  }
  if (d.postFilterMessage !== undefined && d.postFilterMessage !== '') msg += ` ${d.postFilterMessage}`;
  return msg;
}

/** The status kube gives nodes a PreFilter node restriction left out. */
export const NOT_IN_PREFILTER_RESULT: Status = {
  code: Code.UnschedulableAndUnresolvable,
  reasons: ["node(s) didn't satisfy plugin(s) [NodeAffinity]"],
};
