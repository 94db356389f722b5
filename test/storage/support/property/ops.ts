/**
 * The operations of the model-based property, as plain data so fast-check can shrink them and
 * print a readable counterexample. Revisions and leases are chosen as fractions or indexes and
 * resolved against the model's state when the operation runs, so a shrunk sequence stays valid.
 */
import fc from 'fast-check';
import type { KeySpan } from '../../../../storage/interface.js';

/** Keys the operations pick from: few, so they collide; non-ASCII, so byte order matters. */
export const KEYS = ['a', 'a/1', 'a/2', 'ab', 'b', 'é', '\uffff', '😀'] as const;

/** Spans over {@link KEYS}: prefixes, and [start, end) ranges whose bounds are not keys. */
export const SPANS: readonly KeySpan[] = [
  { prefix: '' },
  { prefix: 'a' },
  { prefix: 'a/' },
  { prefix: '😀' },
  { prefix: 'x' },
  { start: 'a/', end: 'b' },
  { start: 'a0', end: '\uffff' },
  { start: '\uffff', end: '😀' },
  { start: 'b', end: '\u{10ffff}' },
];

/**
 * How a write states the mod revision it expects: the key's current one, a stale one (an older
 * revision), zero, or one not reached yet.
 */
export type RevisionChoice = 'current' | 'stale' | 'zero' | 'future';

/** A lease for a put: keep the key's (unset), none (`0n`), or the n-th granted lease. */
export type LeaseChoice = 'keep' | 'none' | number;

/** A revision to read at: unset (current), or a fraction of [lowest readable, current + 1]. */
export type ReadAt = 'current' | number;

export type Op =
  | { readonly op: 'create'; readonly key: number; readonly value: Uint8Array; readonly lease: LeaseChoice }
  | {
      readonly op: 'update';
      readonly key: number;
      /** Pick among the keys that exist then (`key` modulo their number), when there are any. */
      readonly live: boolean;
      readonly value: Uint8Array;
      readonly expect: RevisionChoice;
      readonly lease: LeaseChoice;
    }
  | {
      readonly op: 'delete';
      readonly key: number;
      readonly live: boolean;
      readonly expect: RevisionChoice | 'none';
    }
  | {
      readonly op: 'txn';
      readonly key: number;
      readonly live: boolean;
      readonly expect: RevisionChoice | 'none';
      readonly then: 'put' | 'delete';
      readonly value: Uint8Array;
      readonly lease: LeaseChoice;
    }
  | { readonly op: 'get'; readonly key: number; readonly at: ReadAt }
  | {
      readonly op: 'range';
      readonly span: number;
      readonly at: ReadAt;
      readonly limit: number | undefined;
      readonly keysOnly: boolean;
      readonly countOnly: boolean;
      /** Chunks to read now; a paged read left unfinished is resumed by `continue`. */
      readonly pages: number;
    }
  | {
      readonly op: 'continue';
      readonly cursor: number;
      readonly pages: number;
      readonly withRevision: boolean;
    }
  | { readonly op: 'watch'; readonly span: number; readonly from: 'now' | number }
  | { readonly op: 'compact'; readonly at: number }
  | { readonly op: 'grant' }
  | { readonly op: 'revoke'; readonly lease: number }
  | { readonly op: 'settle' }
  | { readonly op: 'reopen' };

const key = fc.nat({ max: KEYS.length - 1 });
/** Mostly a key that exists when the operation runs (else most updates would be NotFound). */
const live = fc.oneof(
  { weight: 3, arbitrary: fc.constant(true) },
  { weight: 1, arbitrary: fc.constant(false) },
);
/** The whole key space half the time: wide spans are the ones that page. */
const span = fc.oneof({ weight: SPANS.length, arbitrary: fc.constant(0) }, fc.nat({ max: SPANS.length - 1 }));
const value = fc.uint8Array({ maxLength: 6 });
/** Uniform in [0, 1): fast-check's own numbers lean to the edges, which would mostly pick the oldest revision. */
const fraction = fc.noBias(fc.integer({ min: 0, max: 9999 })).map((n) => n / 10_000);
const readAt: fc.Arbitrary<ReadAt> = fc.oneof(fc.constant('current' as const), fraction);
const lease: fc.Arbitrary<LeaseChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.constant('keep' as const) },
  { weight: 1, arbitrary: fc.constant('none' as const) },
  { weight: 2, arbitrary: fc.nat({ max: 3 }) },
);
const revisionChoice: fc.Arbitrary<RevisionChoice> = fc.oneof(
  { weight: 5, arbitrary: fc.constant('current' as const) },
  { weight: 2, arbitrary: fc.constantFrom('stale' as const, 'zero' as const, 'future' as const) },
);

/** One operation; `reopen` only when the backend can reopen. */
export function opArbitrary(canReopen: boolean): fc.Arbitrary<Op> {
  const ops: { weight: number; arbitrary: fc.Arbitrary<Op> }[] = [
    { weight: 12, arbitrary: fc.record({ op: fc.constant('create' as const), key, value, lease }) },
    {
      weight: 6,
      arbitrary: fc.record({
        op: fc.constant('update' as const),
        key,
        live,
        value,
        expect: revisionChoice,
        lease,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('delete' as const),
        key,
        live,
        expect: fc.oneof(revisionChoice, fc.constant('none' as const)),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('txn' as const),
        key,
        live,
        expect: fc.oneof(revisionChoice, fc.constant('none' as const)),
        then: fc.constantFrom('put' as const, 'delete' as const),
        value,
        lease,
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('get' as const), key, at: readAt }) },
    {
      weight: 6,
      arbitrary: fc
        .record({
          op: fc.constant('range' as const),
          span,
          at: readAt,
          limit: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
          keysOnly: fc.boolean(),
          countOnly: fc.boolean(),
          pages: fc.integer({ min: 1, max: 4 }),
        })
        // countOnly is read in one go: its `more` with a limit is not fixed by the contract.
        .map((o) => (o.countOnly ? { ...o, limit: undefined, keysOnly: false } : o)),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('continue' as const),
        cursor: fc.nat({ max: 3 }),
        pages: fc.integer({ min: 1, max: 3 }),
        withRevision: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('watch' as const),
        span,
        from: fc.oneof(fc.constant('now' as const), fraction),
      }),
    },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('compact' as const), at: fraction }) },
    { weight: 1, arbitrary: fc.constant({ op: 'grant' as const }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('revoke' as const), lease: fc.nat({ max: 4 }) }) },
    { weight: 1, arbitrary: fc.constant({ op: 'settle' as const }) },
  ];
  if (canReopen) ops.push({ weight: 1, arbitrary: fc.constant({ op: 'reopen' as const }) });
  return fc.oneof(...ops);
}

/** A sequence of operations for one run. */
export function opsArbitrary(canReopen: boolean, maxLength: number): fc.Arbitrary<Op[]> {
  return fc.array(opArbitrary(canReopen), { minLength: 1, maxLength, size: 'max' });
}
