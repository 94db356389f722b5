/**
 * The AGE-style cells: kube-apiserver sends ages as strings already formatted ("5m", "3d4h"), not
 * as timestamps, using apimachinery's `duration.HumanDuration` rules. These are reproduced exactly,
 * because `kubectl get` prints the server's string verbatim.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const YEAR = 365 * DAY;

/**
 * Formats a duration in milliseconds with two to three significant figures, as
 * `duration.HumanDuration` does.
 *
 * Edge cases, matching the Go rules:
 * - down to two seconds negative (exclusive) counts as clock skew and prints `0s`; further back in
 *   the future prints `<invalid>`;
 * - below 2 minutes: whole seconds (`119s`); below 10 minutes: minutes and seconds (`3m7s`, `5m`);
 *   below 3 hours: minutes (`179m`); below 8 hours: hours and minutes (`7h59m`); below 48 hours:
 *   hours (`47h`); below 8 days: days and hours (`7d23h`); below 2 years: days (`729d`); below
 *   8 years: years and days (`7y364d`); beyond: years (`8y`). A zero second part is omitted
 *   (`5m`, not `5m0s`).
 * - units are truncated, never rounded (a year is 365 days).
 */
export function humanDuration(ms: number): string {
  // Go truncates the float seconds toward zero: -1.9s is -1 and still "0s".
  const seconds = Math.trunc(ms / SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 8 * 24) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 2 * 365 * 24) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 8 * 365 * 24) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${Math.trunc(ms / YEAR)}y`;
}

/** Go's zero `time.Time` as RFC 3339 (what a zero `metav1.Time` may be stored as). */
const ZERO_TIME_MS = -62135596800000; // Date.parse('0001-01-01T00:00:00Z')

/**
 * Milliseconds since the epoch of an RFC 3339 timestamp field, or `undefined` for what Go treats
 * as the zero time: missing, `null`, not a string, unparseable, or `0001-01-01T00:00:00Z`.
 */
export function parseTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms === ZERO_TIME_MS) return undefined;
  return ms;
}

/**
 * The elapsed time from `timestamp` to `now` as {@link humanDuration} prints it
 * (`translateTimestampSince`); `<unknown>` when the timestamp is the zero time (see
 * {@link parseTime}). Used for AGE, LAST SEEN, LAST SCHEDULE and the restart suffix.
 */
export function since(timestamp: unknown, now: Date): string {
  const ms = parseTime(timestamp);
  return ms === undefined ? '<unknown>' : humanDuration(now.getTime() - ms);
}
