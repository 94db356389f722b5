/**
 * The start-up every queue-driven controller shares: shut the queues down when the controller
 * stops, wait for the shared informers to sync, then run each queue's workers, logging failures
 * through the controller's log or the loop's own `onError` (a failed key is retried by
 * `runWorkers` with backoff).
 */
import { runWorkers, type WorkQueue } from '../../client/index.js';
import type { ControllerContext } from '../context.js';

/** One queue and how its keys are synced. */
export interface WorkerLoop<K = string> {
  readonly queue: WorkQueue<K>;
  /** Workers on this queue (at least 1). */
  readonly workers: number;
  readonly sync: (key: K) => Promise<void>;
  /** Reports a failed sync (retried with backoff either way); by default `ctx.log.error`. */
  readonly onError?: (message: string, err: unknown) => void;
}

/**
 * Starts the workers of `loops` once the caches are synced; returns at once. Every queue shuts
 * down when `ctx.signal` aborts. `what` names the workers in the log line written if they stop
 * for any reason other than the signal.
 * @example startWorkers(ctx, 'job', { queue, workers: 5, sync: (k) => this.sync(k) });
 */
export function startWorkers(ctx: ControllerContext, what: string, ...loops: readonly WorkerLoop[]): void {
  const { signal } = ctx;
  const stop = (): void => {
    for (const l of loops) l.queue.shutDown();
  };
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
  const log = (message: string, err: unknown): void => ctx.log.error(message, err);
  ctx.informers
    .waitForSync(signal)
    .then(() =>
      Promise.all(loops.map((l) => runWorkers(l.queue, Math.max(1, l.workers), l.sync, l.onError ?? log))),
    )
    .catch((err: unknown) => {
      if (!signal.aborted) ctx.log.error(`the ${what} workers stopped`, err);
    });
}
