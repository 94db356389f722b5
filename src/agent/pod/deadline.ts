/**
 * `activeDeadlineSeconds`, as kubelet's active deadline handler: once a pod has been active on
 * the node (since its status's startTime) for that long, it fails: phase Failed, reason
 * `DeadlineExceeded`, kube's message, a `DeadlineExceeded` event, and its containers stopped.
 */
import type { Pod } from '../../api/types/core-v1.js';
import type { PodRuntimeState } from '../runtime/runtime.js';
import { Reasons } from './events.js';
import { containerSpec, killContainer } from './lifecycle.js';
import type { PodRecord, SyncDeps } from './sync.js';

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

/**
 * Enforces activeDeadlineSeconds in a sync: once passed, the pod fails (recorded on the record,
 * with the event) and its running containers are killed with the pod's grace period and its
 * sandboxes stopped; the containers stay for their logs. Answers the milliseconds left before
 * the deadline (for a requeue), or undefined.
 */
export async function enforceActiveDeadline(
  deps: SyncDeps,
  record: PodRecord,
  state: PodRuntimeState | undefined,
): Promise<number | undefined> {
  const pod = record.pod;
  if (!record.failure) {
    const left = deadlineRemainingMs(pod, record.startTime);
    if (left === undefined || left > 0) return left;
    record.failure = { reason: DEADLINE_REASON, message: DEADLINE_MESSAGE };
    deps.events.event(pod, 'Normal', Reasons.DeadlineExceeded, DEADLINE_MESSAGE);
  }
  const podIP = state?.sandboxes[0]?.ips[0] ?? '';
  // The pod is not being deleted (that path kills it): its own grace period applies.
  const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;
  await Promise.all(
    (state?.containers ?? [])
      .filter((c) => c.state === 'CONTAINER_RUNNING')
      .map((c) => killContainer(deps, pod, containerSpec(pod, c.name), c, podIP, { graceOverride: grace })),
  );
  for (const sb of state?.sandboxes ?? []) if (sb.ready) await deps.runtime.cri.stopPodSandbox(sb.id);
  return undefined;
}
