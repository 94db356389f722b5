/**
 * The `namespace-controller` (alias `namespace`), kube's `pkg/controller/namespace`: finishes the
 * deletion of namespaces. A namespace seen with a `deletionTimestamp` is queued 5 s later (kube's
 * `namespaceDeletionGracePeriod`, which lets HA API servers see the deletion and last-moment
 * creates land); a pass (deleter.ts) deletes its content and removes the `kubernetes` finalizer.
 * Content still going away brings the namespace back after half the estimate plus a second;
 * failures back off from 5 ms to 60 s (kube's namespace rate limiter).
 * `--concurrent-namespace-syncs` workers (10).
 */
import type { Namespace } from '../../api/types/core-v1.js';
import {
  BucketRateLimiter,
  ItemExponentialRateLimiter,
  MaxOfRateLimiter,
  NAMESPACES,
  TokenBucket,
  WorkQueue,
} from '../../client/index.js';
import { concurrency } from '../config.js';
import type { ControllerContext, ControllerDescriptor } from '../context.js';
import { NamespaceDeleter } from './deleter.js';
import { startWorkers } from '../shared/workers.js';

/** Options a test or the in-process server may set. */
export interface NamespaceControllerOptions {
  /** Delay before a deleted namespace's first pass (ms; kube: 5000). */
  readonly deletionGraceMs?: number;
}

/** kube's `namespaceDeletionGracePeriod`. */
export const NAMESPACE_DELETION_GRACE_MS = 5_000;

/** One running namespace controller. */
export class NamespaceController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #deleter: NamespaceDeleter;

  constructor(ctx: ControllerContext, opts: NamespaceControllerOptions = {}) {
    this.#ctx = ctx;
    const grace = opts.deletionGraceMs ?? NAMESPACE_DELETION_GRACE_MS;
    this.#queue = new WorkQueue<string>({
      rateLimiter: new MaxOfRateLimiter<string>(
        new ItemExponentialRateLimiter<string>(5, 60_000),
        new BucketRateLimiter<string>(new TokenBucket(10, 100)),
      ),
      name: ctx.name,
    });
    this.#deleter = new NamespaceDeleter(ctx.client, ctx.signal);
    const seen = (ns: Namespace): void => {
      if (ns.metadata.deletionTimestamp !== undefined) this.#queue.addAfter(ns.metadata.name ?? '', grace);
    };
    ctx.informers.informer<Namespace>(NAMESPACES).addHandler({ add: seen, update: (_, ns) => seen(ns) });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'namespace', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'namespace', 10),
      sync: (name) => this.sync(name),
    });
  }

  /** One pass over namespace `name`; content still going away requeues it after its estimate. */
  async sync(name: string): Promise<void> {
    if (name === '') return;
    const estimate = await this.#deleter.delete(name);
    if (estimate > 0) this.#queue.addAfter(name, (Math.floor(estimate / 2) + 1) * 1000);
  }
}

/** Registry entry. */
export const namespaceController: ControllerDescriptor = {
  name: 'namespace-controller',
  aliases: ['namespace'],
  serviceAccount: 'namespace-controller',
  start(ctx) {
    new NamespaceController(ctx).start();
  },
};
