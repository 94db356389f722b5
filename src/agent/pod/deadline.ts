/**
 * `activeDeadlineSeconds`, as kubelet's active deadline handler: once a pod has been active on
 * the node (since its status's startTime) for that long, it fails: phase Failed, reason
 * `DeadlineExceeded`, kube's message, a `DeadlineExceeded` event, and its containers stopped.
 */
import type { Pod } from '../../api/types/core-v1.js';

/** The pod's failure reason. */
export const DEADLINE_REASON = 'DeadlineExceeded';
/** The pod's failure message (kube's words). */
export const DEADLINE_MESSAGE = 'Pod was active on the node longer than the specified deadline';

/**
 * Milliseconds left before the pod's active deadline (0 or less: passed); undefined when the pod
 * has none or no start time yet.
 */
export function deadlineRemainingMs(
  pod: Pod,
  startTime: string | undefined,
  now = Date.now(),
): number | undefined {
  const seconds = pod.spec?.activeDeadlineSeconds;
  if (seconds === undefined || seconds === null || !startTime) return undefined;
  const start = Date.parse(startTime);
  if (Number.isNaN(start)) return undefined;
  return start + seconds * 1000 - now;
}
