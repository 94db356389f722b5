/**
 * Small statistics for benchmarks: latency percentiles and rates. Shared by every bench tool so
 * that figures are computed one way.
 */

/**
 * The 1-based nearest rank of percentile `p` among `n` samples: ceil(p/100 · n), at least 1.
 * The tolerance keeps float noise (99.9 · 1000 / 100 = 999.0000000000001) from skipping a rank.
 */
function nearestRank(p: number, n: number): number {
  return Math.max(1, Math.ceil((p * n) / 100 - 1e-9));
}

/** Nearest-rank percentile (p in [0, 100]) of `samples`; NaN for no samples. Sorts a copy. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  if (p < 0 || p > 100) throw new RangeError(`percentile ${p} outside [0, 100]`);
  const sorted = Float64Array.from(samples).sort();
  return sorted[nearestRank(p, sorted.length) - 1] ?? Number.NaN;
}

/** The median (the mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = Float64Array.from(xs).sort();
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
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

/** Formats a number for a report table: 3 significant digits; integers and thousands kept whole. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return 'n/a';
  if (Math.abs(n) >= 1000 || Number.isInteger(n)) return Math.round(n).toLocaleString('en-US');
  return n.toPrecision(3);
}

/** Latency figures of one measured shape, in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
  readonly mean: number;
}

/**
 * Nearest-rank p50, p99, p99.9, max and mean of `samples` in one sort. For no samples every
 * figure is NaN and `count` is 0 (a report shows "n/a" rather than a misleading zero).
 */
export function summarize(samples: readonly number[]): LatencySummary {
  const n = samples.length;
  if (n === 0) return { count: 0, p50: NaN, p99: NaN, p999: NaN, max: NaN, mean: NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number): number => sorted[nearestRank(p, n) - 1] ?? NaN;
  let sum = 0;
  for (const x of sorted) sum += x;
  return { count: n, p50: at(50), p99: at(99), p999: at(99.9), max: sorted[n - 1] ?? NaN, mean: sum / n };
}

/** Megabytes (10^6 bytes) per second for `bytes` moved in `elapsedMs`; NaN for no time. */
export function megabytesPerSecond(bytes: number, elapsedMs: number): number {
  if (elapsedMs <= 0) return Number.NaN;
  return bytes / 1e3 / elapsedMs;
}
