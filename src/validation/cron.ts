/**
 * CronJob schedules as kube parses them (`robfig/cron` `ParseStandard`): five fields
 * (minute, hour, day of month, month, day of week) with `*`, `?`, lists, ranges, steps and
 * month/day names, or a descriptor (`@hourly`, `@every 1h30m`, ...). Returns robfig's error
 * text, which kube puts in the validation message.
 */

interface Bounds {
  readonly min: number;
  readonly max: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTHS = {
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
const DAYS = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };
const FIELDS: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];
const DESCRIPTORS = new Set([
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
]);

function parseIntOrName(s: string, names: Bounds['names']): number | string {
  const named = names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(s))
    return `failed to parse int from ${s}: strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`;
  return Number(s);
}

function checkRange(expr: string, b: Bounds): string | undefined {
  const slash = expr.split('/');
  if (slash.length > 2) return `too many slashes: ${expr}`;
  const range = (slash[0] ?? '').split('-');
  if (range.length > 2) return `too many hyphens: ${expr}`;
  let start: number;
  let end: number;
  const first = range[0] ?? '';
  if (first === '*' || first === '?') {
    start = b.min;
    end = b.max;
  } else {
    const s = parseIntOrName(first, b.names);
    if (typeof s === 'string') return s;
    start = s;
    end = s;
    if (range.length === 2) {
      const e = parseIntOrName(range[1] ?? '', b.names);
      if (typeof e === 'string') return e;
      end = e;
    }
  }
  if (slash.length === 2) {
    const step = parseIntOrName(slash[1] ?? '', undefined);
    if (typeof step === 'string') return step;
    if (step <= 0) return `step of range should be a positive number: ${expr}`;
    if (range.length === 1 && first !== '*' && first !== '?') end = b.max;
  }
  if (start < b.min) return `beginning of range (${start}) below minimum (${b.min}): ${expr}`;
  if (end > b.max) return `end of range (${end}) above maximum (${b.max}): ${expr}`;
  if (start > end) return `beginning of range (${start}) beyond end of range (${end}): ${expr}`;
  return undefined;
}

const DURATION_RE = /^([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$/;

/** The parse error of a schedule, or undefined when it parses. */
export function cronScheduleError(schedule: string): string | undefined {
  let spec = schedule.trim();
  if (spec === '') return 'empty spec string';
  if (spec.startsWith('TZ=') || spec.startsWith('CRON_TZ=')) {
    const space = spec.indexOf(' ');
    if (space < 0) return `provided bad location ${spec.slice(spec.indexOf('=') + 1)}: unknown time zone`;
    spec = spec.slice(space).trim();
  }
  if (spec.startsWith('@')) {
    if (DESCRIPTORS.has(spec)) return undefined;
    if (spec.startsWith('@every ')) {
      const d = spec.slice('@every '.length);
      return DURATION_RE.test(d)
        ? undefined
        : `failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(d)}`;
    }
    return `unrecognized descriptor: ${spec}`;
  }
  const fields = spec.split(/\s+/);
  if (fields.length !== 5) return `expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`;
  for (let i = 0; i < 5; i++) {
    const b = FIELDS[i];
    if (b === undefined) continue;
    for (const expr of (fields[i] ?? '').split(',')) {
      const err = checkRange(expr, b);
      if (err !== undefined) return err;
    }
  }
  return undefined;
}
