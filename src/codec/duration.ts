/**
 * `meta.v1.Duration`: JSON is a Go duration string (`"1m30s"`, `"1.5s"`, `"500ms"`), protobuf
 * is `int64 duration = 1` in nanoseconds. Formatting matches Go's `time.Duration.String`,
 * parsing matches `time.ParseDuration` (units `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`,
 * fractions, a sign, several components), except that fractions are scaled exactly where Go
 * goes through float64 (the results differ only past 2^53 ns fractions, i.e. never in practice).
 *
 * Nanoseconds are `bigint` here: a duration spans the whole int64 range.
 */
import { invalidValue } from './errors.js';

const UNITS: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n],
  ['\u03bcs', 1_000n],
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const INT64_MAX = (1n << 63n) - 1n;
const COMPONENT = /^(\d*)(?:\.(\d*))?([^\d.]+)/;

/**
 * Parses a Go duration string into nanoseconds.
 * @throws CodecError `PROTOBUF_INVALID_VALUE` on a malformed string or an int64 overflow.
 */
export function parseDuration(text: string): bigint {
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalidValue(`invalid duration ${JSON.stringify(text)}`);
  let total = 0n;
  while (s !== '') {
    const m = COMPONENT.exec(s);
    const whole = m?.[1] ?? '';
    const frac = m?.[2];
    if (m === null || (whole === '' && (frac === undefined || frac === ''))) {
      throw invalidValue(`invalid duration ${JSON.stringify(text)}`);
    }
    const unit = UNITS.get(m[3] ?? '');
    if (unit === undefined) throw invalidValue(`unknown unit in duration ${JSON.stringify(text)}`);
    let v = BigInt(whole === '' ? '0' : whole) * unit;
    if (frac !== undefined && frac !== '') v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += v;
    if (total > INT64_MAX + (negative ? 1n : 0n))
      throw invalidValue(`duration overflows int64: ${JSON.stringify(text)}`);
    s = s.slice(m[0].length);
  }
  return negative ? -total : total;
}

/** The digits of `v / 10^prec` after the point, trailing zeros dropped (Go's `fmtFrac`). */
function fraction(v: bigint, prec: number): { text: string; rest: bigint } {
  const scale = 10n ** BigInt(prec);
  const frac = v % scale;
  const rest = v / scale;
  if (frac === 0n) return { text: '', rest };
  return { text: `.${frac.toString().padStart(prec, '0').replace(/0+$/, '')}`, rest };
}

/** Formats nanoseconds as Go's `time.Duration.String` does (`0s`, `1.5ms`, `1h0m0s`). */
export function formatDuration(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const negative = nanos < 0n;
  const u = negative ? -nanos : nanos;
  let out: string;
  if (u < 1_000_000_000n) {
    const [prec, unit] = u < 1_000n ? [0, 'ns'] : u < 1_000_000n ? [3, '\u00b5s'] : [6, 'ms'];
    const { text, rest } = fraction(u, prec);
    out = `${rest}${text}${unit}`;
  } else {
    const { text, rest } = fraction(u, 9);
    const secs = rest % 60n;
    const mins = rest / 60n;
    out = `${secs}${text}s`;
    if (mins > 0n) {
      out = `${mins % 60n}m${out}`;
      const hours = mins / 60n;
      if (hours > 0n) out = `${hours}h${out}`;
    }
  }
  return negative ? `-${out}` : out;
}
