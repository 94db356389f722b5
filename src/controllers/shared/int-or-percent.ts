/**
 * `intstr.IntOrString` scaled against a total, as apimachinery's
 * `GetScaledValueFromIntOrPercent`: a number is itself; `"25%"` is 25 % of the total, rounded up
 * or down as asked.
 */

/** A value that is neither a number nor `N%`. */
export class IntOrPercentError extends Error {
  readonly code = 'CONTROLLER_INVALID_INT_OR_PERCENT';
  constructor(value: unknown) {
    super(`invalid value for IntOrString: ${JSON.stringify(value)}`);
    this.name = 'IntOrPercentError';
  }
}

/**
 * `value` against `total`; `undefined` is `fallback`.
 * @throws IntOrPercentError for a string that is not a percentage.
 */
export function scaledValue(
  value: number | string | undefined,
  total: number,
  roundUp: boolean,
  fallback = 0,
): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') return value;
  const m = /^(-?\d+)%$/.exec(value);
  if (m === null) throw new IntOrPercentError(value);
  const share = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(share) : Math.floor(share);
}
