/**
 * Readers for the untyped JSON of API objects, as the printers see them. Objects reach the printers
 * as stored, so any field may be missing, `null`, or of the wrong type; every reader answers the Go
 * zero value of the field (`''`, `0`, empty list or map) instead of throwing, because kube-apiserver
 * prints from typed structs where a missing field simply is its zero value.
 */

import type { KubeObject } from '../api/object.js';
import { since } from './duration.js';

/** The NAME cell of every printer. */
export const objectName = (o: KubeObject): string => o.metadata.name ?? '';

/** The AGE cell of every printer: time since creation, as kube's HumanDuration prints it. */
export const objectAge = (o: KubeObject, now: Date): string => since(o.metadata.creationTimestamp, now);

/** A read-only view of a JSON object. */
export type Fields = Readonly<Record<string, unknown>>;

const EMPTY: Fields = Object.freeze({});
const NO_ITEMS: readonly unknown[] = Object.freeze([]);

/** `value` when it is a plain JSON object, else an empty object (never `null`). */
export function obj(value: unknown): Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : EMPTY;
}

/** `value` when it is an array, else an empty array. */
export function list(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : NO_ITEMS;
}

/** `value` when it is a string, else `''` (Go's zero string). */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * `value` when it is a finite number, else `0`. Fractions are truncated toward zero, as the Go
 * integer fields these columns come from cannot hold them.
 */
export function int(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : 0;
}

/** `value` when it is a finite number, else `undefined` (an optional `*int32` left nil). */
export function optInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? Math.trunc(value) : undefined;
}

/** `value` when it is a string, else `undefined` (an optional `*string` left nil). */
export function optStr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `value` when it is a boolean, else `undefined` (an optional `*bool` left nil). */
export function optBool(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** The string entries of a JSON map (labels, annotations, selectors); other entries are skipped. */
export function stringMap(value: unknown): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const [key, entry] of Object.entries(obj(value))) {
    if (typeof entry === 'string') out.set(key, entry);
  }
  return out;
}

/** Number of keys of a JSON map (`len(map)` in Go); 0 for anything that is not an object. */
export function mapSize(value: unknown): number {
  return Object.keys(obj(value)).length;
}
