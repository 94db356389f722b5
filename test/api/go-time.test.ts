/**
 * Go's `time.Parse` verdicts for kube's two time layouts. Every refusal below is kube-apiserver
 * v1.33.13's own text for the same value (a Lease's `spec.renewTime` for MicroTime, a CronJob's
 * `status.lastScheduleTime` for Time), after `cannot be handled as a <Kind>: `.
 */
import { describe, expect, it } from 'vitest';
import { goTimeParseError } from '../../src/api/go-time.js';

const MICRO = '"2006-01-02T15:04:05.000000Z07:00"';
const RFC3339 = '"2006-01-02T15:04:05Z07:00"';

describe('goTimeParseError', () => {
  it('takes what Go takes', () => {
    for (const ok of [
      '2026-12-05T12:00:00.123456Z',
      '2026-12-05T1:00:00.000000Z',
      '2026-12-05T12:00:00.000000+01:00',
      '2024-02-29T00:00:00.000000Z',
    ])
      expect(goTimeParseError(ok, true), ok).toBeUndefined();
    for (const ok of [
      '2026-12-05T12:00:00Z',
      '2026-12-05T12:00:00.5Z',
      '2026-12-05T12:00:00.123456789-07:00',
    ])
      expect(goTimeParseError(ok, false), ok).toBeUndefined();
  });

  it('refuses a MicroTime as Go does, naming the same rest and element', () => {
    const cases: Array<[string, string]> = [
      ['x', `parsing time "x" as ${MICRO}: cannot parse "x" as "2006"`],
      ['', `parsing time "" as ${MICRO}: cannot parse "" as "2006"`],
      [
        '2026-12-05T12:00:00Z',
        `parsing time "2026-12-05T12:00:00Z" as ${MICRO}: cannot parse "Z" as ".000000"`,
      ],
      [
        '2026-12-05T12:00:00.123456789Z',
        `parsing time "2026-12-05T12:00:00.123456789Z" as ${MICRO}: cannot parse "789Z" as "Z07:00"`,
      ],
      [
        '2026-12-05T12:00:00.1Z',
        `parsing time "2026-12-05T12:00:00.1Z" as ${MICRO}: cannot parse ".1Z" as ".000000"`,
      ],
      ['2026-13-05T12:00:00.000000Z', 'parsing time "2026-13-05T12:00:00.000000Z": month out of range'],
      ['2026-02-30T12:00:00.000000Z', 'parsing time "2026-02-30T12:00:00.000000Z": day out of range'],
      ['2026-12-05T24:00:00.000000Z', 'parsing time "2026-12-05T24:00:00.000000Z": hour out of range'],
      ['2026-12-05T12:60:00.000000Z', 'parsing time "2026-12-05T12:60:00.000000Z": minute out of range'],
      ['2026-12-05T12:00:00.000000Zx', 'parsing time "2026-12-05T12:00:00.000000Zx": extra text: "x"'],
      [
        '2026-12-05T12:00:00.000000+0100',
        `parsing time "2026-12-05T12:00:00.000000+0100" as ${MICRO}: cannot parse "+0100" as "Z07:00"`,
      ],
      ['2026/12/05', `parsing time "2026/12/05" as ${MICRO}: cannot parse "/12/05" as "-"`],
      [
        '2026-12-05 12:00:00.000000Z',
        `parsing time "2026-12-05 12:00:00.000000Z" as ${MICRO}: cannot parse " 12:00:00.000000Z" as "T"`,
      ],
    ];
    for (const [value, error] of cases) expect(goTimeParseError(value, true), value).toBe(error);
  });

  it('refuses a Time as Go does', () => {
    const cases: Array<[string, string]> = [
      ['x', `parsing time "x" as ${RFC3339}: cannot parse "x" as "2006"`],
      [
        '2026-12-05T12:00:00',
        `parsing time "2026-12-05T12:00:00" as ${RFC3339}: cannot parse "" as "Z07:00"`,
      ],
      [
        '2026-12-05T12:00:00+25:00',
        'parsing time "2026-12-05T12:00:00+25:00": time zone offset hour out of range',
      ],
      ['2026-12-32T00:00:00Z', 'parsing time "2026-12-32T00:00:00Z": day out of range'],
      [
        '2026-1-05T00:00:00Z',
        `parsing time "2026-1-05T00:00:00Z" as ${RFC3339}: cannot parse "1-05T00:00:00Z" as "01"`,
      ],
      ['2026-12-05T12:00:00Z ', 'parsing time "2026-12-05T12:00:00Z ": extra text: " "'],
    ];
    for (const [value, error] of cases) expect(goTimeParseError(value, false), value).toBe(error);
  });
});
