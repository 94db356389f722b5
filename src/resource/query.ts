/**
 * Query parameters of resource requests, read as kube-apiserver reads them: the first value of a
 * repeated parameter wins; booleans accept `true`/`1` (and `false`/`0`); malformed numbers and
 * resource versions are 400s.
 */
import { badRequest } from '../api/errors.js';

/** Parsed query string as fastify gives it (repeated keys become arrays). */
export type Query = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The first value of `name`, or undefined. */
export function param(query: Query, name: string): string | undefined {
  const v = query[name];
  return typeof v === 'string' ? v : v?.[0];
}

/** A boolean parameter (`watch=1`, `watch=true`); absent or empty is false. */
export function boolParam(query: Query, name: string): boolean {
  const v = param(query, name);
  if (v === undefined || v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw badRequest(`invalid boolean value ${JSON.stringify(v)} for parameter ${name}`);
}

/** A non-negative integer parameter, or undefined when absent. */
export function intParam(query: Query, name: string): number | undefined {
  const v = param(query, name);
  if (v === undefined || v === '') return undefined;
  if (!/^-?[0-9]+$/.test(v))
    throw badRequest(`invalid value ${JSON.stringify(v)} for parameter ${name}: not an integer`);
  return Number(v);
}

/**
 * A resourceVersion parameter as a revision: undefined when absent or empty, `0n` for `"0"`.
 * @throws ApiError 400 when it is not a decimal number (kube's versions are etcd revisions).
 */
export function revisionParam(value: string | undefined): bigint | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^[0-9]+$/.test(value) || value.length > 20)
    throw badRequest(`invalid resource version: ${JSON.stringify(value)}`);
  return BigInt(value);
}
