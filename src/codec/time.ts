/**
 * `meta.v1.Time` and `MicroTime` between their JSON strings and protobuf seconds/nanos.
 *
 * Kubernetes semantics (apimachinery `time_proto.go`, `micro_time_proto.go`):
 * - `Time` JSON is RFC 3339 in UTC with whole seconds (`2024-01-02T03:04:05Z`); protobuf carries
 *   the seconds and always `nanos = 0` (the nanos are dropped on purpose, as JSON drops them).
 * - `MicroTime` JSON has exactly six fractional digits (`2024-01-02T03:04:05.123456Z`); protobuf
 *   carries the nanos truncated to microseconds.
 * - The zero time (0001-01-01T00:00:00Z) is JSON `null` and an empty protobuf message.
 *
 * Parsing accepts any RFC 3339 date-time (offsets, any number of fractional digits), as Go's
 * `time.Parse(time.RFC3339, ...)` does; the calendar arithmetic is exact for years 0-9999.
 */
import { invalidValue } from './errors.js';
import { daysInMonth } from '../api/go-time.js';

/** Seconds from the Unix epoch to 0001-01-01T00:00:00Z, Go's zero `time.Time`. */
export const ZERO_TIME_SECONDS = -62135596800;

/** A point in time as protobuf's Timestamp carries it. */
export interface Timestamp {
  seconds: number;
  /** In [0, 1e9). */
  nanos: number;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Days from 1970-01-01 to the proleptic Gregorian date (H. Hinnant's algorithm). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * Parses an RFC 3339 date-time.
 * @throws CodecError `PROTOBUF_INVALID_VALUE` when `text` is not one (wrong shape, day 31 of a
 *   30-day month, hour 24, a leap second: Go rejects all of these).
 */
export function parseRfc3339(text: string): Timestamp {
  const m = RFC3339.exec(text);
  if (m === null) throw invalidValue(`not an RFC 3339 time: ${JSON.stringify(text)}`);
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    throw invalidValue(`time out of range: ${JSON.stringify(text)}`);
  }
  let offset = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) throw invalidValue(`time zone offset out of range: ${JSON.stringify(text)}`);
    offset = (oh * 3600 + om * 60) * (m[9] === '-' ? -1 : 1);
  }
  const frac = m[7];
  const nanos = frac === undefined ? 0 : Number(frac.padEnd(9, '0'));
  const seconds = daysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset;
  return { seconds, nanos };
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * Formats seconds (and nanos, for `micro`) as Go formats `Time`/`MicroTime` JSON in UTC.
 * Returns undefined when the year falls outside 0000-9999, which Go's JSON encoder refuses.
 */
export function formatRfc3339(seconds: number, nanos: number, micro: boolean): string | undefined {
  const days = Math.floor(seconds / 86400);
  const secOfDay = seconds - days * 86400;
  // Inverse of daysFromCivil.
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 0 || year > 9999) return undefined;
  const hour = Math.floor(secOfDay / 3600);
  const minute = Math.floor((secOfDay % 3600) / 60);
  const second = secOfDay % 60;
  const date = `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}`;
  if (!micro) return `${date}Z`;
  return `${date}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

/**
 * Seconds and nanos normalised as Go's `time.Unix(sec, nsec)` does: nanos outside [0, 1e9)
 * carry into the seconds.
 */
export function normalizeTimestamp(seconds: number, nanos: number): Timestamp {
  if (nanos >= 0 && nanos < 1e9) return { seconds, nanos };
  const carry = Math.floor(nanos / 1e9);
  return { seconds: seconds + carry, nanos: nanos - carry * 1e9 };
}
