import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { closedLoop } from '../../src/bench/load.js';
import { megabytesPerSecond, percentile, ratePerSecond, summarize } from '../../src/bench/stats.js';

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
      fc.property(
        fc.array(fc.double({ noNaN: true, min: -1e9, max: 1e9 }), { minLength: 1 }),
        fc.nat(100),
        fc.nat(100),
        (xs, p, q) => {
          const [lo, hi] = p <= q ? [p, q] : [q, p];
          expect(xs).toContain(percentile(xs, lo));
          expect(percentile(xs, lo)).toBeLessThanOrEqual(percentile(xs, hi));
        },
      ),
    );
  });

  it('rates per second', () => {
    expect(ratePerSecond(500, 250)).toBe(2000);
    expect(ratePerSecond(1, 0)).toBeNaN();
  });

  it('summaries take nearest ranks from one sort', () => {
    const samples = Array.from({ length: 1000 }, (_, i) => 1000 - i); // 1000 .. 1
    const s = summarize(samples);
    expect(s).toEqual({ count: 1000, p50: 500, p99: 990, p999: 999, max: 1000, mean: 500.5 });
    expect(summarize([]).count).toBe(0);
    expect(summarize([]).p99).toBeNaN();
  });

  it('summaries agree with percentile()', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true, min: 0, max: 1e6 }), { minLength: 1 }), (xs) => {
        const s = summarize(xs);
        expect(s.p50).toBe(percentile(xs, 50));
        expect(s.p99).toBe(percentile(xs, 99));
        expect(s.p999).toBe(percentile(xs, 99.9));
        expect(s.max).toBe(Math.max(...xs));
      }),
    );
  });

  it('megabytes per second', () => {
    expect(megabytesPerSecond(5_000_000, 500)).toBe(10);
    expect(megabytesPerSecond(1, 0)).toBeNaN();
  });
});

describe('closed loop', () => {
  it('runs each operation index exactly once up to the budget', async () => {
    const seen: number[] = [];
    const r = await closedLoop(7, { maxOps: 100 }, async (n) => {
      seen.push(n);
      await Promise.resolve();
    });
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(r.latency.count).toBe(100);
  });

  it('a failing operation fails the loop and stops the other workers', async () => {
    let calls = 0;
    await expect(
      closedLoop(4, { maxOps: 1000 }, async (n) => {
        calls++;
        await Promise.resolve();
        if (n === 10) throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(calls).toBeLessThan(20);
  });

  it('refuses a loop without a budget', async () => {
    await expect(closedLoop(1, {}, () => Promise.resolve())).rejects.toThrow(RangeError);
  });
});
