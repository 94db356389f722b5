/**
 * Client-side request limiting, as client-go's `flowcontrol.NewTokenBucketRateLimiter`: a bucket
 * of `burst` tokens refilled at `qps` per second. Callers reserve a token and wait until it is
 * theirs, so waiting callers are served in order without a queue of timers.
 */

/** A token bucket; `qps < 0` (or `Infinity`) never waits. */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  #tokens: number;
  #last: number;
  readonly #now: () => number;

  /**
   * @param qps tokens per second; negative or infinite: unlimited.
   * @param burst bucket size (at least 1); the bucket starts full.
   * @param now the clock in ms (tests); default `performance.now`.
   */
  constructor(qps: number, burst: number, now: () => number = () => performance.now()) {
    this.qps = qps;
    this.burst = Math.max(1, burst);
    this.#tokens = this.burst;
    this.#now = now;
    this.#last = now();
  }

  get unlimited(): boolean {
    return this.qps < 0 || this.qps === Infinity;
  }

  #refill(): void {
    const now = this.#now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) * this.qps) / 1000);
    this.#last = now;
  }

  /** Takes a token if one is available now; false (and nothing taken) otherwise. */
  tryAccept(): boolean {
    if (this.unlimited) return true;
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /**
   * Reserves the next token and returns how long (ms) to wait until it is due; 0 when it is
   * available now. The reservation stands: the caller must then wait that long.
   */
  reserve(): number {
    if (this.unlimited) return 0;
    this.#refill();
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens * 1000) / this.qps;
  }

  /**
   * Resolves when a token is the caller's.
   * @throws the signal's reason when aborted while waiting (the token is not given back).
   */
  async wait(signal?: AbortSignal): Promise<void> {
    const delay = this.reserve();
    if (delay <= 0) return;
    await sleep(delay, signal);
  }
}

/** Resolves after `ms`; rejects with the signal's reason when aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
