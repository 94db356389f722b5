/** The allocation-free key order agrees with the store's UTF-8 byte order, surrogates included. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../storage/continue-token.js';
import { compareKeyOrder } from '../../src/watchcache/key-order.js';

describe('compareKeyOrder', () => {
  it('has the sign of compareKeys for any strings', () => {
    const str = fc.string({
      unit: fc.oneof(
        fc.constantFrom('a', 'z', '/', '\uffff', '\ue000', '\ud7ff'),
        fc.constantFrom('😀', '𐀀'),
        fc.string({ unit: 'grapheme', maxLength: 1 }),
      ),
      maxLength: 6,
    });
    fc.assert(
      fc.property(str, str, (a, b) => {
        expect(Math.sign(compareKeyOrder(a, b))).toBe(Math.sign(compareKeys(a, b)));
      }),
      { seed: 4, numRuns: 2000 },
    );
  });
});
