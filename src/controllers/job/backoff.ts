/**
 * Pod re-creation backoff, as kube's job controller keeps it per Job: failures since the last
 * success and when the last one happened; the next pod waits `base * 2^(failures-1)`, at most
 * `max`, counted from that failure. Held by the controller in memory (kube's too), so a
 * restarted controller starts without delay.
 */
import type { Pod } from '../../api/types/core-v1.js';

/** One Job's backoff state. */
export interface BackoffRecord {
  readonly failuresAfterLastSuccess: number;
  readonly lastFailureTime: Date | undefined;
}

/** No failures. */
export const NO_BACKOFF: BackoffRecord = { failuresAfterLastSuccess: 0, lastFailureTime: undefined };

/** kube's defaults: 10 s, doubling, at most 6 min. */
export interface BackoffDurations {
  readonly baseMs: number;
  readonly maxMs: number;
}

/** kube's `DefaultJobPodFailureBackOff` and `MaxJobPodFailureBackOff`. */
export const DEFAULT_BACKOFF: BackoffDurations = { baseMs: 10_000, maxMs: 360_000 };

/** When a pod finished: its containers' latest finishedAt, else its deletion, else `now`. */
export function podFinishTime(pod: Pod, now: Date): Date {
  let latest: number | undefined;
  for (const cs of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const t = Date.parse(cs.state?.terminated?.finishedAt ?? '');
    if (Number.isFinite(t) && (latest === undefined || t > latest)) latest = t;
  }
  if (latest !== undefined) return new Date(latest);
  const deleted = Date.parse(pod.metadata.deletionTimestamp ?? '');
  return Number.isFinite(deleted) ? new Date(deleted) : now;
}

/** The record after this sync's newly finished pods. */
export function nextBackoffRecord(
  prev: BackoffRecord,
  newSucceeded: readonly Pod[],
  newFailed: readonly Pod[],
  now: Date,
): BackoffRecord {
  if (newSucceeded.length === 0) {
    if (newFailed.length === 0) return prev;
    let last = prev.lastFailureTime;
    for (const p of newFailed) {
      const t = podFinishTime(p, now);
      if (last === undefined || t > last) last = t;
    }
    return {
      failuresAfterLastSuccess: prev.failuresAfterLastSuccess + newFailed.length,
      lastFailureTime: last,
    };
  }
  let lastSuccess = 0;
  for (const p of newSucceeded) lastSuccess = Math.max(lastSuccess, podFinishTime(p, now).getTime());
  let failures = 0;
  let last: Date | undefined;
  for (const p of newFailed) {
    const t = podFinishTime(p, now);
    if (t.getTime() < lastSuccess) continue;
    failures++;
    if (last === undefined || t > last) last = t;
  }
  return { failuresAfterLastSuccess: failures, lastFailureTime: last };
}

/** Milliseconds until a new pod may be created; 0 when now. */
export function remainingBackoff(
  failures: number,
  lastFailure: Date | undefined,
  now: Date,
  d: BackoffDurations,
): number {
  if (failures === 0 || lastFailure === undefined) return 0;
  let delay = d.baseMs;
  for (let i = 1; i < failures && delay < d.maxMs; i++) delay *= 2;
  delay = Math.min(delay, d.maxMs);
  const elapsed = now.getTime() - lastFailure.getTime();
  return elapsed >= delay ? 0 : delay - elapsed;
}
