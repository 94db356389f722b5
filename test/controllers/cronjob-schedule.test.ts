import { describe, expect, it } from 'vitest';
import { parseSchedule, ScheduleError } from '../../src/api/cron-schedule.js';
import {
  formatScheduledTimestamp,
  InvalidScheduleError,
  jobNameFor,
  mostRecentScheduleTime,
  nextScheduleDelay,
  nextScheduleTime,
} from '../../src/controllers/cronjob/timing.js';

const at = (s: string): Date => new Date(s);
const iso = (d: Date | undefined): string | undefined => d?.toISOString();

describe('cron schedules (robfig ParseStandard)', () => {
  it('steps through five-field schedules', () => {
    expect(iso(parseSchedule('*/15 * * * *').next(at('2026-12-02T00:07:30Z')))).toBe(
      '2026-12-02T00:15:00.000Z',
    );
    expect(iso(parseSchedule('* * * * *').next(at('2026-12-02T00:07:00Z')))).toBe('2026-12-02T00:08:00.000Z');
    expect(iso(parseSchedule('30 6-16/4 * * 1-5').next(at('2026-12-04T15:00:00Z')))).toBe(
      '2026-12-07T06:30:00.000Z',
    );
    expect(iso(parseSchedule('0 0 1 jan *').next(at('2026-06-01T00:00:00Z')))).toBe(
      '2027-01-01T00:00:00.000Z',
    );
  });

  it('ORs day-of-month and day-of-week unless one is a star', () => {
    // 13th or Friday: from Tue 2026-12-01 the next is Fri 12-04.
    expect(iso(parseSchedule('0 0 13 * 5').next(at('2026-12-01T00:00:00Z')))).toBe(
      '2026-12-04T00:00:00.000Z',
    );
    // Every day of the month but only Fridays.
    expect(iso(parseSchedule('0 0 * * 5').next(at('2026-12-04T00:00:00Z')))).toBe('2026-12-11T00:00:00.000Z');
  });

  it('expands the descriptors and @every', () => {
    expect(iso(parseSchedule('@hourly').next(at('2026-12-02T00:07:00Z')))).toBe('2026-12-02T01:00:00.000Z');
    expect(iso(parseSchedule('@daily').next(at('2026-12-02T00:07:00Z')))).toBe('2026-12-03T00:00:00.000Z');
    expect(iso(parseSchedule('@weekly').next(at('2026-12-02T00:07:00Z')))).toBe('2026-12-06T00:00:00.000Z');
    expect(iso(parseSchedule('@monthly').next(at('2026-12-02T00:07:00Z')))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(parseSchedule('@yearly').next(at('2026-12-02T00:07:00Z')))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(parseSchedule('@every 90s').next(at('2026-12-02T00:07:00.500Z')))).toBe(
      '2026-12-02T00:08:30.000Z',
    );
  });

  it('computes on the wall clock of the time zone', () => {
    // 09:00 in New York (EST, UTC-5) is 14:00Z.
    expect(iso(parseSchedule('0 9 * * *', 'America/New_York').next(at('2026-12-02T00:00:00Z')))).toBe(
      '2026-12-02T14:00:00.000Z',
    );
    expect(iso(parseSchedule('TZ=Asia/Tokyo 0 9 * * *').next(at('2026-12-02T00:00:00Z')))).toBe(
      '2026-12-03T00:00:00.000Z',
    );
  });

  it('rejects what robfig rejects, with its words', () => {
    expect(() => parseSchedule('* * *')).toThrow(ScheduleError);
    expect(() => parseSchedule('61 * * * *')).toThrow('end of range (61) above maximum (59): 61');
    expect(() => parseSchedule('@fortnightly')).toThrow('unrecognized descriptor: @fortnightly');
    expect(() => parseSchedule('TZ=Mars/Olympus 0 * * * *')).toThrow(ScheduleError);
  });
});

describe('cronjob timing', () => {
  it('finds the most recent activation and counts the missed ones', () => {
    const s = parseSchedule('* * * * *');
    const r = mostRecentScheduleTime(at('2026-12-02T00:00:30Z'), at('2026-12-02T00:10:10Z'), s);
    expect(iso(r.time)).toBe('2026-12-02T00:10:00.000Z');
    expect(r.missed).toBe(10);
    expect(
      mostRecentScheduleTime(at('2026-12-02T00:00:30Z'), at('2026-12-02T00:00:59Z'), s).time,
    ).toBeUndefined();
  });

  it('fails a schedule that never fires (Feb 31st) as kube does', () => {
    const s = parseSchedule('59 23 31 2 *');
    expect(() => mostRecentScheduleTime(at('2026-12-02T00:00:00Z'), at('2026-12-03T00:00:00Z'), s)).toThrow(
      InvalidScheduleError,
    );
  });

  it('honours startingDeadlineSeconds and delays to just after the next activation', () => {
    const s = parseSchedule('*/5 * * * *');
    const cj = {
      creationTimestamp: at('2026-12-02T00:00:00Z'),
      lastScheduleTime: undefined,
      startingDeadlineSeconds: 60,
    };
    expect(nextScheduleTime(cj, at('2026-12-02T00:12:00Z'), s).time).toBeUndefined();
    expect(iso(nextScheduleTime(cj, at('2026-12-02T00:10:30Z'), s).time)).toBe('2026-12-02T00:10:00.000Z');
    expect(nextScheduleDelay(cj, at('2026-12-02T00:12:00Z'), s)).toBe(3 * 60_000 + 100);
  });

  it('names jobs by scheduled minutes and stamps the zone-local time', () => {
    expect(jobNameFor('hello', at('2026-12-02T00:10:00Z'))).toBe(
      `hello-${Date.parse('2026-12-02T00:10:00Z') / 60000}`,
    );
    expect(formatScheduledTimestamp(at('2026-12-02T00:10:00Z'), undefined)).toBe('2026-12-02T00:10:00Z');
    expect(formatScheduledTimestamp(at('2026-12-02T00:10:00Z'), 'Europe/Berlin')).toBe(
      '2026-12-02T01:10:00+01:00',
    );
  });
});
