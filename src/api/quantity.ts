/**
 * Resource quantities (`resource.Quantity`): parsing, comparison, the milli rounding kube's
 * defaulting applies to resource lists, and the canonical string form kube serialises
 * (`0.5` → `500m`, `1024Mi` → `1Gi`, `1500` → `1500`, `2000m` → `2`).
 *
 * A quantity is held exactly as `mantissa × 10^exp` with a bigint mantissa: every decimal and
 * binary suffix is exact in that form, so comparison and canonicalisation never round.
 */

/** How a quantity was written; it decides the suffix family of the canonical form. */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** An exact quantity: `mantissa × 10^exp`, and the notation it was written in. */
export interface Quantity {
  readonly mantissa: bigint;
  /** Power of ten. */
  readonly exp: number;
  readonly format: QuantityFormat;
}

const DECIMAL_SUFFIX: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXP = new Map(Object.entries(DECIMAL_SUFFIX).map(([s, e]) => [e, s]));
const BINARY_BY_POWER = new Map(Object.entries(BINARY_SUFFIX).map(([s, p]) => [p / 10, s]));

const NUMBER_RE = /^([+-]?)(\d*)(?:\.(\d*))?(.*)$/;

/**
 * Parses a quantity as kube's `ParseQuantity` does; a JSON number is read from its decimal
 * text. Precision below one nano is rounded up (away from zero), as kube does.
 *
 * @returns undefined when the text is not a quantity (kube: "quantities must match the regular
 *   expression ...").
 */
export function parseQuantity(input: unknown): Quantity | undefined {
  let text: string;
  if (typeof input === 'number' && Number.isFinite(input)) text = String(input);
  else if (typeof input === 'string') text = input;
  else return undefined;
  const m = NUMBER_RE.exec(text);
  if (m === null) return undefined;
  const sign = m[1] ?? '';
  const whole = m[2] ?? '';
  const frac = m[3] ?? '';
  const suffix = m[4] ?? '';
  if (whole === '' && frac === '') return undefined;
  let mantissa = BigInt(`${whole}${frac}` === '' ? '0' : `${whole}${frac}`);
  let exp = -frac.length;
  let format: QuantityFormat;
  if (suffix in BINARY_SUFFIX) {
    mantissa *= 1n << BigInt(BINARY_SUFFIX[suffix] ?? 0);
    format = 'BinarySI';
  } else if (suffix in DECIMAL_SUFFIX) {
    exp += DECIMAL_SUFFIX[suffix] ?? 0;
    format = 'DecimalSI';
  } else if (/^[eE][+-]?\d+$/.test(suffix)) {
    exp += Number(suffix.slice(1));
    format = 'DecimalExponent';
  } else {
    return undefined;
  }
  if (sign === '-') mantissa = -mantissa;
  return roundUpToScale({ mantissa, exp, format }, -9);
}

/** The quantity rounded away from zero to at most `scale` decimal places below the unit. */
export function roundUpToScale(q: Quantity, scale: number): Quantity {
  if (q.exp >= scale) return q;
  const div = 10n ** BigInt(scale - q.exp);
  let m = q.mantissa / div;
  if (m * div !== q.mantissa) m += q.mantissa > 0n ? 1n : -1n;
  return { mantissa: m, exp: scale, format: q.format };
}

/** kube's `SetDefaults_ResourceList` rounding: up to milli precision. */
export function roundUpToMilli(q: Quantity): Quantity {
  return roundUpToScale(q, -3);
}

function aligned(a: Quantity, b: Quantity): [bigint, bigint] {
  const e = Math.min(a.exp, b.exp);
  return [a.mantissa * 10n ** BigInt(a.exp - e), b.mantissa * 10n ** BigInt(b.exp - e)];
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantities(a: Quantity, b: Quantity): number {
  const [x, y] = aligned(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The sign of a quantity. */
export function quantitySign(q: Quantity): number {
  return q.mantissa < 0n ? -1 : q.mantissa > 0n ? 1 : 0;
}

/** True when the quantity is a whole number. */
export function isWholeQuantity(q: Quantity): boolean {
  if (q.exp >= 0) return true;
  return q.mantissa % 10n ** BigInt(-q.exp) === 0n;
}

/** The value in milli-units, rounded up (kube's `MilliValue`). */
export function milliValue(q: Quantity): bigint {
  const r = roundUpToScale(q, -3);
  return r.mantissa * 10n ** BigInt(r.exp + 3);
}

function stripTens(mantissa: bigint, exp: number): [bigint, number] {
  if (mantissa === 0n) return [0n, 0];
  let m = mantissa;
  let e = exp;
  while (m % 10n === 0n) {
    m /= 10n;
    e += 1;
  }
  return [m, e];
}

/**
 * The canonical text kube serialises for a quantity: decimal quantities with the largest
 * exponent that is a multiple of three and keeps the mantissa whole; binary quantities with
 * the largest power of 1024 that divides them exactly, falling back to decimal for values
 * under 1024 or with a fraction.
 *
 * @example canonicalQuantity(parseQuantity('0.5')!) // '500m'
 * @example canonicalQuantity(parseQuantity('2048Ki')!) // '2Mi'
 */
export function canonicalQuantity(q: Quantity): string {
  if (q.mantissa === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const [x, lim] = aligned(q, { mantissa: 1024n, exp: 0, format });
    const abs = x < 0n ? -x : x;
    if (abs < lim || !isWholeQuantity(q)) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let v = q.exp >= 0 ? q.mantissa * 10n ** BigInt(q.exp) : q.mantissa / 10n ** BigInt(-q.exp);
    let power = 0;
    while (power < 6 && v % 1024n === 0n) {
      v /= 1024n;
      power += 1;
    }
    return `${v}${BINARY_BY_POWER.get(power) ?? ''}`;
  }
  let [m, e] = stripTens(q.mantissa, q.exp);
  const r = ((e % 3) + 3) % 3;
  if (r !== 0) {
    m *= 10n ** BigInt(r);
    e -= r;
  }
  if (format === 'DecimalExponent') return e === 0 ? `${m}` : `${m}e${e}`;
  const suffix = DECIMAL_BY_EXP.get(e);
  return suffix === undefined ? `${m}e${e}` : `${m}${suffix}`;
}

/** Parses and canonicalises in one step; undefined when the input is not a quantity. */
export function canonicalQuantityText(input: unknown): string | undefined {
  const q = parseQuantity(input);
  return q === undefined ? undefined : canonicalQuantity(q);
}
