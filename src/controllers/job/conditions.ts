/**
 * Job conditions as kube's job controller writes them: types, reasons and messages, and
 * `ensureJobConditionStatus` (a condition changes only when its status, reason or message do;
 * a False condition is never added where there was none).
 */
import type { Job, JobCondition } from '../../api/types/batch-v1.js';
import { rfc3339 } from '../shared/meta.js';

/** kube's Job condition reasons and messages. */
export const JOB_REASONS = {
  backoffLimitExceeded: 'BackoffLimitExceeded',
  deadlineExceeded: 'DeadlineExceeded',
  podFailurePolicy: 'PodFailurePolicy',
  failedIndexes: 'FailedIndexes',
  maxFailedIndexesExceeded: 'MaxFailedIndexesExceeded',
  successPolicy: 'SuccessPolicy',
  completionsReached: 'CompletionsReached',
} as const;

/** A condition to be written: type, status, reason, message. */
export interface PendingCondition {
  readonly type: string;
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** A new condition stamped `now`. */
export function newCondition(c: PendingCondition, now: Date): JobCondition {
  const t = rfc3339(now.getTime());
  return {
    type: c.type,
    status: c.status,
    lastProbeTime: t,
    lastTransitionTime: t,
    reason: c.reason,
    message: c.message,
  };
}

/** Sets a condition; returns the new list and whether it changed. */
export function ensureCondition(
  list: readonly JobCondition[],
  c: PendingCondition,
  now: Date,
): { conditions: JobCondition[]; changed: boolean } {
  const i = list.findIndex((x) => x.type === c.type);
  const existing = list[i];
  if (existing !== undefined) {
    if (existing.status === c.status && existing.reason === c.reason && existing.message === c.message)
      return { conditions: [...list], changed: false };
    const next = [...list];
    next[i] = newCondition(c, now);
    return { conditions: next, changed: true };
  }
  if (c.status === 'False') return { conditions: [...list], changed: false };
  return { conditions: [...list, newCondition(c, now)], changed: true };
}

/** The True condition of a type, if any. */
export function trueCondition(job: Job, type: string): JobCondition | undefined {
  return job.status?.conditions?.find((c) => c.type === type && c.status === 'True');
}

/** Complete or Failed is True (kube's `IsJobFinished`). */
export function isJobFinished(job: Job): boolean {
  return trueCondition(job, 'Complete') !== undefined || trueCondition(job, 'Failed') !== undefined;
}

/** The finishing condition's type (`Complete` or `Failed`), if finished. */
export function finishedConditionType(job: Job): 'Complete' | 'Failed' | undefined {
  if (trueCondition(job, 'Complete') !== undefined) return 'Complete';
  if (trueCondition(job, 'Failed') !== undefined) return 'Failed';
  return undefined;
}

/** When the job finished: the Complete/Failed condition's transition time. */
export function finishTime(job: Job): Date | undefined {
  const c = trueCondition(job, 'Complete') ?? trueCondition(job, 'Failed');
  const t = Date.parse(c?.lastTransitionTime ?? '');
  return Number.isFinite(t) ? new Date(t) : undefined;
}
