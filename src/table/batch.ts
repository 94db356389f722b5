/** Printers of the `batch` group: jobs and cron jobs. */
import type { KubeObject } from '../api/object.js';
import { column, columns, NAME, WORKLOAD_COLUMNS, workloadCells } from './columns.js';
import { humanDuration, parseTime, since } from './duration.js';
import { int, list, obj, optBool, optInt, optStr, str, type Fields } from './fields.js';
import { boolPtr, formatLabelSelector } from './format.js';
import type { TablePrinter } from './index.js';

/** Whether the job has a condition of `type`; only the first condition of that type counts. */
function hasCondition(status: Fields, type: string): boolean {
  for (const item of list(status['conditions'])) {
    const condition = obj(item);
    if (str(condition['type']) === type) return str(condition['status']) === 'True';
  }
  return false;
}

/** STATUS of a job (kube 1.30+): the first of Complete, Failed, Terminating, Suspended, FailureTarget. */
function jobStatus(job: KubeObject, status: Fields): string {
  if (hasCondition(status, 'Complete')) return 'Complete';
  if (hasCondition(status, 'Failed')) return 'Failed';
  if (job.metadata.deletionTimestamp !== undefined && job.metadata.deletionTimestamp !== null)
    return 'Terminating';
  if (hasCondition(status, 'Suspended')) return 'Suspended';
  if (hasCondition(status, 'FailureTarget')) return 'FailureTarget';
  return 'Running';
}

/** COMPLETIONS: `succeeded/completions`, or `succeeded/1` (`of N` with parallelism) for work queues. */
function completions(spec: Fields, status: Fields): string {
  const succeeded = int(status['succeeded']);
  const wanted = optInt(spec['completions']);
  if (wanted !== undefined) return `${succeeded}/${wanted}`;
  const parallelism = optInt(spec['parallelism']) ?? 0;
  return parallelism > 1 ? `${succeeded}/1 of ${parallelism}` : `${succeeded}/1`;
}

/** DURATION: start to completion, or start to now while running; empty before the job starts. */
function jobDuration(status: Fields, now: Date): string {
  const start = parseTime(status['startTime']);
  if (start === undefined) return '';
  const end = parseTime(status['completionTime']);
  return humanDuration((end ?? now.getTime()) - start);
}

const JOB: TablePrinter = {
  columns: columns(
    NAME,
    column('Status', 'string', 'Overall state of the job.'),
    column('Completions', 'string', 'Successful completions out of those wanted.'),
    column('Duration', 'string', 'Time the job took, or has been running.'),
    ...WORKLOAD_COLUMNS,
  ),
  cells(job, now) {
    const spec = obj(job['spec']);
    const status = obj(job['status']);
    return [
      job.metadata.name ?? '',
      jobStatus(job, status),
      completions(spec, status),
      jobDuration(status, now),
      ...workloadCells(job, now, spec['template'], formatLabelSelector(spec['selector'])),
    ];
  },
};

const CRON_JOB: TablePrinter = {
  columns: columns(
    NAME,
    column('Schedule', 'string', 'Cron schedule of the job.'),
    column('Timezone', 'string', 'Time zone of the schedule.'),
    column('Suspend', 'boolean', 'Whether new runs are suspended.'),
    column('Active', 'integer', 'Number of running jobs.'),
    column('Last Schedule', 'string', 'Time since the job was last scheduled.'),
    ...WORKLOAD_COLUMNS,
  ),
  cells(cronJob, now) {
    const spec = obj(cronJob['spec']);
    const status = obj(cronJob['status']);
    const jobSpec = obj(obj(spec['jobTemplate'])['spec']);
    const last = status['lastScheduleTime'];
    return [
      cronJob.metadata.name ?? '',
      str(spec['schedule']),
      optStr(spec['timeZone']) ?? '<none>',
      boolPtr(optBool(spec['suspend'])),
      list(status['active']).length,
      last === undefined || last === null ? '<none>' : since(last, now),
      ...workloadCells(cronJob, now, jobSpec['template'], formatLabelSelector(jobSpec['selector'])),
    ];
  },
};

/** `batch` printers by resource. */
export const BATCH_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  jobs: JOB,
  cronjobs: CRON_JOB,
});
