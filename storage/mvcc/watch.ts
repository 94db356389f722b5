/**
 * A watch is a cursor over the revision log: `#next` is the first revision it has not looked
 * at. It never holds a reference that could make a writer wait.
 *
 * States (driven by `next()`):
 * - **catching up** (`#next ≤ durable revision`): take events from the shared in-memory tail
 *   while it still holds `#next`; otherwise read a chunk of history from disk. The local queue
 *   holds at most one chunk, so a consumer that stops reading costs one chunk of memory; the
 *   tail moves on without it and the watch re-reads from disk when it resumes.
 * - **caught up** (`#next > durable revision`): deliver a requested progress event if any,
 *   else park until the store reports new durable writes (or a progress request, or close).
 * - **failed**: its position fell below the compacted revision (`CompactedError`) or the
 *   store became unavailable (`UnavailableError`); the error is thrown once, then it is done.
 * - **closed**: every pending and later `next()` resolves `done`.
 *
 * Events come in revision order, each revision's events exactly once: the cursor only moves
 * forward, over revisions it has fully examined.
 */
import { CompactedError, UnavailableError, isStorageError } from '../errors.js';
import type { KeySpan, Watch, WatchEvent } from '../interface.js';
import { INITIAL_REVISION } from './codec.js';
import { MissingHistoryError, readHistory } from './history.js';
import type { LevelDb } from './level.js';
import type { RecentLog } from './recent-log.js';
import { spanMatcher } from './span-matcher.js';

/** The revision of a store's first write: the first one with a log record. */
const FIRST_WRITE = INITIAL_REVISION + 1n;

/** Events a watch gathers per step (its local buffer bound). */
const WATCH_CHUNK = 1024;

/** What a watch needs from its store. */
export interface WatchSource {
  readonly db: LevelDb;
  readonly recent: RecentLog;
  durableRevision(): bigint;
  compactedRevision(): bigint;
  /** Undefined while the store serves; the error to end watches with once it cannot. */
  unavailable(): UnavailableError | undefined;
  /** Calls `wake` once, after the next durable batch (or when the store closes). */
  park(watch: MvccWatch): void;
  unpark(watch: MvccWatch): void;
  forget(watch: MvccWatch): void;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** One watch: a cursor over the log (see the module comment for its states). */
export class MvccWatch implements Watch, AsyncIterator<WatchEvent> {
  readonly #source: WatchSource;
  readonly #matches: (key: string) => boolean;
  #next: bigint;
  #queue: WatchEvent[] = [];
  #queued = 0;
  #progressWanted = false;
  #closed = false;
  #delivered = false;
  #wake: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<IteratorResult<WatchEvent>> = Promise.resolve(DONE);

  /**
   * @param from first revision to deliver
   * @param progressIntervalMs emit progress when idle this long (undefined: on request only)
   */
  constructor(source: WatchSource, span: KeySpan, from: bigint, progressIntervalMs: number | undefined) {
    this.#source = source;
    this.#matches = spanMatcher(span);
    this.#next = from;
    if (progressIntervalMs !== undefined && progressIntervalMs > 0) {
      this.#timer = setInterval(() => {
        // Only an idle watch needs a heartbeat; events already prove progress.
        if (!this.#delivered) this.requestProgress();
        this.#delivered = false;
      }, progressIntervalMs).unref();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return this;
  }

  /** The next event; calls are served one at a time in call order. */
  next(): Promise<IteratorResult<WatchEvent>> {
    const result = this.#chain.then(
      () => this.#pull(),
      () => this.#pull(),
    );
    this.#chain = result;
    return result;
  }

  async return(): Promise<IteratorResult<WatchEvent>> {
    this.close();
    return DONE;
  }

  requestProgress(): void {
    if (this.#closed) return;
    this.#progressWanted = true;
    this.#rouse();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#queue = [];
    this.#source.forget(this);
    this.#rouse();
  }

  /** @internal Called by the store when new writes are durable. */
  wake(): void {
    this.#rouse();
  }

  #rouse(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async #pull(): Promise<IteratorResult<WatchEvent>> {
    try {
      for (;;) {
        if (this.#closed) return DONE;
        if (this.#queued < this.#queue.length) {
          const event = this.#queue[this.#queued++] as WatchEvent;
          this.#delivered = true;
          return { done: false, value: event };
        }
        const unavailable = this.#source.unavailable();
        if (unavailable !== undefined) throw unavailable;
        const compacted = this.#source.compactedRevision();
        if (this.#next < compacted) throw new CompactedError(this.#next, compacted);
        // Revisions before the first write have no log record: nothing to deliver there.
        if (this.#next < FIRST_WRITE) this.#next = FIRST_WRITE;
        const durable = this.#source.durableRevision();
        if (this.#next <= durable) {
          await this.#gather(durable);
          continue;
        }
        if (this.#progressWanted) {
          this.#progressWanted = false;
          const revision = this.#next - 1n < durable ? this.#next - 1n : durable;
          return { done: false, value: { type: 'progress', revision } };
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          this.#source.park(this);
        });
        this.#source.unpark(this);
      }
    } catch (error) {
      // Closed meanwhile (by the caller or the store): the read was abandoned, not failed.
      if (this.#closed) return DONE;
      // A watch ends after its error: later next() calls report done.
      this.close();
      if (error instanceof MissingHistoryError) throw this.#historyError(error);
      if (isStorageError(error)) throw error;
      throw new UnavailableError('reading watch history failed', { cause: error });
    }
  }

  /** Fills the local queue with the next chunk of events up to `durable`. */
  async #gather(durable: bigint): Promise<void> {
    const queue: WatchEvent[] = [];
    const recent = this.#source.recent;
    let rev = this.#next;
    for (; rev <= durable && queue.length < WATCH_CHUNK; rev++) {
      const entry = recent.get(rev);
      if (entry?.event === undefined) break;
      if (this.#matches(entry.key)) queue.push(entry.event);
    }
    if (rev === this.#next) {
      // Behind the in-memory tail: read history from disk up to where the tail starts.
      const first = recent.firstRevision;
      const to = first > rev && first - 1n < durable ? first - 1n : durable;
      const chunk = await readHistory(this.#source.db, recent, rev, to, this.#matches, WATCH_CHUNK);
      if (this.#closed) return;
      const compacted = this.#source.compactedRevision();
      if (rev < compacted) throw new CompactedError(rev, compacted);
      queue.push(...chunk.events);
      rev = chunk.next;
    }
    this.#queue = queue;
    this.#queued = 0;
    this.#next = rev;
  }

  #historyError(error: MissingHistoryError): Error {
    const compacted = this.#source.compactedRevision();
    if (this.#next < compacted) return new CompactedError(this.#next, compacted);
    return new UnavailableError('watch history is damaged', { cause: error });
  }
}
