/**
 * Work queues, as client-go's `util/workqueue`: a key waits at most once (dedup), is never handed
 * to two workers at once (a key added while processing is queued again after `done`), and may be
 * delayed (`addAfter`) or rate limited per item (`addRateLimited`). {@link runWorkers} is the loop
 * every controller uses.
 */
import { isConflict } from './errors.js';
import { TokenBucket } from './rate-limit.js';

/** How long an item waits before its next try. */
export interface RateLimiter<K> {
  /** The delay (ms) for the next retry of `item`; counts a failure. */
  when(item: K): number;
  /** Resets `item`'s failure count (after a success). */
  forget(item: K): void;
  /** Failures counted for `item` since its last `forget`. */
  numRequeues(item: K): number;
}

/** `base * 2^failures` ms, capped at `max` (client-go's ItemExponentialFailureRateLimiter). */
export class ItemExponentialRateLimiter<K> implements RateLimiter<K> {
  readonly #failures = new Map<K, number>();
  constructor(
    readonly baseMs: number,
    readonly maxMs: number,
  ) {}
  when(item: K): number {
    const n = this.#failures.get(item) ?? 0;
    this.#failures.set(item, n + 1);
    // 2^n overflows to Infinity for large n: the cap applies.
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }
  forget(item: K): void {
    this.#failures.delete(item);
  }
  numRequeues(item: K): number {
    return this.#failures.get(item) ?? 0;
  }
}

/** An overall token bucket: each retry takes a token (client-go's BucketRateLimiter). */
export class BucketRateLimiter<K> implements RateLimiter<K> {
  readonly #bucket: TokenBucket;
  constructor(bucket: TokenBucket) {
    this.#bucket = bucket;
  }
  when(_item: K): number {
    return this.#bucket.reserve();
  }
  forget(_item: K): void {}
  numRequeues(_item: K): number {
    return 0;
  }
}

/** The longest delay of several limiters (client-go's MaxOfRateLimiter). */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  readonly #limiters: readonly RateLimiter<K>[];
  constructor(...limiters: RateLimiter<K>[]) {
    this.#limiters = limiters;
  }
  when(item: K): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.when(item));
    return max;
  }
  forget(item: K): void {
    for (const l of this.#limiters) l.forget(item);
  }
  numRequeues(item: K): number {
    let max = 0;
    for (const l of this.#limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/** kube's controller default: per item 5 ms doubling to 1000 s, and 10 qps / burst 100 overall. */
export function defaultControllerRateLimiter<K>(): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ItemExponentialRateLimiter<K>(5, 1000_000),
    new BucketRateLimiter<K>(new TokenBucket(10, 100)),
  );
}

/** Options of a {@link WorkQueue}. */
export interface WorkQueueOptions<K> {
  /** Default {@link defaultControllerRateLimiter}. */
  rateLimiter?: RateLimiter<K>;
  /** For logs. */
  name?: string;
}

/** A deduplicating, delaying, rate-limited FIFO of keys. */
export class WorkQueue<K = string> {
  readonly name: string;
  readonly #limiter: RateLimiter<K>;
  #queue: K[] = [];
  #head = 0;
  /** Waiting to be processed (in #queue, or held back while processing). */
  readonly #dirty = new Set<K>();
  readonly #processing = new Set<K>();
  /** Items delayed by addAfter: when each becomes ready, and its timer. */
  readonly #delayed = new Map<K, { at: number; timer: NodeJS.Timeout }>();
  readonly #getters: ((item: K | undefined) => void)[] = [];
  #shuttingDown = false;

  constructor(opts: WorkQueueOptions<K> = {}) {
    this.#limiter = opts.rateLimiter ?? defaultControllerRateLimiter<K>();
    this.name = opts.name ?? '';
  }

  /** Queues `item` unless it already waits; held until `done` if a worker has it now. */
  add(item: K): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.#dirty.add(item);
    if (this.#processing.has(item)) return;
    this.#push(item);
  }

  #push(item: K): void {
    const getter = this.#getters.shift();
    if (getter !== undefined) {
      this.#dirty.delete(item);
      this.#processing.add(item);
      getter(item);
    } else {
      this.#queue.push(item);
    }
  }

  /** Adds `item` after `delayMs`; an earlier pending delay of the same item wins. */
  addAfter(item: K, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (delayMs <= 0) {
      this.add(item);
      return;
    }
    const at = performance.now() + delayMs;
    const pending = this.#delayed.get(item);
    if (pending !== undefined) {
      if (pending.at <= at) return;
      clearTimeout(pending.timer);
    }
    const timer = setTimeout(() => {
      this.#delayed.delete(item);
      this.add(item);
    }, delayMs);
    this.#delayed.set(item, { at, timer });
  }

  /** Adds `item` after its rate limiter's delay (counts a failure). */
  addRateLimited(item: K): void {
    this.addAfter(item, this.#limiter.when(item));
  }

  /** Resets `item`'s failure count. */
  forget(item: K): void {
    this.#limiter.forget(item);
  }

  numRequeues(item: K): number {
    return this.#limiter.numRequeues(item);
  }

  /**
   * The next item, waiting for one; `undefined` once shut down and drained. Call `done` with it
   * when finished.
   */
  get(): Promise<K | undefined> {
    if (this.#head < this.#queue.length) {
      const item = this.#queue[this.#head++]!;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      this.#dirty.delete(item);
      this.#processing.add(item);
      return Promise.resolve(item);
    }
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  /** Marks `item` finished; queues it again if it was added meanwhile. */
  done(item: K): void {
    this.#processing.delete(item);
    if (this.#dirty.has(item)) this.#push(item);
  }

  /** Items waiting (not delayed, not processing). */
  len(): number {
    return this.#queue.length - this.#head;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Stops accepting items; waiting `get`s resolve undefined; queued items are still handed out. */
  shutDown(): void {
    this.#shuttingDown = true;
    for (const { timer } of this.#delayed.values()) clearTimeout(timer);
    this.#delayed.clear();
    for (const g of this.#getters.splice(0)) g(undefined);
  }
}

/** Where {@link runWorkers} reports failures; default `console.error`. */
export type WorkerLog = (message: string, err: unknown) => void;

const defaultLog: WorkerLog = (message, err) => {
  console.error(message, err);
};

/**
 * Runs `n` workers on `queue` until it shuts down: each takes a key, awaits `fn(key)`, then
 * `forget`s it on success or logs and `addRateLimited`s it on failure. A write conflict (409, an
 * object changed since it was read) is retried the same way but not logged: it is the normal
 * outcome of optimistic concurrency, which kube's controllers log only at verbosity 2. A thrown
 * error never escapes or stalls the queue. Resolves when every worker has exited.
 */
export async function runWorkers<K>(
  queue: WorkQueue<K>,
  n: number,
  fn: (key: K) => Promise<void>,
  log: WorkerLog = defaultLog,
): Promise<void> {
  const worker = async (): Promise<void> => {
    for (;;) {
      const key = await queue.get();
      if (key === undefined) return;
      try {
        await fn(key);
        queue.forget(key);
      } catch (err) {
        if (!isConflict(err)) {
          const what = queue.name === '' ? 'work queue' : queue.name;
          log(`${what}: syncing ${String(key)} failed, retrying`, err);
        }
        queue.addRateLimited(key);
      } finally {
        queue.done(key);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, n) }, worker));
}
