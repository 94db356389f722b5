/**
 * Field-level validation errors, shaped like kube-apiserver's `field.Error`: a field path in
 * kube's notation (`spec.template.spec.containers[0].image`), a machine reason (the
 * `StatusCause.reason` clients switch on) and kube's human message (`Required value`,
 * `Invalid value: "Foo": <detail>`, ...). The HTTP layer turns a non-empty list into a 422 with
 * `invalid()` from `src/api/errors.ts`, one cause per error.
 */

/** The `StatusCause.reason` values validation produces (kube's `field.ErrorType`). */
export type FieldErrorReason =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueTypeInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueNotFound';

/** One validation failure; `message` is what kube puts in `StatusCause.message` (no field prefix). */
export interface FieldError {
  readonly field: string;
  readonly reason: FieldErrorReason;
  readonly message: string;
}

/** A bad value already in Go's `%#v` syntax, shown as it is (`[]string{"*", "apps"}`). */
export class GoValue {
  constructor(readonly text: string) {}
}

/** A Go slice of strings in `%#v` syntax; `type` names the element type (`string`, `admissionregistration.OperationType`). */
export function goStringSlice(values: readonly string[], type = 'string'): GoValue {
  return new GoValue(`[]${type}{${values.map((v) => JSON.stringify(v)).join(', ')}}`);
}

/**
 * Renders a bad value the way kube's `ErrorBody` does for the common cases: strings quoted,
 * numbers and booleans bare, absent values as `null`. Objects and lists are rendered as JSON
 * (kube prints Go syntax there; no client parses it).
 */
export function formatValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (value instanceof GoValue) return value.text;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    // Cyclic values cannot come from JSON; say something rather than throw from validation.
    return '<unprintable>';
  }
}

function withDetail(head: string, detail: string): string {
  return detail === '' ? head : `${head}: ${detail}`;
}

/** `Required value[: detail]` — a value that must be set is absent, empty or null. */
export function required(field: string, detail = ''): FieldError {
  return { field, reason: 'FieldValueRequired', message: withDetail('Required value', detail) };
}

/** `Invalid value: <value>[: detail]` — malformed or out-of-range value. */
export function invalid(field: string, value: unknown, detail: string): FieldError {
  return {
    field,
    reason: 'FieldValueInvalid',
    message: withDetail(`Invalid value: ${formatValue(value)}`, detail),
  };
}

/** `Unsupported value: <value>: supported values: "a", "b"` — not one of an enumeration. */
export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  const detail =
    supported.length === 0 ? '' : `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`;
  return {
    field,
    reason: 'FieldValueNotSupported',
    message: withDetail(`Unsupported value: ${formatValue(value)}`, detail),
  };
}

/** `Duplicate value: <value>` — a value that must be unique is repeated. */
export function duplicate(field: string, value: unknown, detail = ''): FieldError {
  return {
    field,
    reason: 'FieldValueDuplicate',
    message: withDetail(`Duplicate value: ${formatValue(value)}`, detail),
  };
}

/** `Forbidden: detail` — well-formed but not allowed here (e.g. set on the wrong type). */
export function forbidden(field: string, detail: string): FieldError {
  return { field, reason: 'FieldValueForbidden', message: withDetail('Forbidden', detail) };
}

/** `Too long: must have at most N bytes` — kube's `field.TooLong`. */
export function tooLong(field: string, maxBytes: number): FieldError {
  return {
    field,
    reason: 'FieldValueTooLong',
    message: `Too long: must have at most ${maxBytes} bytes`,
  };
}

/** `Too long: may not be longer than N` — kube's `field.TooLongMaxLength` (characters). */
export function tooLongChars(field: string, maxLength: number): FieldError {
  return {
    field,
    reason: 'FieldValueTooLong',
    message: `Too long: may not be longer than ${maxLength}`,
  };
}

/** `Too many: <n>: must have at most M items`. */
export function tooMany(field: string, actual: number, max: number): FieldError {
  return {
    field,
    reason: 'FieldValueTooMany',
    message: `Too many: ${actual}: must have at most ${max} items`,
  };
}

/** `Not found: <value>[: detail]` — a reference to something that is not declared. */
export function notFound(field: string, value: unknown, detail = ''): FieldError {
  return {
    field,
    reason: 'FieldValueNotFound',
    message: withDetail(`Not found: ${formatValue(value)}`, detail),
  };
}

/** kube's `FieldImmutableErrorMsg`. */
export const IMMUTABLE = 'field is immutable';

/** kube's `IsNegativeErrorMsg`. */
export const NEGATIVE = 'must be greater than or equal to 0';
