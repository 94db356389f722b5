/**
 * Pod phases the workload controllers (job, statefulset, daemonset) read beyond
 * `shared/pods.ts`: terminal, terminating, and how long until a ready pod turns available.
 */
import type { Pod } from '../../api/types/core-v1.js';

/** Succeeded or Failed. */
export function isPodTerminal(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** Being deleted but not yet terminal (kube's terminating pods). */
export function isPodTerminating(pod: Pod): boolean {
  return !isPodTerminal(pod) && pod.metadata.deletionTimestamp !== undefined;
}

/** Milliseconds until a ready pod has been ready for `minReadySeconds`; undefined when not waiting. */
export function msUntilAvailable(pod: Pod, minReadySeconds: number, nowMs: number): number | undefined {
  const ready = pod.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  if (ready === undefined || minReadySeconds <= 0) return undefined;
  const since = Date.parse(ready.lastTransitionTime ?? '');
  if (!Number.isFinite(since)) return undefined;
  const left = since + minReadySeconds * 1000 - nowMs;
  return left > 0 ? left : undefined;
}
