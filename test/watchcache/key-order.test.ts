/** The allocation-free key order agrees with the store's UTF-8 byte order, surrogates included. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareKeys } from '../../storage/continue-token.js';
import { compareKeyOrder, keyOrderFor, sortKeys } from '../../src/watchcache/key-order.js';

const str = fc.string({
  unit: fc.oneof(
    fc.constantFrom('a', 'z', '/', '\uffff', '\ue000', '\ud7ff'),
    fc.constantFrom('😀', '𐀀'),
    fc.string({ unit: 'grapheme', maxLength: 1 }),
  ),
  maxLength: 6,
});
const plain = fc.string({ unit: fc.constantFrom('a', 'z', '/', '-', '0', '\u00e9', '\ud7ff'), maxLength: 6 });

describe('compareKeyOrder', () => {
  it('has the sign of compareKeys for any strings', () => {
    fc.assert(
      fc.property(str, str, (a, b) => {
        expect(Math.sign(compareKeyOrder(a, b))).toBe(Math.sign(compareKeys(a, b)));
      }),
      { seed: 4, numRuns: 2000 },
    );
  });
});

describe('keyOrderFor and sortKeys', () => {
  it('sort in key order, and compare in key order against any key, with or without high units', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(str, plain), { maxLength: 30 }), str, (keys, other) => {
        const compare = keyOrderFor(keys);
        const sorted = sortKeys([...keys], compare);
        expect(sorted).toEqual([...keys].sort((a, b) => compareKeys(a, b)));
        for (const k of keys) expect(Math.sign(compare(k, other))).toBe(Math.sign(compareKeys(k, other)));
      }),
      { seed: 5, numRuns: 1000 },
    );
  });

  it('uses plain order only when no key has a unit at or above U+D800', () => {
    expect(keyOrderFor(['/a/b', '/a/\u00e9'])).not.toBe(compareKeyOrder);
    expect(keyOrderFor(['/a/b', '/a/\ue000'])).toBe(compareKeyOrder);
    expect(keyOrderFor(['/a/😀'])).toBe(compareKeyOrder);
  });
});
