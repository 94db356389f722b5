/**
 * Collects a watch's events in the background so tests can wait for what they expect (with a hang
 * guard) and then assert on the whole sequence.
 */
import type { Watch, WatchEvent } from '../../../storage/interface.js';
import { withDeadline } from './factory.js';

/** Drains a watch into {@link WatchCollector.events} until it ends or fails. */
export class WatchCollector {
  /** Every event received, progress included, in arrival order. */
  readonly events: WatchEvent[] = [];
  /** Set when the iterator threw. */
  error: unknown;
  /** True once the iterator ended or threw. */
  done = false;
  readonly watch: Watch;
  readonly #waiters = new Set<() => void>();
  readonly #finished: Promise<void>;

  constructor(watch: Watch) {
    this.watch = watch;
    this.#finished = this.#drain();
  }

  /** The put and delete events received so far. */
  get changes(): WatchEvent[] {
    return this.events.filter((event) => event.type !== 'progress');
  }

  /** Waits until `test()` holds or the watch ends; returns whether it held. */
  async until(test: () => boolean, what: string, ms?: number): Promise<boolean> {
    await withDeadline(
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (test() || this.done) {
            this.#waiters.delete(check);
            resolve();
          }
        };
        this.#waiters.add(check);
        check();
      }),
      what,
      ms,
    );
    return test();
  }

  /** Waits for `count` change events in total; throws when the watch ends first. */
  async changesAtLeast(count: number, ms?: number): Promise<WatchEvent[]> {
    if (!(await this.until(() => this.changes.length >= count, `${count} watch events`, ms))) {
      throw new Error(`watch ended after ${this.changes.length} of ${count} events`, { cause: this.error });
    }
    return this.changes;
  }

  /**
   * Requests progress until a progress event reports at least `revision` (the watch is then
   * caught up to it). Returns false when the watch ended instead.
   */
  async caughtUp(revision: bigint, ms = 15_000): Promise<boolean> {
    const reached = (): boolean =>
      this.events.some((event) => event.type === 'progress' && event.revision >= revision);
    const until = Date.now() + ms;
    while (!reached() && !this.done) {
      this.watch.requestProgress();
      const seen = this.events.length;
      await this.until(
        () => reached() || this.events.length > seen,
        `progress to ${revision}`,
        Math.max(1, until - Date.now()),
      );
    }
    return reached();
  }

  /** Closes the watch and waits for the iterator to finish. */
  async close(): Promise<void> {
    this.watch.close();
    await withDeadline(this.#finished, 'the watch to end after close()');
  }

  /** Resolves when the iterator has ended (by close, store close, or error). */
  ended(ms?: number): Promise<void> {
    return withDeadline(this.#finished, 'the watch to end', ms);
  }

  async #drain(): Promise<void> {
    try {
      for await (const event of this.watch) {
        this.events.push(event);
        this.#notify();
      }
    } catch (err) {
      this.error = err;
    } finally {
      this.done = true;
      this.#notify();
    }
  }

  #notify(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/**
 * The watch properties every sequence must have: revisions never go back; a progress event at P
 * is never followed by an event at or below P; a put's revision is its kv's mod revision; a
 * delete's kv is the key with an empty value at the delete's revision; no (key, revision) twice.
 */
export function checkWatchOrder(events: readonly WatchEvent[]): void {
  let last = -1n;
  let progress = -1n;
  const seen = new Set<string>();
  for (const [i, event] of events.entries()) {
    const where = `event ${i} (${event.type} at ${event.revision})`;
    if (event.revision < last) throw new Error(`${where} goes back from revision ${last}`);
    if (event.type === 'progress') {
      progress = event.revision > progress ? event.revision : progress;
      last = event.revision > last ? event.revision : last;
      continue;
    }
    if (event.revision <= progress) throw new Error(`${where} arrives after progress at ${progress}`);
    if (event.kv.modRevision !== event.revision)
      throw new Error(`${where} has kv.modRevision ${event.kv.modRevision}`);
    if (event.type === 'delete' && event.kv.value.byteLength !== 0)
      throw new Error(`${where} has a non-empty value`);
    const id = `${event.kv.key}@${event.revision}`;
    if (seen.has(id)) throw new Error(`${where} repeats ${id}`);
    seen.add(id);
    last = event.revision;
  }
}
