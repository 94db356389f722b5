import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { percentile, ratePerSecond } from '../../tools/bench/stats.js';

describe('bench statistics', () => {
  it('nearest-rank percentiles of a known sample', () => {
    const samples = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentile(samples, 50)).toBe(5);
    expect(percentile(samples, 90)).toBe(9);
    expect(percentile(samples, 99)).toBe(10);
    expect(percentile(samples, 0)).toBe(1);
    expect(percentile(samples, 100)).toBe(10);
    expect(percentile([], 50)).toBeNaN();
    expect(() => percentile(samples, 101)).toThrow(RangeError);
  });

  it('a percentile is a sample, and grows with p', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, min: -1e9, max: 1e9 }), { minLength: 1 }), fc.nat(100), fc.nat(100), (xs, p, q) => {
        const [lo, hi] = p <= q ? [p, q] : [q, p];
        expect(xs).toContain(percentile(xs, lo));
        expect(percentile(xs, lo)).toBeLessThanOrEqual(percentile(xs, hi));
      }),
    );
  });

  it('rates per second', () => {
    expect(ratePerSecond(500, 250)).toBe(2000);
    expect(ratePerSecond(1, 0)).toBeNaN();
  });
});
