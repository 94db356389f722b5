/**
 * The TTL-after-finished controller (kube's `pkg/controller/ttlafterfinished`): a finished Job
 * (Complete or Failed) with `spec.ttlSecondsAfterFinished` is deleted, with Background
 * propagation, that many seconds after its finishing condition's transition. Before deleting it
 * re-reads the Job from the server (the TTL may have changed) and deletes with a
 * resourceVersion precondition, as kube does.
 */
import type { Job } from '../../api/types/batch-v1.js';
import {
  JOBS,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
  WorkQueue,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import { concurrency } from '../config.js';
import type { ControllerContext } from '../context.js';
import { finishTime, isJobFinished } from '../job/conditions.js';
import { keyOf, splitKey } from '../shared/meta.js';
import { startWorkers } from '../shared/workers.js';

/** Options a test may set. */
export interface TtlControllerOptions {
  readonly now?: () => Date;
}

/**
 * Milliseconds until `job` expires (0 or less: now), or undefined when it never does (no TTL, not
 * finished, or being deleted).
 * @throws Error when the Job is finished but its finishing condition has no time.
 */
export function msUntilExpiry(job: Job, now: Date): number | undefined {
  const ttl = job.spec?.ttlSecondsAfterFinished;
  if (ttl === undefined || job.metadata.deletionTimestamp !== undefined || !isJobFinished(job))
    return undefined;
  const finished = finishTime(job);
  if (finished === undefined)
    throw new Error(
      `unable to find the time when the Job ${job.metadata.namespace ?? ''}/${job.metadata.name ?? ''} finished`,
    );
  return finished.getTime() + ttl * 1000 - now.getTime();
}

/** One running TTL-after-finished controller. */
export class TtlAfterFinishedController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #jobs: SharedInformer<Job>;
  readonly #client: ResourceClient<Job>;
  readonly #now: () => Date;

  constructor(ctx: ControllerContext, opts: TtlControllerOptions = {}) {
    this.#ctx = ctx;
    this.#now = opts.now ?? (() => new Date());
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#jobs = ctx.informers.informer<Job>(JOBS);
    this.#client = ctx.client.resource<Job>(JOBS);
    const seen = (j: Job): void => {
      if (j.spec?.ttlSecondsAfterFinished !== undefined && isJobFinished(j))
        this.#queue.add(keyOf(j.metadata));
    };
    this.#jobs.addHandler({ add: seen, update: (_, j) => seen(j) });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'ttl-after-finished', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'ttl-after-finished', 5),
      sync: (k) => this.sync(k),
    });
  }

  /** Deletes the Job if its TTL has passed, else looks again when it will have. */
  async sync(key: string): Promise<void> {
    const cached = this.#jobs.store.get(key);
    if (cached === undefined) return;
    const left = msUntilExpiry(cached, this.#now());
    if (left === undefined) return;
    if (left > 0) {
      this.#queue.addAfter(key, left);
      return;
    }
    const { namespace, name } = splitKey(key);
    let fresh: Job;
    try {
      fresh = await this.#client.get(name, { namespace });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const freshLeft = msUntilExpiry(fresh, this.#now());
    if (freshLeft === undefined) return;
    if (freshLeft > 0) {
      this.#queue.addAfter(key, freshLeft);
      return;
    }
    try {
      await this.#client.delete(name, {
        namespace,
        propagationPolicy: 'Background',
        preconditions: {
          uid: fresh.metadata.uid ?? '',
          resourceVersion: fresh.metadata.resourceVersion ?? '',
        },
      });
      this.#ctx.log.info(`cleaned up job ${key} after its TTL`);
    } catch (err) {
      if (isNotFound(err)) return;
      // Changed since read: the update re-enqueues it.
      if (isConflict(err)) return;
      throw err;
    }
  }
}
