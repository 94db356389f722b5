/**
 * Small statistics for benchmarks: latency percentiles and rates. Shared by every bench tool so
 * that figures are computed one way.
 */

/** Nearest-rank percentile (p in [0, 100]) of `samples`; NaN for no samples. Sorts a copy. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new RangeError(`percentile ${p} outside [0, 100]`);
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}

/** Operations per second for `count` operations over `elapsedMs`. */
export function ratePerSecond(count: number, elapsedMs: number): number {
  if (elapsedMs <= 0) return Number.NaN;
  return (count * 1000) / elapsedMs;
}

/** Milliseconds since `start` (a `process.hrtime.bigint()` reading). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Formats a number for a report table: 3 significant digits, thousands kept whole. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return n.toPrecision(3);
}
