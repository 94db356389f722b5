/**
 * Go durations (`time.ParseDuration` / `Duration.String`), the syntax kube-apiserver's flags use:
 * `5m0s`, `1h`, `1.5h`, `300ms`, `2h45m`, `0`. Values are milliseconds (fractions allowed) in
 * code; nanosecond precision is kept only as far as a double carries it.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3, // U+00B5 micro sign
  μs: 1e-3, // U+03BC Greek mu
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** A malformed duration; the message is Go's. */
export class DurationError extends Error {
  readonly code = 'CLI_INVALID_DURATION';
  constructor(message: string) {
    super(message);
    this.name = 'DurationError';
  }
}

/**
 * Parses a Go duration into milliseconds: an optional sign, then one or more
 * `<decimal><unit>` terms; a bare `0` is allowed, other bare numbers are not (Go: "missing unit").
 * @throws DurationError
 */
export function parseDuration(text: string): number {
  const quoted = JSON.stringify(text);
  let s = text;
  let sign = 1;
  if (s.startsWith('-') || s.startsWith('+')) {
    if (s.startsWith('-')) sign = -1;
    s = s.slice(1);
  }
  if (s === '0') return 0;
  if (s === '') throw new DurationError(`time: invalid duration ${quoted}`);
  let total = 0;
  const term = /^([0-9]*(?:\.[0-9]*)?)([^0-9.]+)/;
  while (s !== '') {
    const m = term.exec(s);
    if (m === null) {
      if (/^[0-9.]+$/.test(s)) throw new DurationError(`time: missing unit in duration ${quoted}`);
      throw new DurationError(`time: invalid duration ${quoted}`);
    }
    const [whole, num = '', unit = ''] = m;
    if (num === '' || num === '.') throw new DurationError(`time: invalid duration ${quoted}`);
    const scale = UNIT_MS[unit];
    if (scale === undefined)
      throw new DurationError(`time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`);
    total += Number.parseFloat(num) * scale;
    s = s.slice(whole.length);
  }
  return sign * total;
}

function trimFraction(n: number, digits: number): string {
  return n.toFixed(digits).replace(/\.?0+$/, '');
}

/**
 * Formats milliseconds as Go's `Duration.String`: `0s`, `1.5s`, `500ms`, `5m0s`, `1h0m0s`.
 * Sub-nanosecond parts are rounded away.
 */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let ns = Math.round(Math.abs(ms) * 1e6);
  let out: string;
  if (ns < 1e9) {
    if (ns < 1e3) out = `${ns}ns`;
    else if (ns < 1e6) out = `${trimFraction(ns / 1e3, 3)}µs`;
    else out = `${trimFraction(ns / 1e6, 6)}ms`;
  } else {
    const h = Math.floor(ns / 3.6e12);
    ns -= h * 3.6e12;
    const m = Math.floor(ns / 6e10);
    ns -= m * 6e10;
    const sec = trimFraction(ns / 1e9, 9);
    out = h > 0 ? `${h}h${m}m${sec}s` : m > 0 ? `${m}m${sec}s` : `${sec}s`;
  }
  return neg ? `-${out}` : out;
}
