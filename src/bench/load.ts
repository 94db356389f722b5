/**
 * Closed-loop load: W workers each issue one operation, wait for it, and issue the next, until a
 * time or an operation budget runs out. Shared by `capstan bench` and the storage benchmark so
 * that every figure is produced the same way.
 */
import { msSince, ratePerSecond, summarize, type LatencySummary } from './stats.js';

/** When a closed loop stops: after `durationMs`, after `maxOps` operations, or both (first wins). */
export interface LoopBudget {
  readonly durationMs?: number;
  readonly maxOps?: number;
}

/** Outcome of a closed loop. */
export interface LoopResult {
  /** Completed operations per second over the whole loop. */
  readonly opsPerSec: number;
  readonly elapsedMs: number;
  readonly latency: LatencySummary;
}

/**
 * Runs `workers` loops calling `op(n)` (n = 0, 1, 2, ... across all workers, each n once) until
 * the budget runs out; a failing operation rejects the whole loop (after the other workers'
 * operations in flight settle, so nothing is left running).
 * @throws RangeError without any budget (a loop must end) or with fewer than one worker.
 */
export async function closedLoop(
  workers: number,
  budget: LoopBudget,
  op: (n: number) => Promise<unknown>,
): Promise<LoopResult> {
  if (budget.durationMs === undefined && budget.maxOps === undefined)
    throw new RangeError('closedLoop needs a duration or an operation count');
  if (!(workers >= 1)) throw new RangeError('closedLoop needs at least one worker');
  const latencies: number[] = [];
  const maxOps = budget.maxOps ?? Number.POSITIVE_INFINITY;
  const deadline =
    budget.durationMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + budget.durationMs;
  let next = 0;
  let failed = false;
  const start = process.hrtime.bigint();
  const results = await Promise.allSettled(
    Array.from({ length: workers }, async () => {
      while (!failed && next < maxOps && Date.now() < deadline) {
        const n = next++;
        const t = process.hrtime.bigint();
        try {
          await op(n);
        } catch (err) {
          failed = true;
          throw err;
        }
        latencies.push(msSince(t));
      }
    }),
  );
  const elapsedMs = msSince(start);
  for (const r of results) if (r.status === 'rejected') throw r.reason;
  return { opsPerSec: ratePerSecond(latencies.length, elapsedMs), elapsedMs, latency: summarize(latencies) };
}
