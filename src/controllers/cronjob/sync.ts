/**
 * One reconcile of one CronJob, as kube v1.33's cronjob controller (v2) `syncCronJob`:
 *
 * 1. Reconcile `status.active` with the Jobs it controls: finished ones leave (`SawCompletedJob`),
 *    vanished ones leave (`MissingJob`), unknown running ones are reported (`UnexpectedJob`);
 *    `lastSuccessfulTime` follows the newest completion.
 * 2. Unless deleted, suspended, or with a bad `timeZone` (`UnknownTimeZone`), a bad schedule
 *    (`UnparseableSchedule`, `InvalidSchedule`): find the latest unmet activation; too late for
 *    `startingDeadlineSeconds` is `MissSchedule`; `Forbid` with a running Job is
 *    `JobAlreadyActive`; `Replace` deletes the running Jobs; then the Job
 *    `<name>-<minutes>` is created (`SuccessfulCreate`).
 * 3. Finished Jobs beyond the history limits are deleted, oldest first (`SuccessfulDelete`).
 *
 * Returns when to look again (just after the next activation).
 */
import type { CronJob, Job } from '../../api/types/batch-v1.js';
import type { ObjectReference } from '../../api/types/core-v1.js';
import { finishedConditionType, trueCondition } from '../job/conditions.js';
import { rfc3339 } from '../shared/meta.js';
import { isTimeZone, parseSchedule, type Schedule } from '../../api/cron-schedule.js';
import {
  formatScheduledTimestamp,
  jobNameFor,
  nextScheduleDelay,
  nextScheduleTime,
  type CronTimingInput,
} from './timing.js';

/** The annotation with the activation a Job was created for. */
export const CRONJOB_SCHEDULED_TIMESTAMP = 'batch.kubernetes.io/cronjob-scheduled-timestamp';

/** What a sync does to the world; the controller implements it over the client. */
export interface CronJobActions {
  now(): Date;
  /** Creates the Job; resolves to it, or to the existing one of that name (`alreadyExisted`). */
  createJob(cj: CronJob, job: Job): Promise<{ job: Job; alreadyExisted: boolean }>;
  /** Reads a Job fresh from the server; undefined when it does not exist. */
  getJob(namespace: string, name: string): Promise<Job | undefined>;
  /** Deletes a Job with Background propagation. */
  deleteJob(cj: CronJob, job: Job): Promise<void>;
  event(cj: CronJob, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

/** The outcome: the CronJob with its new status, whether it changed, and when to requeue. */
export interface CronJobSyncResult {
  readonly cronJob: CronJob;
  readonly statusChanged: boolean;
  readonly requeueAfterMs: number | undefined;
}

function ref(job: Job): ObjectReference {
  return {
    kind: 'Job',
    namespace: job.metadata.namespace ?? '',
    name: job.metadata.name ?? '',
    uid: job.metadata.uid ?? '',
    apiVersion: 'batch/v1',
    resourceVersion: job.metadata.resourceVersion ?? '',
  };
}

/** The Job a CronJob creates for one activation (kube's `getJobFromTemplate2`). */
export function jobFromTemplate(cj: CronJob & { apiVersion: string; kind: string }, scheduled: Date): Job {
  const template = cj.spec?.jobTemplate ?? { metadata: {} };
  const annotations = { ...(template.metadata.annotations ?? {}) };
  annotations[CRONJOB_SCHEDULED_TIMESTAMP] = formatScheduledTimestamp(scheduled, cj.spec?.timeZone);
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobNameFor(cj.metadata.name ?? '', scheduled),
      namespace: cj.metadata.namespace ?? '',
      labels: { ...(template.metadata.labels ?? {}) },
      annotations,
      ownerReferences: [
        {
          apiVersion: cj.apiVersion,
          kind: cj.kind,
          name: cj.metadata.name ?? '',
          uid: cj.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: structuredClone(template.spec ?? {}),
  };
}

/** Reconciles `cj` (typed) with the Jobs it controls. */
export async function syncCronJob(
  cj: CronJob & { apiVersion: string; kind: string },
  jobs: readonly Job[],
  act: CronJobActions,
): Promise<CronJobSyncResult> {
  const cronJob = structuredClone(cj);
  const status = (cronJob.status ??= {});
  let changed = false;
  const now = act.now();
  const inActive = (uid: string | undefined): boolean => (status.active ?? []).some((r) => r.uid === uid);
  const removeActive = (uid: string | undefined): void => {
    status.active = (status.active ?? []).filter((r) => r.uid !== uid);
  };

  const children = new Set<string>();
  for (const j of jobs) {
    children.add(j.metadata.uid ?? '');
    const finished = finishedConditionType(j);
    if (!inActive(j.metadata.uid) && finished === undefined) {
      act.event(
        cronJob,
        'Warning',
        'UnexpectedJob',
        `Saw a job that the controller did not create or forgot: ${j.metadata.name ?? ''}`,
      );
    } else if (inActive(j.metadata.uid) && finished !== undefined) {
      removeActive(j.metadata.uid);
      act.event(
        cronJob,
        'Normal',
        'SawCompletedJob',
        `Saw completed job: ${j.metadata.name ?? ''}, condition: ${finished}`,
      );
      changed = true;
    }
    const completion = j.status?.completionTime;
    if (trueCondition(j, 'Complete') !== undefined && completion !== undefined) {
      const last = status.lastSuccessfulTime;
      if (last === undefined || Date.parse(completion) > Date.parse(last)) {
        status.lastSuccessfulTime = completion;
        changed = true;
      }
    }
  }
  for (const r of [...(status.active ?? [])]) {
    if (children.has(r.uid ?? '')) continue;
    const fresh = await act.getJob(r.namespace ?? cronJob.metadata.namespace ?? '', r.name ?? '');
    if (fresh === undefined || fresh.metadata.uid !== r.uid) {
      act.event(cronJob, 'Normal', 'MissingJob', `Active job went missing: ${r.name ?? ''}`);
      removeActive(r.uid);
      changed = true;
    }
  }

  const done = (requeueAfterMs?: number): CronJobSyncResult => ({
    cronJob,
    statusChanged: changed,
    requeueAfterMs,
  });
  if (cronJob.metadata.deletionTimestamp !== undefined) return done();
  const spec = cronJob.spec ?? {};
  const zone = spec.timeZone;
  if (zone !== undefined && !isTimeZone(zone)) {
    act.event(
      cronJob,
      'Warning',
      'UnknownTimeZone',
      `invalid timeZone: ${JSON.stringify(zone)}: unknown time zone ${zone}`,
    );
    return done();
  }
  if (spec.suspend === true) return done();
  const text = spec.schedule ?? '';
  if (zone === undefined && text.includes('TZ'))
    act.event(
      cronJob,
      'Warning',
      'UnsupportedSchedule',
      `CRON_TZ or TZ used in schedule ${JSON.stringify(text)} is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`,
    );
  let schedule: Schedule;
  try {
    schedule = parseSchedule(text, zone ?? 'UTC');
  } catch (err) {
    act.event(
      cronJob,
      'Warning',
      'UnparseableSchedule',
      `unparseable schedule: ${JSON.stringify(text)} : ${(err as Error).message}`,
    );
    return done();
  }
  const timing: CronTimingInput = {
    creationTimestamp: new Date(Date.parse(cronJob.metadata.creationTimestamp ?? '') || now.getTime()),
    lastScheduleTime: status.lastScheduleTime === undefined ? undefined : new Date(status.lastScheduleTime),
    startingDeadlineSeconds: spec.startingDeadlineSeconds,
  };
  let scheduled: Date | undefined;
  try {
    const recent = nextScheduleTime(timing, now, schedule);
    if (recent.missed > 100)
      act.event(
        cronJob,
        'Warning',
        'TooManyMissedTimes',
        `too many missed start times: ${recent.missed}. Set or decrease .spec.startingDeadlineSeconds or check clock skew`,
      );
    scheduled = recent.time;
  } catch (err) {
    act.event(cronJob, 'Warning', 'InvalidSchedule', `invalid schedule: ${text} : ${(err as Error).message}`);
    return done();
  }
  const later = (): CronJobSyncResult => done(nextScheduleDelay(timing, now, schedule));
  if (scheduled === undefined) return later();
  if (
    spec.startingDeadlineSeconds !== undefined &&
    scheduled.getTime() + spec.startingDeadlineSeconds * 1000 < now.getTime()
  ) {
    act.event(
      cronJob,
      'Warning',
      'MissSchedule',
      `Missed scheduled time to start a job: ${rfc1123z(scheduled)}`,
    );
    return later();
  }
  const name = jobNameFor(cronJob.metadata.name ?? '', scheduled);
  if ((status.active ?? []).some((r) => r.name === name)) return later();
  if (spec.concurrencyPolicy === 'Forbid' && (status.active ?? []).length > 0) {
    act.event(
      cronJob,
      'Normal',
      'JobAlreadyActive',
      'Not starting job because prior execution is running and concurrency policy is Forbid',
    );
    return later();
  }
  if (spec.concurrencyPolicy === 'Replace') {
    for (const r of [...(status.active ?? [])]) {
      const running = await act.getJob(r.namespace ?? cronJob.metadata.namespace ?? '', r.name ?? '');
      if (running === undefined) continue;
      await act.deleteJob(cronJob, running);
      removeActive(running.metadata.uid);
      changed = true;
    }
  }
  const created = await act.createJob(cronJob, jobFromTemplate(cj, scheduled));
  if (created.alreadyExisted) {
    const owner = created.job.metadata.ownerReferences?.find((o) => o.controller === true);
    if (owner?.uid !== cronJob.metadata.uid || inActive(created.job.metadata.uid)) return later();
  } else {
    act.event(cronJob, 'Normal', 'SuccessfulCreate', `Created job ${created.job.metadata.name ?? ''}`);
  }
  status.active = [...(status.active ?? []), ref(created.job)];
  status.lastScheduleTime = rfc3339(scheduled.getTime());
  changed = true;
  return { ...later(), statusChanged: true };
}

/**
 * The finished Jobs beyond `successfulJobsHistoryLimit` / `failedJobsHistoryLimit`, oldest
 * (by start time, then name) first: kube's `cleanupFinishedJobs`.
 */
export function jobsToPrune(cj: CronJob, jobs: readonly Job[]): Job[] {
  const spec = cj.spec ?? {};
  const out: Job[] = [];
  const pick = (type: 'Complete' | 'Failed', limit: number | undefined): void => {
    if (limit === undefined) return;
    const finished = jobs.filter((j) => finishedConditionType(j) === type).sort(byStartTime);
    out.push(...finished.slice(0, Math.max(0, finished.length - limit)));
  };
  pick('Complete', spec.successfulJobsHistoryLimit);
  pick('Failed', spec.failedJobsHistoryLimit);
  return out;
}

function byStartTime(a: Job, b: Job): number {
  const ta = a.status?.startTime;
  const tb = b.status?.startTime;
  if (ta === undefined || tb === undefined) {
    if (ta === tb) return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
    return ta === undefined ? 1 : -1;
  }
  if (ta === tb) return (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');
  return Date.parse(ta) - Date.parse(tb);
}

const DAY = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTH = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Go's `time.RFC1123Z` in UTC: `Mon, 02 Jan 2006 15:04:05 +0000`. */
function rfc1123z(t: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${DAY[t.getUTCDay()] ?? ''}, ${p(t.getUTCDate())} ${MONTH[t.getUTCMonth()] ?? ''} ${t.getUTCFullYear()} ${p(t.getUTCHours())}:${p(t.getUTCMinutes())}:${p(t.getUTCSeconds())} +0000`;
}
