/**
 * Pod predicates the workload controllers share, as kube's `podutil` and `controller_utils`:
 * active, ready, available (ready for `minReadySeconds`), and the order in which surplus pods
 * are deleted.
 */
import type { Pod } from '../../api/types/core-v1.js';

/** Not finished and not being deleted (kube's `IsPodActive`). */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && pod.metadata.deletionTimestamp === undefined;
}

/** The Ready condition, if any. */
function readyCondition(pod: Pod): { status?: string; lastTransitionTime?: string } | undefined {
  return pod.status?.conditions?.find((c) => c.type === 'Ready');
}

/** The Ready condition is True. */
export function isPodReady(pod: Pod): boolean {
  return readyCondition(pod)?.status === 'True';
}

/**
 * Ready for at least `minReadySeconds` at `nowMs` (kube's `IsPodAvailable`). With 0, ready is
 * enough.
 */
export function isPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  const c = readyCondition(pod);
  if (c?.status !== 'True') return false;
  if (minReadySeconds <= 0) return true;
  const since = Date.parse(c.lastTransitionTime ?? '');
  return Number.isFinite(since) && since + minReadySeconds * 1000 <= nowMs;
}

const PHASE_RANK: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };

function restarts(pod: Pod): number {
  let n = 0;
  for (const s of pod.status?.containerStatuses ?? []) n = Math.max(n, s.restartCount ?? 0);
  return n;
}

function deletionCost(pod: Pod): number {
  const v = Number(pod.metadata.annotations?.['controller.kubernetes.io/pod-deletion-cost'] ?? '0');
  return Number.isFinite(v) ? v : 0;
}

function time(t: string | undefined): number {
  const n = Date.parse(t ?? '');
  return Number.isFinite(n) ? n : 0;
}

/**
 * Orders pods so the ones to delete first come first, as kube's `ActivePodsWithRanks`:
 * unscheduled before scheduled; Pending, Unknown, then Running; not ready before ready; lower
 * `pod-deletion-cost` first; pods sharing a node with more of their kind (`rank`, higher first);
 * ready more recently first; more restarts first; newer first.
 */
export function deletionOrder(rank: (pod: Pod) => number): (a: Pod, b: Pod) => number {
  return (a, b) => {
    const na = a.spec?.nodeName ?? '';
    const nb = b.spec?.nodeName ?? '';
    if ((na === '') !== (nb === '')) return na === '' ? -1 : 1;
    const pa = PHASE_RANK[a.status?.phase ?? ''] ?? 0;
    const pb = PHASE_RANK[b.status?.phase ?? ''] ?? 0;
    if (pa !== pb) return pa - pb;
    const ra = isPodReady(a);
    const rb = isPodReady(b);
    if (ra !== rb) return ra ? 1 : -1;
    const ca = deletionCost(a);
    const cb = deletionCost(b);
    if (ca !== cb) return ca - cb;
    const ka = rank(a);
    const kb = rank(b);
    if (ka !== kb) return kb - ka;
    if (ra && rb) {
      const ta = time(readyCondition(a)?.lastTransitionTime);
      const tb = time(readyCondition(b)?.lastTransitionTime);
      if (ta !== tb) return tb - ta;
    }
    const xa = restarts(a);
    const xb = restarts(b);
    if (xa !== xb) return xb - xa;
    return time(b.metadata.creationTimestamp) - time(a.metadata.creationTimestamp);
  };
}
