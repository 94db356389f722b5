/**
 * The API call latency of a run, as kube's scalability SLI measures it: the API server's own
 * `apiserver_request_duration_seconds` histogram (every resource and verb but long-running
 * WATCH and CONNECT calls), read from `/metrics` before and after, the difference's p99
 * interpolated within its bucket as Prometheus' `histogram_quantile` does.
 */
import type { BenchClient } from '../client.js';

/** Cumulative counts by upper bound (seconds; `Infinity` for `+Inf`). */
export type Histogram = ReadonlyMap<number, number>;

const BUCKET = 'apiserver_request_duration_seconds_bucket{';
/** Verbs the SLI leaves out: they last as long as the client wants. */
const LONG_RUNNING = new Set(['WATCH', 'WATCHLIST', 'CONNECT']);

/** Sums every non-long-running series of the histogram in a `/metrics` text by bucket. */
export function parseRequestHistogram(text: string): Histogram {
  const sums = new Map<number, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(BUCKET)) continue;
    const close = line.lastIndexOf('}');
    const labels = line.slice(BUCKET.length, close);
    const verb = /(?:^|,)verb="([^"]*)"/.exec(labels)?.[1];
    if (verb !== undefined && LONG_RUNNING.has(verb)) continue;
    const le = /(?:^|,)le="([^"]*)"/.exec(labels)?.[1];
    const value = Number(
      line
        .slice(close + 1)
        .trim()
        .split(' ')[0],
    );
    if (le === undefined || !Number.isFinite(value)) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    sums.set(bound, (sums.get(bound) ?? 0) + value);
  }
  return sums;
}

/** `after - before`, bucket by bucket. */
export function histogramDelta(before: Histogram, after: Histogram): Histogram {
  const out = new Map<number, number>();
  for (const [le, n] of after) out.set(le, n - (before.get(le) ?? 0));
  return out;
}

/**
 * The `q` quantile (0..1) of a cumulative histogram in seconds, interpolated linearly within its
 * bucket; the highest finite bound when it falls in `+Inf`; NaN for no observations.
 */
export function histogramQuantile(h: Histogram, q: number): number {
  const bounds = [...h.keys()].sort((a, b) => a - b);
  const total = h.get(Infinity) ?? h.get(bounds[bounds.length - 1] ?? Infinity) ?? 0;
  if (!(total > 0)) return Number.NaN;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (const b of bounds) {
    const count = h.get(b) ?? 0;
    if (count >= rank) {
      if (b === Infinity) return prevBound;
      const inBucket = count - prevCount;
      return inBucket <= 0 ? b : prevBound + ((b - prevBound) * (rank - prevCount)) / inBucket;
    }
    prevBound = b;
    prevCount = count;
  }
  return prevBound;
}

/** Reads the server's histogram; an empty one when `/metrics` is not readable. */
export async function readRequestHistogram(client: BenchClient): Promise<Histogram> {
  const r = await client.request('GET', '/metrics', { accept: 'text/plain' });
  return r.status === 200 ? parseRequestHistogram(r.body.toString('utf8')) : new Map();
}
