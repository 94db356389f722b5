/**
 * Which pods the pod garbage collector removes, as kube's `pkg/controller/podgc`:
 * - terminated pods (phase neither Pending, Running nor Unknown) beyond
 *   `--terminated-pod-gc-threshold`, oldest first;
 * - pods bound to a node that does not exist (after a quarantine, checked again then);
 * - terminating pods never scheduled;
 * - terminating pods on a not-ready node tainted `node.kubernetes.io/out-of-service`.
 */
import type { Node, Pod } from '../../api/types/core-v1.js';

/** The taint marking a node out of service (kube's NodeOutOfServiceVolumeDetach). */
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';

/** Not Pending, Running or Unknown (kube's podgc `isPodTerminated`). */
export function isPodTerminated(pod: Pod): boolean {
  const phase = pod.status?.phase ?? 'Pending';
  return phase !== 'Pending' && phase !== 'Running' && phase !== 'Unknown';
}

function evicted(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' && pod.status.reason === 'Evicted';
}

/** The terminated pods to delete so that at most `threshold` remain (none when threshold ≤ 0). */
export function terminatedOverThreshold(pods: readonly Pod[], threshold: number): Pod[] {
  if (threshold <= 0) return [];
  const terminated = pods.filter(isPodTerminated);
  const excess = terminated.length - threshold;
  if (excess <= 0) return [];
  // Evicted pods first, then the oldest (kube's byEvictionAndCreationTimestamp).
  const sorted = [...terminated].sort((a, b) => {
    if (evicted(a) !== evicted(b)) return evicted(a) ? -1 : 1;
    const ta = a.metadata.creationTimestamp ?? '';
    const tb = b.metadata.creationTimestamp ?? '';
    if (ta !== tb) return ta < tb ? -1 : 1;
    return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
  });
  return sorted.slice(0, excess);
}

/** Names of the nodes pods are bound to that the node cache does not know. */
export function missingNodes(pods: readonly Pod[], nodeExists: (name: string) => boolean): Set<string> {
  const out = new Set<string>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName ?? '';
    if (node !== '' && !nodeExists(node)) out.add(node);
  }
  return out;
}

/** Terminating pods that were never scheduled. */
export function unscheduledTerminating(pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => p.metadata.deletionTimestamp !== undefined && (p.spec?.nodeName ?? '') === '');
}

/** Whether a node is not ready and tainted out-of-service. */
export function isOutOfService(node: Node): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return ready !== 'True' && (node.spec?.taints ?? []).some((t) => t.key === OUT_OF_SERVICE_TAINT);
}
