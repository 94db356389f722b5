/** The vocabulary of the Pod Security checks: results, kube's wording helpers, pod JSON readers. */
import type { JsonObject } from '../../api/object.js';

/** `privileged`, `baseline` or `restricted`. */
export type Level = 'privileged' | 'baseline' | 'restricted';

/** One failed check. */
export interface CheckFailure {
  readonly reason: string;
  /** May be `''`. */
  readonly detail: string;
}

export type CheckFn = (meta: JsonObject, spec: JsonObject) => CheckFailure | undefined;

export const obj = (v: unknown): JsonObject | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
export const arr = (v: unknown): JsonObject[] =>
  Array.isArray(v) ? (v.filter((x) => obj(x) !== undefined) as JsonObject[]) : [];
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}

export function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? '' : `"${items.join('", "')}"`;
}

/** Go's `sets.String.List()`: unique, sorted. */
export function sorted(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

/** kube's `visitContainers`: init containers, containers, ephemeral containers. */
export function containers(spec: JsonObject): JsonObject[] {
  return [...arr(spec['initContainers']), ...arr(spec['containers']), ...arr(spec['ephemeralContainers'])];
}

export const sc = (c: JsonObject): JsonObject | undefined => obj(c['securityContext']);
export const podSc = (spec: JsonObject): JsonObject | undefined => obj(spec['securityContext']);
export const cname = (c: JsonObject): string => str(c['name']);
export const isWindows = (spec: JsonObject): boolean => obj(spec['os'])?.['name'] === 'windows';
export const containersPhrase = (names: readonly string[]): string =>
  `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;

export function fail(reason: string, detail: string): CheckFailure {
  return { reason, detail };
}

export const notWindows =
  (fn: CheckFn): CheckFn =>
  (meta, spec) =>
    isWindows(spec) ? undefined : fn(meta, spec);
