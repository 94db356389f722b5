/**
 * Query parameters of resource requests, read as kube-apiserver reads them (its query parameter
 * conversion), with its errors:
 * - the first value of a repeated parameter wins;
 * - a boolean is false when absent, `0` or `false` in any case, and true otherwise (`watch=`
 *   and `watch=yes` watch);
 * - an integer is Go's `strconv.ParseInt` of the value (a sign allowed, 64 bits; empty is an
 *   error), a resourceVersion its `strconv.ParseUint`; errors are 400s in Go's words.
 */
import { badRequest } from '../api/errors.js';
import { goQuote } from '../apply/value.js';

/** Parsed query string as fastify gives it (repeated keys become arrays). */
export type Query = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The first value of `name`, or undefined. */
export function param(query: Query, name: string): string | undefined {
  const v = query[name];
  return typeof v === 'string' ? v : v?.[0];
}

/** A boolean parameter (`watch=1`, `watch=true`): see the module comment. */
export function boolParam(query: Query, name: string): boolean {
  const v = param(query, name);
  return v !== undefined && v !== '0' && v.toLowerCase() !== 'false';
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's `strconv` error for `text`, or undefined when it parses within [`min`, `max`]. */
function strconvProblem(
  fn: string,
  text: string,
  signed: boolean,
  min: bigint,
  max: bigint,
): string | undefined {
  const syntax = signed ? /^[+-]?[0-9]+$/ : /^[0-9]+$/;
  const at = `strconv.${fn}: parsing ${goQuote(text)}`;
  if (!syntax.test(text)) return `${at}: invalid syntax`;
  const n = BigInt(text);
  return n < min || n > max ? `${at}: value out of range` : undefined;
}

/** An integer parameter, or undefined when absent. @throws ApiError 400 in Go's words */
export function intParam(query: Query, name: string): number | undefined {
  const v = param(query, name);
  if (v === undefined) return undefined;
  const problem = strconvProblem('ParseInt', v, true, INT64_MIN, INT64_MAX);
  if (problem !== undefined) throw badRequest(problem);
  return Number(v);
}

/**
 * A resourceVersion parameter as a revision: undefined when absent or empty, `0n` for `"0"`.
 * @param prefix put before kube's description of a bad value (a list's `invalid resource
 *   version: `; a read of one object has none)
 * @throws ApiError 400 when it is not an unsigned 64-bit decimal number (kube's versions are
 *   etcd revisions)
 */
export function revisionParam(
  value: string | undefined,
  prefix = 'invalid resource version: ',
): bigint | undefined {
  if (value === undefined || value === '') return undefined;
  const problem = strconvProblem('ParseUint', value, false, 0n, UINT64_MAX);
  if (problem !== undefined) {
    throw badRequest(`${prefix}resourceVersion: Invalid value: ${goQuote(value)}: ${problem}`);
  }
  return BigInt(value);
}
