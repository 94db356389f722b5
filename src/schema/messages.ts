/**
 * kube's renderings of values and errors in CRD validation messages: the value part of
 * `field.Error` (`%q` strings, `%v` numbers, `%#v` maps; Go's renderings are in
 * `src/api/go-format.ts`), and the error constructors whose messages the shared `field-error.ts`
 * helpers do not produce exactly.
 */
import { goNumber, goSharpV } from '../api/go-format.js';
import type { FieldError } from '../validation/field-error.js';

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
