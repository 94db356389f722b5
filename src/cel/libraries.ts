/**
 * Kubernetes' CEL libraries on top of the CEL standard library: lists (isSorted, sum, min, max,
 * indexOf, lastIndexOf), strings (charAt, replace, upperAscii, ... beyond what cel-js has),
 * regex (find, findAll), URLs (`url()`, `isURL()`, getters) and quantities (`quantity()`,
 * `isQuantity()`, arithmetic and comparison), authorization checks (./authz.ts). Registered on a cel-js Environment by
 * {@link registerKubernetesLibraries}.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { registerAuthzLibrary } from './authz.js';
import {
  canonicalQuantity,
  compareQuantities,
  isWholeQuantity,
  milliValue,
  parseQuantity,
  quantitySign,
  type Quantity,
} from '../validation/quantity.js';

/** A `kubernetes.URL` value. */
export class CelURL {
  constructor(readonly url: URL) {}
}

/** A `kubernetes.Quantity` value. */
export class CelQuantity {
  constructor(readonly q: Quantity) {}
}

function listCompare(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    const x = Number(a);
    const y = Number(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof CelQuantity && b instanceof CelQuantity) return compareQuantities(a.q, b.q);
  throw new Error('no such overload');
}

function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint'))
    return Number(a) === Number(b);
  return (
    JSON.stringify(a, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)) ===
    JSON.stringify(b, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))
  );
}

function toQuantity(s: string): CelQuantity {
  const q = parseQuantity(s);
  if (q === undefined)
    throw new Error(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
    );
  return new CelQuantity(q);
}

function addQuantities(a: Quantity, b: Quantity, sign: 1n | -1n): CelQuantity {
  const milli = milliValue(a) + sign * milliValue(b);
  const neg = milli < 0n;
  const abs = neg ? -milli : milli;
  const text = abs % 1000n === 0n ? `${abs / 1000n}` : `${abs}m`;
  const q = parseQuantity(`${neg ? '-' : ''}${text}`);
  if (q === undefined) throw new Error('quantity overflow');
  return new CelQuantity(q);
}

/** Registers Kubernetes' CEL libraries on `env` (mutates and returns it). */
export function registerKubernetesLibraries(env: Environment): Environment {
  const register = (
    name: string,
    receiverType: string | undefined,
    params: string[],
    returnType: string,
    handler: (...args: never[]) => unknown,
  ): void => {
    env.registerFunction({
      name,
      ...(receiverType === undefined ? {} : { receiverType }),
      returnType,
      params: params.map((type, i) => ({ name: `a${i}`, type })),
      handler: handler as (...args: unknown[]) => unknown,
    });
  };
  /** A method on `receiverType`. */
  const m = (
    name: string,
    receiverType: string,
    params: string[],
    returnType: string,
    handler: (...args: never[]) => unknown,
  ): void => register(name, receiverType, params, returnType, handler);
  /** A global function. */
  const f = (
    name: string,
    params: string[],
    returnType: string,
    handler: (...args: never[]) => unknown,
  ): void => register(name, undefined, params, returnType, handler);
  // Lists.
  m('isSorted', 'list', [], 'bool', (l: unknown[]) =>
    l.every((v, i) => i === 0 || listCompare(l[i - 1], v) <= 0),
  );
  m('sum', 'list<int>', [], 'int', (l: bigint[]) => l.reduce((a, b) => a + b, 0n));
  m('sum', 'list<double>', [], 'double', (l: number[]) => l.reduce((a, b) => a + b, 0));
  for (const t of ['int', 'double', 'string', 'bool', 'dyn']) {
    const pick = (dir: number) => (l: unknown[]) => {
      if (l.length === 0) throw new Error(`${dir < 0 ? 'min' : 'max'}(list) argument must not be empty`);
      return l.reduce((a, b) => (listCompare(b, a) * dir > 0 ? b : a));
    };
    m('min', `list<${t}>`, [], t, pick(-1));
    m('max', `list<${t}>`, [], t, pick(1));
    m('indexOf', `list<${t}>`, [t], 'int', (l: unknown[], x: unknown) =>
      BigInt(l.findIndex((v) => celEquals(v, x))),
    );
    m('lastIndexOf', `list<${t}>`, [t], 'int', (l: unknown[], x: unknown) => {
      for (let i = l.length - 1; i >= 0; i--) if (celEquals(l[i], x)) return BigInt(i);
      return -1n;
    });
  }
  // Strings (cel-js has indexOf, lastIndexOf, lowerAscii, upperAscii, split, substring, trim, join).
  m('charAt', 'string', ['int'], 'string', (s: string, i: bigint) => {
    const cps = [...s];
    if (i < 0n || i > BigInt(cps.length)) throw new Error(`index out of range: ${i}`);
    return cps[Number(i)] ?? '';
  });
  m('replace', 'string', ['string', 'string'], 'string', (s: string, a: string, b: string) =>
    s.split(a).join(b),
  );
  m(
    'replace',
    'string',
    ['string', 'string', 'int'],
    'string',
    (s: string, a: string, b: string, n: bigint) => {
      if (n < 0n) return s.split(a).join(b);
      let out = s;
      let from = 0;
      for (let k = 0n; k < n; k++) {
        const at = out.indexOf(a, from);
        if (at < 0) break;
        out = out.slice(0, at) + b + out.slice(at + a.length);
        from = at + b.length;
      }
      return out;
    },
  );
  m('reverse', 'string', [], 'string', (s: string) => [...s].reverse().join(''));
  // Regex.
  m(
    'find',
    'string',
    ['string'],
    'string',
    (s: string, re: string) => new RegExp(re, 'u').exec(s)?.[0] ?? '',
  );
  m('findAll', 'string', ['string'], 'list<string>', (s: string, re: string) =>
    [...s.matchAll(new RegExp(re, 'gu'))].map((x) => x[0]),
  );
  m('findAll', 'string', ['string', 'int'], 'list<string>', (s: string, re: string, n: bigint) => {
    const all = [...s.matchAll(new RegExp(re, 'gu'))].map((x) => x[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  });
  // URLs.
  env.registerType('kubernetes.URL', CelURL);
  const parseURL = (s: string): URL | undefined => {
    try {
      return s.startsWith('/') ? new URL(s, 'relative:///') : new URL(s);
    } catch {
      return undefined;
    }
  };
  f('url', ['string'], 'kubernetes.URL', (s: string) => {
    const u = parseURL(s);
    if (u === undefined) throw new Error(`URL parse error during conversion from string: ${s}`);
    return new CelURL(u);
  });
  f('isURL', ['string'], 'bool', (s: string) => parseURL(s) !== undefined);
  m('getScheme', 'kubernetes.URL', [], 'string', (u: CelURL) =>
    u.url.protocol === 'relative:' ? '' : u.url.protocol.replace(/:$/, ''),
  );
  m('getHost', 'kubernetes.URL', [], 'string', (u: CelURL) => u.url.host);
  m('getHostname', 'kubernetes.URL', [], 'string', (u: CelURL) => u.url.hostname.replace(/^\[|\]$/g, ''));
  m('getPort', 'kubernetes.URL', [], 'string', (u: CelURL) => u.url.port);
  m('getEscapedPath', 'kubernetes.URL', [], 'string', (u: CelURL) => u.url.pathname);
  m('getQuery', 'kubernetes.URL', [], 'map<string, list<string>>', (u: CelURL) => {
    const out: Record<string, string[]> = {};
    for (const [k, v] of u.url.searchParams) (out[k] ??= []).push(v);
    return out;
  });
  // Quantities.
  env.registerType('kubernetes.Quantity', CelQuantity);
  f('quantity', ['string'], 'kubernetes.Quantity', toQuantity);
  f('isQuantity', ['string'], 'bool', (s: string) => parseQuantity(s) !== undefined);
  const Q = 'kubernetes.Quantity';
  m('isLessThan', Q, [Q], 'bool', (a: CelQuantity, b: CelQuantity) => compareQuantities(a.q, b.q) < 0);
  m('isGreaterThan', Q, [Q], 'bool', (a: CelQuantity, b: CelQuantity) => compareQuantities(a.q, b.q) > 0);
  m('compareTo', Q, [Q], 'int', (a: CelQuantity, b: CelQuantity) => BigInt(compareQuantities(a.q, b.q)));
  m('sign', Q, [], 'int', (a: CelQuantity) => BigInt(quantitySign(a.q)));
  m('isInteger', Q, [], 'bool', (a: CelQuantity) => isWholeQuantity(a.q));
  m('asInteger', Q, [], 'int', (a: CelQuantity) => {
    if (!isWholeQuantity(a.q)) throw new Error('cannot convert value to integer');
    return milliValue(a.q) / 1000n;
  });
  m('asApproximateFloat', Q, [], 'double', (a: CelQuantity) => Number(milliValue(a.q)) / 1000);
  m('add', Q, [Q], Q, (a: CelQuantity, b: CelQuantity) => addQuantities(a.q, b.q, 1n));
  m('add', Q, ['int'], Q, (a: CelQuantity, b: bigint) => addQuantities(a.q, toQuantity(String(b)).q, 1n));
  m('sub', Q, [Q], Q, (a: CelQuantity, b: CelQuantity) => addQuantities(a.q, b.q, -1n));
  m('sub', Q, ['int'], Q, (a: CelQuantity, b: bigint) => addQuantities(a.q, toQuantity(String(b)).q, -1n));
  m('string', Q, [], 'string', (a: CelQuantity) => canonicalQuantity(a.q));
  // Authorization checks (admission expressions declare the `authorizer` variable).
  registerAuthzLibrary(env, m);
  return env;
}
