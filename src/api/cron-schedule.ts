/**
 * CronJob schedules as kube parses them (`robfig/cron/v3` `ParseStandard`, whose error text is
 * the API server's validation message) and as its cronjob controller runs them:
 * five fields (minute, hour, day of month, month, day of week) with `*`, `?`, lists, ranges,
 * steps and month/day names; the descriptors `@yearly`/`@annually`, `@monthly`, `@weekly`,
 * `@daily`/`@midnight`, `@hourly` and `@every <go duration>`; an optional `TZ=<zone>` or
 * `CRON_TZ=<zone>` prefix. Times are computed on the wall clock of the schedule's IANA zone
 * (through `Intl`), as Go's `time.Location` does.
 */
import { parseDuration } from '../flags/duration.js';

/** A parsed schedule: the next activation strictly after a time. */
export interface Schedule {
  /** The next activation after `t`, or undefined when none is found within five years. */
  next(t: Date): Date | undefined;
}

/** A schedule that does not parse; the message is robfig/cron's. */
export class ScheduleError extends Error {
  readonly code = 'CRON_INVALID_SCHEDULE';
  constructor(message: string) {
    super(message);
    this.name = 'ScheduleError';
  }
}

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const DAYS: Readonly<Record<string, number>> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const MINUTE: Bounds = { min: 0, max: 59 };
const HOUR: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTH: Bounds = { min: 1, max: 12, names: MONTHS };
const DOW: Bounds = { min: 0, max: 6, names: DAYS };

const DESCRIPTORS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** One field: the allowed values, and whether it was `*`/`?` (robfig's star bit). */
interface Field {
  readonly values: ReadonlySet<number>;
  readonly star: boolean;
}

function parseIntOrName(s: string, names: Bounds['names']): number {
  const named = names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(s))
    throw new ScheduleError(
      `failed to parse int from ${s}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`,
    );
  return Number(s);
}

function parseField(text: string, b: Bounds): Field {
  const values = new Set<number>();
  let star = false;
  for (const expr of text.split(',')) {
    const slash = expr.split('/');
    if (slash.length > 2) throw new ScheduleError(`too many slashes: ${expr}`);
    const range = (slash[0] ?? '').split('-');
    if (range.length > 2) throw new ScheduleError(`too many hyphens: ${expr}`);
    const first = range[0] ?? '';
    let start: number;
    let end: number;
    let step = 1;
    if (first === '*' || first === '?') {
      start = b.min;
      end = b.max;
      if (slash.length === 1) star = true;
    } else {
      start = parseIntOrName(first, b.names);
      end = range.length === 2 ? parseIntOrName(range[1] ?? '', b.names) : start;
    }
    if (slash.length === 2) {
      step = parseIntOrName(slash[1] ?? '', undefined);
      if (step <= 0) throw new ScheduleError(`step of range should be a positive number: ${expr}`);
      if (range.length === 1 && first !== '*' && first !== '?') end = b.max;
    }
    if (start < b.min)
      throw new ScheduleError(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
    if (end > b.max) throw new ScheduleError(`end of range (${end}) above maximum (${b.max}): ${expr}`);
    if (start > end)
      throw new ScheduleError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
    for (let v = start; v <= end; v += step) values.add(v);
  }
  return { values, star };
}

/**
 * Parses a schedule. `defaultZone` applies when the schedule has no `TZ=` prefix (the CronJob's
 * `timeZone`, else UTC, the controller manager's zone).
 * @throws ScheduleError
 */
export function parseSchedule(schedule: string, defaultZone = 'UTC'): Schedule {
  let spec = schedule.trim();
  if (spec === '') throw new ScheduleError('empty spec string');
  let zone = defaultZone;
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    const name = spec.slice(spec.indexOf('=') + 1, space < 0 ? undefined : space);
    if (space < 0 || !isTimeZone(name))
      throw new ScheduleError(`provided bad location ${name}: unknown time zone ${name}`);
    zone = name;
    spec = spec.slice(space).trim();
  }
  if (spec.startsWith('@every ')) {
    const text = spec.slice('@every '.length).trim();
    let ms: number;
    try {
      ms = parseDuration(text);
    } catch (err) {
      throw new ScheduleError(`failed to parse duration ${spec}: ${(err as Error).message}`);
    }
    return everySchedule(ms);
  }
  if (spec.startsWith('@')) {
    const expanded = DESCRIPTORS[spec]; // robfig matches descriptors case-sensitively
    if (expanded === undefined) throw new ScheduleError(`unrecognized descriptor: ${spec}`);
    spec = expanded;
  }
  const parts = spec.split(/\s+/);
  if (parts.length !== 5)
    throw new ScheduleError(`expected exactly 5 fields, found ${parts.length}: [${parts.join(' ')}]`);
  const [mi = '', h = '', dom = '', mo = '', dow = ''] = parts;
  return new SpecSchedule(
    parseField(mi, MINUTE),
    parseField(h, HOUR),
    parseField(dom, DOM),
    parseField(mo, MONTH),
    parseField(dow, DOW),
    zone,
  );
}

/** True when `Intl` knows the IANA zone `name`. */
export function isTimeZone(name: string): boolean {
  if (name === '' || name === 'Local') return name === 'Local';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** `@every d`: activations `d` apart (at least one second), sub-second parts dropped. */
function everySchedule(ms: number): Schedule {
  const delay = Math.max(1000, Math.floor(ms / 1000) * 1000);
  return { next: (t) => new Date(Math.floor(t.getTime() / 1000) * 1000 + delay) };
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** A five-field schedule on the wall clock of `zone`. */
class SpecSchedule implements Schedule {
  readonly #format: Intl.DateTimeFormat;

  constructor(
    private readonly minute: Field,
    private readonly hour: Field,
    private readonly dom: Field,
    private readonly month: Field,
    private readonly dow: Field,
    zone: string,
  ) {
    this.#format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone === 'Local' ? 'UTC' : zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  }

  next(t: Date): Date | undefined {
    // Search on the wall clock (a UTC Date standing for local fields), then map back; a wall
    // time at or before `t` (a DST fold) keeps searching.
    let wall = Math.floor((t.getTime() + this.#offset(t.getTime())) / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
    for (let tries = 0; tries < 8; tries++) {
      const found = this.#nextWall(wall);
      if (found === undefined) return undefined;
      const instant = this.#toInstant(found);
      if (instant > t.getTime()) return new Date(instant);
      wall = found + MINUTE_MS;
    }
    return undefined;
  }

  #nextWall(start: number): number | undefined {
    let w = new Date(start);
    const yearLimit = w.getUTCFullYear() + 5;
    while (w.getUTCFullYear() <= yearLimit) {
      if (!this.month.values.has(w.getUTCMonth() + 1)) {
        w = new Date(Date.UTC(w.getUTCFullYear(), w.getUTCMonth() + 1, 1));
        continue;
      }
      if (!this.#dayMatches(w)) {
        w = new Date(Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate()) + DAY_MS);
        continue;
      }
      if (!this.hour.values.has(w.getUTCHours())) {
        w = new Date(Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate(), w.getUTCHours() + 1));
        continue;
      }
      if (!this.minute.values.has(w.getUTCMinutes())) {
        w = new Date(w.getTime() + MINUTE_MS);
        continue;
      }
      return w.getTime();
    }
    return undefined;
  }

  /** robfig: with either day field a star, both must match; otherwise either may. */
  #dayMatches(w: Date): boolean {
    const domOk = this.dom.values.has(w.getUTCDate());
    const dowOk = this.dow.values.has(w.getUTCDay());
    return this.dom.star || this.dow.star ? domOk && dowOk : domOk || dowOk;
  }

  /** The zone's offset from UTC at an instant, in ms. */
  #offset(instant: number): number {
    const parts: Record<string, number> = {};
    for (const p of this.#format.formatToParts(new Date(instant)))
      if (p.type !== 'literal') parts[p.type] = Number(p.value);
    const wall = Date.UTC(
      parts['year'] ?? 1970,
      (parts['month'] ?? 1) - 1,
      parts['day'] ?? 1,
      parts['hour'] ?? 0,
      parts['minute'] ?? 0,
      parts['second'] ?? 0,
    );
    return wall - Math.floor(instant / 1000) * 1000;
  }

  #toInstant(wall: number): number {
    const guess = wall - this.#offset(wall);
    return wall - this.#offset(guess);
  }
}
