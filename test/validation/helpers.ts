/**
 * Shared helpers for the validation tests: run the handler's pipeline (default → prepare →
 * validate) and pick errors by field and reason.
 */
import { expect } from 'vitest';
import { validateObject, type FieldError } from '../../src/validation/index.js';
import { defaultObject } from '../../src/defaults/index.js';
import { prepareForCreate } from '../../src/defaults/prepare.js';

/** A deep copy, so table cases never share nested objects. */
export function clone<T>(v: T): T {
  return structuredClone(v);
}

/** Defaults, prepares (with a fixed uid) and validates a create; returns the errors. */
export function createErrors(group: string, kind: string, obj: Record<string, unknown>): FieldError[] {
  const o = clone(obj);
  defaultObject(group, kind, o);
  const meta = (o['metadata'] ??= {}) as Record<string, unknown>;
  meta['uid'] ??= '00000000-0000-0000-0000-000000000001';
  return [...prepareForCreate(group, kind, o), ...validateObject(group, kind, o)];
}

/** Defaults and validates an update of `old` (already stored, so defaulted) to `obj`. */
export function updateErrors(
  group: string,
  kind: string,
  obj: Record<string, unknown>,
  old: Record<string, unknown>,
): FieldError[] {
  const o = clone(obj);
  defaultObject(group, kind, o);
  return validateObject(group, kind, o, old);
}

/** The defaulted copy of an object. */
export function defaulted(
  group: string,
  kind: string,
  obj: Record<string, unknown>,
): Record<string, unknown> {
  const o = clone(obj);
  defaultObject(group, kind, o);
  return o;
}

/** Asserts exactly one error at `field` with `reason`, and returns it. */
export function expectError(errs: FieldError[], field: string, reason: FieldError['reason']): FieldError {
  const found = errs.filter((e) => e.field === field && e.reason === reason);
  expect(found, `${reason} at ${field} in ${JSON.stringify(errs, null, 1)}`).toHaveLength(1);
  return found[0] as FieldError;
}

/** Asserts that no error is reported. */
export function expectValid(errs: FieldError[]): void {
  expect(errs, JSON.stringify(errs, null, 1)).toEqual([]);
}

/** A minimal valid container. */
export const container = (name = 'app', image = 'nginx:1.27'): Record<string, unknown> => ({ name, image });

/** A minimal pod template with labels `app: web`. */
export const template = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [container()], ...spec },
});
