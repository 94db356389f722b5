/**
 * In-place defaulting helpers over decoded JSON, following Go's zero-value rules: a string
 * field is defaulted when absent, null or `""`; a pointer field when absent or null; a plain
 * (non-pointer) integer field when absent, null or 0. Values of the wrong type are left alone
 * for validation (or the decoder) to reject.
 *
 * Every default is a fresh value: objects handed out here are owned by the caller's object and
 * may be mutated later.
 */
import { isObject, type JsonObject } from '../validation/json.js';

export type { JsonObject } from '../validation/json.js';

/** The object at `o[k]`, creating `{}` when absent or null; undefined when another type is there. */
export function ensureObject(o: JsonObject, k: string): JsonObject | undefined {
  const v = o[k];
  if (v === undefined || v === null) {
    const created: JsonObject = {};
    o[k] = created;
    return created;
  }
  return isObject(v) ? v : undefined;
}

/** The existing object at `o[k]`, if any. */
export function objectAt(o: JsonObject | undefined, k: string): JsonObject | undefined {
  const v = o?.[k];
  return isObject(v) ? v : undefined;
}

/** Sets `o[k]` when it is absent or null (a pointer field). */
export function defaultPointer(o: JsonObject, k: string, value: unknown): void {
  if (o[k] === undefined || o[k] === null) o[k] = value;
}

/** Sets `o[k]` when it is absent, null or the empty string (a string field). */
export function defaultString(o: JsonObject, k: string, value: string): void {
  const v = o[k];
  if (v === undefined || v === null || v === '') o[k] = value;
}

/** Sets `o[k]` when it is absent, null or 0 (a non-pointer integer field). */
export function defaultNonZero(o: JsonObject, k: string, value: number): void {
  const v = o[k];
  if (v === undefined || v === null || v === 0) o[k] = value;
}

/** Calls `fn` for every object item of the array at `o[k]`. */
export function eachObject(
  o: JsonObject | undefined,
  k: string,
  fn: (item: JsonObject, i: number) => void,
): void {
  const a = o?.[k];
  if (!Array.isArray(a)) return;
  a.forEach((item, i) => {
    if (isObject(item)) fn(item, i);
  });
}

/** True when `o[k]` is an array or object with at least one entry. */
export function nonEmpty(o: JsonObject | undefined, k: string): boolean {
  const v = o?.[k];
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return false;
}
