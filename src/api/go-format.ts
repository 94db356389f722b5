/**
 * Go's renderings of decoded JSON values, as kube's messages print them: `%v` and `%#v` of the
 * `interface{}` values encoding/json and the unstructured converters produce (integers as
 * int64, other numbers as float64, maps with their keys sorted as fmt prints them).
 */

/** Go's `%v` of a float64 (`strconv.FormatFloat(v, 'g', -1, 64)`): exponent form when exp < -4 or exp >= 6. */
export function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mant = '', expS = '0'] = v.toExponential().split('e');
  const exp = Number(expS);
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    return `${mant}e${exp < 0 ? '-' : '+'}${abs < 10 ? `0${abs}` : abs}`;
  }
  return String(v);
}

/** A number as kube prints it when it came from JSON: integers as int64, others as float64. */
export function goNumber(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? BigInt(v).toString() : goFloat(v);
}

/** Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`. */
export function goV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return goNumber(v);
  if (Array.isArray(v)) return `[${v.map(goV).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goV(o[k])}`)
      .join(' ')}]`;
  }
  return typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : typeof v;
}

/** Go's `%#v` of a decoded JSON value: `map[string]interface {}{"a":1}`, `[]interface {}{…}`. */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (typeof v === 'object') {
    const keys = Object.keys(v).sort();
    const o = v as Record<string, unknown>;
    return `map[string]interface {}{${keys.map((k) => `${JSON.stringify(k)}:${goSharpV(o[k])}`).join(', ')}}`;
  }
  return typeof v === 'bigint' ? v.toString() : typeof v;
}

/** Go's `%T` of a decoded JSON value. */
export function goTypeOf(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}
