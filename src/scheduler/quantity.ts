/**
 * Resource quantities (`500m`, `1Gi`, `2e3`) as numbers: what the scheduler compares. kube's
 * `resource.Quantity` rounds `Value()` and `MilliValue()` up; so do we. A malformed quantity is
 * not fatal here: the caller treats it as absent (the server validates what it stores, but a
 * scheduler facing another server must not crash on what it reads).
 */

const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};
const DECIMAL: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

const PATTERN = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E))?$/;

/** The quantity's value in base units, or undefined when the text is not a quantity. */
export function parseQuantity(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const m = PATTERN.exec(text.trim());
  if (m === null) return undefined;
  const n = Number(m[1]);
  if (m[2] !== undefined) return n * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  const scale = BINARY[suffix] ?? DECIMAL[suffix] ?? 1;
  return n * scale;
}

/** Rounds up, forgiving binary floating-point noise (`0.1 * 1000` is 100, not 101). */
function ceilExact(x: number): number {
  const r = Math.round(x);
  return Math.abs(x - r) <= 1e-9 * Math.max(1, Math.abs(x)) ? r : Math.ceil(x);
}

/** Value in thousandths, rounded up (kube's `MilliValue`); 0 for malformed input. */
export function milliValue(text: string | undefined): number {
  const v = parseQuantity(text);
  return v === undefined ? 0 : ceilExact(v * 1000);
}

/** Value in units, rounded up (kube's `Value`); 0 for malformed input. */
export function unitValue(text: string | undefined): number {
  const v = parseQuantity(text);
  return v === undefined ? 0 : ceilExact(v);
}
