/**
 * The buffer between a watch's producer (etcd responses) and its single consumer (an async
 * iterator): events are pushed in order; `next()` takes them, waiting when none is buffered.
 *
 * Ending: `end()` resolves every pending and later `next()` with `done` and drops what is
 * buffered (the consumer asked to stop); `fail(err)` lets the consumer drain what is buffered,
 * then throws `err` once, then reports `done`.
 */
import type { WatchEvent } from '../interface.js';

type Result = IteratorResult<WatchEvent, undefined>;

interface Waiter {
  resolve(result: Result): void;
  reject(err: Error): void;
}

const DONE: Result = Object.freeze({ done: true, value: undefined });

/** A FIFO of watch events with one consumer. */
export class EventQueue {
  #items: WatchEvent[] = [];
  #head = 0;
  readonly #waiters: Waiter[] = [];
  #ended = false;
  #failed = false;
  #error: Error | undefined;

  /** Events buffered and not yet taken. */
  get size(): number {
    return this.#items.length - this.#head;
  }

  /** True once `end()` or `fail()` was called. */
  get finished(): boolean {
    return this.#ended || this.#failed;
  }

  /** Appends an event (ignored once finished). */
  push(event: WatchEvent): void {
    if (this.finished) return;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter.resolve({ done: false, value: event });
    else this.#items.push(event);
  }

  /** The next event; waits while none is buffered. */
  next(): Promise<Result> {
    if (this.#ended) return Promise.resolve(DONE);
    if (this.size > 0) {
      const event = this.#items[this.#head] as WatchEvent;
      this.#head += 1;
      if (this.#head === this.#items.length) {
        this.#items = [];
        this.#head = 0;
      } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
        // Drop the consumed front now and then instead of shifting on every take.
        this.#items = this.#items.slice(this.#head);
        this.#head = 0;
      }
      return Promise.resolve({ done: false, value: event });
    }
    if (this.#failed) {
      this.#ended = true;
      const err = this.#error ?? new Error('watch failed');
      this.#error = undefined;
      return Promise.reject(err);
    }
    return new Promise<Result>((resolve, reject) => this.#waiters.push({ resolve, reject }));
  }

  /** Ends the stream now: pending and later `next()` calls resolve with `done`. Idempotent. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#items = [];
    this.#head = 0;
    for (const waiter of this.#waiters.splice(0)) waiter.resolve(DONE);
  }

  /** Ends the stream with `err` after the buffered events. Ignored once finished. */
  fail(err: Error): void {
    if (this.finished) return;
    this.#failed = true;
    this.#error = err;
    // Waiters exist only when nothing is buffered, so the first one gets the error now.
    const first = this.#waiters.shift();
    if (first === undefined) return;
    this.#ended = true;
    this.#error = undefined;
    first.reject(err);
    for (const waiter of this.#waiters.splice(0)) waiter.resolve(DONE);
  }
}
