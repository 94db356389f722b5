/**
 * The key layout: encoded version keys sort like the UTF-8 bytes of user keys (then newest
 * first), decode back exactly, and span bounds select exactly the span's keys.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys, spanContains } from '../../../storage/continue-token.js';
import type { KeySpan } from '../../../storage/interface.js';
import {
  decodeLogRecord,
  encodeLogRecord,
  spanBounds,
  versionCreateRev,
  versionIsTombstone,
  versionKey,
  versionLease,
  versionModRev,
  versionSeek,
  versionUserKey,
  versionsEnd,
} from '../../../storage/mvcc/codec.js';
import { compareUtf8, spanMatcher } from '../../../storage/mvcc/span-matcher.js';

// Keys drawn from a small alphabet that includes U+0000, its neighbours, and astral characters.
const keyArb = fc
  .array(fc.constantFrom('\u0000', '\u0001', 'a', 'b', '\u00ff', '\ue000', '\uffff', '\u{1f600}'), {
    minLength: 1,
    maxLength: 5,
  })
  .map((parts) => parts.join(''));
const revArb = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });

describe('version keys', () => {
  it('round-trip key and header', () => {
    fc.assert(
      fc.property(keyArb, revArb, revArb, revArb, (key, mod, create, lease) => {
        const vkey = versionKey(key, mod, create, lease);
        expect(versionUserKey(vkey)).toBe(key);
        expect([versionModRev(vkey), versionCreateRev(vkey), versionLease(vkey)]).toEqual([
          mod,
          create,
          lease,
        ]);
        expect(versionIsTombstone(vkey)).toBe(create === 0n);
      }),
    );
  });

  it('sort by UTF-8 key bytes, then newest first, and fall inside their own bounds', () => {
    fc.assert(
      fc.property(keyArb, keyArb, revArb, revArb, (a, b, ra, rb) => {
        const order = Math.sign(Buffer.compare(versionKey(a, ra, 1n, 0n), versionKey(b, rb, 1n, 0n)));
        const keyOrder = Math.sign(compareKeys(a, b));
        expect(order).toBe(keyOrder !== 0 ? keyOrder : ra === rb ? 0 : ra > rb ? -1 : 1);
        expect(Math.sign(compareUtf8(a, b))).toBe(keyOrder);
        const vkey = versionKey(a, ra, 5n, 7n);
        expect(Buffer.compare(vkey, versionSeek(a, ra))).toBeGreaterThanOrEqual(0);
        expect(Buffer.compare(vkey, versionsEnd(a))).toBeLessThan(0);
      }),
    );
  });

  it('span bounds select exactly the keys of the span', () => {
    const spanArb: fc.Arbitrary<KeySpan> = fc.oneof(
      keyArb.map((prefix) => ({ prefix })),
      fc.constant({ prefix: '' }),
      fc.tuple(keyArb, keyArb).map(([start, end]) => ({ start, end })),
    );
    fc.assert(
      fc.property(spanArb, keyArb, fc.option(keyArb, { nil: undefined }), revArb, (span, key, after, rev) => {
        const bounds = spanBounds(span, after);
        const vkey = versionKey(key, rev, 1n, 0n);
        const inside =
          bounds !== undefined &&
          Buffer.compare(vkey, bounds.gte) >= 0 &&
          Buffer.compare(vkey, bounds.lt) < 0;
        const expected = spanContains(span, key) && (after === undefined || compareKeys(key, after) > 0);
        expect(inside).toBe(expected);
        expect(spanMatcher(span)(key)).toBe(spanContains(span, key));
      }),
    );
  });
});

describe('log records', () => {
  it('round-trip', () => {
    fc.assert(
      fc.property(
        keyArb,
        revArb,
        revArb,
        revArb,
        revArb,
        revArb,
        fc.constantFrom(1 as const, 2 as const),
        (key, a, b, c, d, e, type) => {
          const record = { type, key, createRev: a, lease: b, prevModRev: c, prevCreateRev: d, prevLease: e };
          expect(decodeLogRecord(encodeLogRecord(record))).toEqual(record);
        },
      ),
    );
  });
});
