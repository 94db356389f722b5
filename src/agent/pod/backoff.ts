/**
 * Per-key exponential back-off with kubelet's semantics (client-go's flowcontrol.Backoff): the
 * first failure records a 10 s back-off starting at the failure's time and lets the retry through;
 * a later failure within the back-off waits it out, then doubles it, up to 5 min. An entry idle
 * for twice the maximum is forgotten, so a container that ran for 10 min starts afresh.
 */
export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { backoffMs: number; lastUpdate: number }>();

  constructor(initialMs = 10_000, maxMs = 300_000, now: () => number = Date.now) {
    this.#initialMs = initialMs;
    this.#maxMs = maxMs;
    this.#now = now;
  }

  /**
   * Milliseconds still to wait before retrying `key` after a failure at `eventTime` (0 = go).
   * Only reads.
   */
  remaining(key: string, eventTime: number): number {
    const e = this.#entries.get(key);
    if (!e) return 0;
    if (this.#now() - e.lastUpdate > 2 * this.#maxMs) return 0;
    return Math.max(0, eventTime + e.backoffMs - this.#now());
  }

  /** The current back-off of a key (0 when none). */
  current(key: string): number {
    return this.#entries.get(key)?.backoffMs ?? 0;
  }

  /** Records a retry of `key` after a failure at `eventTime`: starts or doubles its back-off. */
  next(key: string, eventTime: number): void {
    const e = this.#entries.get(key);
    if (!e || this.#now() - e.lastUpdate > 2 * this.#maxMs) {
      this.#entries.set(key, { backoffMs: this.#initialMs, lastUpdate: eventTime });
    } else {
      e.backoffMs = Math.min(e.backoffMs * 2, this.#maxMs);
      e.lastUpdate = eventTime;
    }
  }

  /** Forgets one key (a container restarted on purpose starts again at once). */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  /** Forgets keys starting with `prefix` (a pod's keys when it goes). */
  forgetPrefix(prefix: string): void {
    for (const k of this.#entries.keys()) if (k.startsWith(prefix)) this.#entries.delete(k);
  }
}
