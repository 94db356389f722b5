/**
 * What the operations of one run share: the client, the model, the namespace, the tally, the
 * tolerated variations, and the conversion of wire objects into model objects.
 */
import type { VerifyHttp } from './http.js';
import type { Model, ModelObject } from './model.js';
import { Violation, type RuleName, type RuleTally } from './rules.js';

/**
 * Behaviours a conforming server may choose between (kube-apiserver picks one of each); the
 * default `either` accepts both.
 */
export interface Tolerances {
  /** A watch from a very old version (1): replayed, or refused with 410. */
  readonly oldWatch: 'either' | 'replay' | 'gone';
  /** A resourceVersion=0 list with a limit: honoured, or the limit ignored (the whole list). */
  readonly anyLimit: 'either' | 'honor' | 'ignore';
  /** `sendInitialEvents`: may be refused (the WatchList feature off), or must be served. */
  readonly initialEvents: 'optional' | 'required';
  /**
   * A Not-older-than read (list or watch) at a revision the server itself returned may answer
   * 504 "Too large resource version": kube-apiserver's watch cache cannot see revisions written
   * to other resources without etcd progress notifications (etcd < 3.4.31), and gives up after 3 s.
   */
  readonly staleCache: 'allow' | 'forbid';
  /**
   * A list whose field selector names one object (`metadata.name=a`) may be served as a get:
   * kube-apiserver's registry does, with a get's Not-older-than reading of a resourceVersion
   * instead of the list table's Exact.
   */
  readonly nameSelectorGet: 'allow' | 'forbid';
  /**
   * Where a watch with resourceVersion unset (and no sendInitialEvents) may start: `consistent`
   * (at or after the last write, the spec's Most Recent) or `any` (kube-apiserver 1.33's legacy
   * case: its watch cache starts such a watch at whatever it has seen, which may lag behind).
   */
  readonly unsetWatch: 'any' | 'consistent';
  /** How long a watch may take to deliver the end marker. */
  readonly watchTimeoutMs: number;
}

/** The defaults: every legitimate variation accepted. */
export const DEFAULT_TOLERANCES: Tolerances = {
  oldWatch: 'either',
  anyLimit: 'either',
  initialEvents: 'optional',
  staleCache: 'allow',
  nameSelectorGet: 'allow',
  unsetWatch: 'any',
  watchTimeoutMs: 10_000,
};

/** The state of one run. */
export interface RunContext {
  readonly http: VerifyHttp;
  readonly model: Model;
  /** `/api/v1/namespaces/<ns>/configmaps`. */
  readonly collection: string;
  readonly tally: RuleTally;
  readonly tolerances: Tolerances;
  /** The largest revision a read showed (a later write must be above it). */
  maxRead: bigint;
  /** Features the server refused (e.g. sendInitialEvents), for the summary. */
  readonly unsupported: Set<string>;
}

/** Whether a response is the 504 "Too large resource version" Status. */
export function tooLarge(status: number, body: { message?: string } | undefined): boolean {
  return status === 504 && (body?.message ?? '').includes('Too large resource version');
}

/** Checks `ok`; a false one throws the rule's violation. */
export function expectRule(ctx: RunContext, rule: RuleName, ok: boolean, message: () => string): void {
  ctx.tally.check(rule);
  if (!ok) throw new Violation(rule, message());
}

/** A revision from the wire, or a violation of `rule` when it is not a decimal number. */
export function revision(rule: RuleName, text: unknown): bigint {
  if (typeof text !== 'string' || !/^[0-9]+$/.test(text))
    throw new Violation(rule, `resourceVersion ${JSON.stringify(text)} is not a decimal revision`);
  return BigInt(text);
}

/** A ConfigMap from the wire as a model object. */
export function fromWire(rule: RuleName, o: unknown): ModelObject {
  const obj = o as {
    metadata?: { name?: unknown; labels?: unknown; resourceVersion?: unknown };
    data?: { v?: unknown };
  } | null;
  const name = obj?.metadata?.name;
  if (typeof name !== 'string')
    throw new Violation(rule, `an object without metadata.name: ${JSON.stringify(o)}`);
  const labels = (obj?.metadata?.labels ?? {}) as Record<string, string>;
  const v = obj?.data?.v;
  return {
    name,
    value: typeof v === 'string' ? v : '',
    labels,
    rv: revision(rule, obj?.metadata?.resourceVersion),
  };
}
