/**
 * kube's renderings of values and errors in CRD validation messages: Go's `%v` of float64
 * (`1e+06`), the value part of `field.Error` (`%q` strings, `%v` numbers, `%#v` maps), and the
 * error constructors whose messages the shared `field-error.ts` helpers do not produce exactly.
 */
import type { FieldError } from '../validation/field-error.js';

/** Go's `%v` of a float64: shortest digits, exponent form when exp < -4 or exp >= 6. */
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

/** Go's `%v` of a decoded JSON value: `map[a:1 b:[x y]]`, keys sorted as fmt prints them. */
export function goV(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? goNumber(v) : goFloat(v);
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

/** Go's `%#v` of a decoded JSON value (used for map and list bad values). */
export function goSharpV(v: unknown): string {
  if (v === null || v === undefined) return 'interface {}(nil)';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return Number.isInteger(v) ? goNumber(v) : goFloat(v);
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(', ')}}`;
  if (typeof v === 'object') {
    const keys = Object.keys(v).sort();
    const o = v as Record<string, unknown>;
    return `map[string]interface {}{${keys.map((k) => `${JSON.stringify(k)}:${goSharpV(o[k])}`).join(', ')}}`;
  }
  return typeof v === 'bigint' ? v.toString() : typeof v;
}

/** The value part of `field.Error` (`ErrorBody`): `"s"`, `1`, `1.5`, `true`, `null`, `%#v`. */
export function errorValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  return goSharpV(v);
}

/** `field.Invalid` with kube's value rendering. */
export function invalidValue(field: string, value: unknown, detail: string): FieldError {
  return {
    field,
    reason: 'FieldValueInvalid',
    message: `Invalid value: ${errorValue(value)}${detail === '' ? '' : `: ${detail}`}`,
  };
}

/** `field.TypeInvalid`: `Invalid value: "string": <detail>`, reason FieldValueTypeInvalid. */
export function typeInvalid(field: string, value: unknown, detail: string): FieldError {
  return {
    field,
    reason: 'FieldValueTypeInvalid',
    message: `Invalid value: ${errorValue(value)}: ${detail}`,
  };
}

/** `field.NotSupported` with kube's value rendering. */
export function unsupportedValue(field: string, value: unknown, supported: readonly string[]): FieldError {
  const detail =
    supported.length === 0 ? '' : `: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`;
  return {
    field,
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${errorValue(value)}${detail}`,
  };
}

/** `field.Duplicate` with kube's value rendering. */
export function duplicateValue(field: string, value: unknown): FieldError {
  return { field, reason: 'FieldValueDuplicate', message: `Duplicate value: ${errorValue(value)}` };
}

/** `field.TooMany`: `Too many: <n>: must have at most <max> items`. */
export function tooManyItems(field: string, actual: number, max: number): FieldError {
  return {
    field,
    reason: 'FieldValueTooMany',
    message: `Too many: ${actual}: must have at most ${max} items`,
  };
}

/** `field.TooLongMaxLength`: `Too long: may not be longer than <n>`. */
export function tooLongMax(field: string, max: number): FieldError {
  return { field, reason: 'FieldValueTooLong', message: `Too long: may not be longer than ${max}` };
}
