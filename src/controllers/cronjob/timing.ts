/**
 * When a CronJob should run, as kube's cronjob controller (v2) decides it: the most recent
 * unmet activation since the last schedule (or creation, or the starting deadline), the number
 * of missed activations, the delay until the next one, and the deterministic job name.
 */
import type { Schedule } from '../../api/cron-schedule.js';

/** A schedule whose activations are less than a second apart (e.g. `59 23 31 2 *`, never). */
export class InvalidScheduleError extends Error {
  readonly code = 'CRON_INVALID_TIMING';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidScheduleError';
  }
}

/** The most recent activation in (earliest, now], and about how many were missed. */
export interface RecentActivation {
  readonly time: Date | undefined;
  readonly missed: number;
}

/**
 * The latest activation after `earliest` and not after `now`. Missed activations are counted
 * approximately from the interval between the first two, as kube does, so a schedule far behind
 * costs no more than a short loop.
 * @throws InvalidScheduleError when the schedule never fires or fires within a second.
 */
export function mostRecentScheduleTime(earliest: Date, now: Date, schedule: Schedule): RecentActivation {
  const t1 = schedule.next(earliest);
  const t2 = t1 === undefined ? undefined : schedule.next(t1);
  if (t1 !== undefined && now < t1) return { time: undefined, missed: 0 };
  if (t1 !== undefined && t2 !== undefined && now < t2) return { time: t1, missed: 1 };
  const between = t1 === undefined || t2 === undefined ? 0 : Math.round((t2.getTime() - t1.getTime()) / 1000);
  if (t1 === undefined || between < 1)
    throw new InvalidScheduleError('time difference between two schedules is less than 1 second');
  const elapsed = Math.floor((now.getTime() - t1.getTime()) / 1000);
  const missed = Math.floor(elapsed / between) + 1;
  // Step back one interval further than the estimate and let the schedule walk forward, so
  // irregular schedules (30 6-16/4 * * 1-5) and @every land on their true latest activation.
  let t: Date | undefined = new Date(t1.getTime() + (missed - 2) * between * 1000);
  let latest: Date | undefined;
  for (t = schedule.next(t); t !== undefined && t <= now; t = schedule.next(t)) latest = t;
  return { time: latest, missed };
}

/** The fields of a CronJob the timing reads. */
export interface CronTimingInput {
  readonly creationTimestamp: Date;
  readonly lastScheduleTime: Date | undefined;
  readonly startingDeadlineSeconds: number | undefined;
}

/**
 * The activation to act on now, if any: the latest unmet one after the last schedule time (or
 * creation), no earlier than `now - startingDeadlineSeconds`.
 * @throws InvalidScheduleError
 */
export function nextScheduleTime(cj: CronTimingInput, now: Date, schedule: Schedule): RecentActivation {
  let earliest = cj.lastScheduleTime ?? cj.creationTimestamp;
  if (cj.startingDeadlineSeconds !== undefined) {
    const deadline = new Date(now.getTime() - cj.startingDeadlineSeconds * 1000);
    if (deadline > earliest) earliest = deadline;
  }
  return mostRecentScheduleTime(earliest, now, schedule);
}

/** kube requeues a little after the activation so the sync sees it as due. */
const NEXT_SCHEDULE_DELTA_MS = 100;

/** Milliseconds from `now` until just after the next activation; undefined when there is none. */
export function nextScheduleDelay(cj: CronTimingInput, now: Date, schedule: Schedule): number | undefined {
  const earliest = cj.lastScheduleTime ?? cj.creationTimestamp;
  let recent: Date | undefined;
  try {
    recent = mostRecentScheduleTime(earliest, now, schedule).time;
  } catch {
    return undefined;
  }
  const next = schedule.next(recent ?? earliest);
  if (next === undefined) return undefined;
  return next.getTime() + NEXT_SCHEDULE_DELTA_MS - now.getTime();
}

/** `<cronjob>-<minutes since the epoch of the activation>`: one name per activation. */
export function jobNameFor(cronJobName: string, scheduled: Date): string {
  return `${cronJobName}-${Math.floor(scheduled.getTime() / 60_000)}`;
}

/**
 * The activation time as RFC 3339 in the CronJob's zone (kube's
 * `batch.kubernetes.io/cronjob-scheduled-timestamp`), e.g. `2026-12-02T01:00:00+01:00`.
 */
export function formatScheduledTimestamp(t: Date, zone: string | undefined): string {
  if (zone === undefined || zone === 'UTC' || zone === 'Etc/UTC' || zone === 'Local')
    return t.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const fmt = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  });
  const p: Record<string, string> = {};
  for (const part of fmt.formatToParts(t)) p[part.type] = part.value;
  const wall = Date.UTC(
    Number(p['year']),
    Number(p['month']) - 1,
    Number(p['day']),
    Number(p['hour']),
    Number(p['minute']),
    Number(p['second']),
  );
  const offsetMin = Math.round((wall - Math.floor(t.getTime() / 1000) * 1000) / 60_000);
  const local = `${p['year']}-${p['month']}-${p['day']}T${p['hour']}:${p['minute']}:${p['second']}`;
  if (offsetMin === 0) return `${local}Z`;
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${local}${sign}${hh}:${mm}`;
}
