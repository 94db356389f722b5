/**
 * The store's open watches: all of them (so closing the store ends them) and the parked ones
 * (caught up, waiting for the next durable batch). Waking costs nothing for a watch that is
 * still busy catching up: it is not parked, and it will see the new writes when it looks.
 */
import type { UnavailableError } from '../errors.js';
import type { KeySpan, Watch, WatchOptions } from '../interface.js';
import type { LevelDb } from './level.js';
import type { RecentLog } from './recent-log.js';
import { MvccWatch, type WatchSource } from './watch.js';

/** The store state watches read. */
export interface WatchHubSource {
  readonly db: LevelDb;
  readonly recent: RecentLog;
  durableRevision(): bigint;
  compactedRevision(): bigint;
  unavailable(): UnavailableError | undefined;
}

/** The open and parked watches of one store. */
export class WatchHub {
  readonly #open = new Set<MvccWatch>();
  readonly #parked = new Set<MvccWatch>();
  readonly #source: WatchSource;

  constructor(store: WatchHubSource) {
    this.#source = {
      db: store.db,
      recent: store.recent,
      durableRevision: () => store.durableRevision(),
      compactedRevision: () => store.compactedRevision(),
      unavailable: () => store.unavailable(),
      park: (watch) => this.#parked.add(watch),
      unpark: (watch) => this.#parked.delete(watch),
      forget: (watch) => {
        this.#open.delete(watch);
        this.#parked.delete(watch);
      },
    };
  }

  /** A new watch from revision `from`; tracked unless the store no longer serves. */
  open(span: KeySpan, from: bigint, options: WatchOptions | undefined): Watch {
    const watch = new MvccWatch(this.#source, span, from, options?.progressIntervalMs);
    if (this.#source.unavailable() === undefined) this.#open.add(watch);
    return watch;
  }

  /** New writes are durable (or the store failed): every parked watch looks again. */
  wakeAll(): void {
    if (this.#parked.size === 0) return;
    const parked = [...this.#parked];
    this.#parked.clear();
    for (const watch of parked) watch.wake();
  }

  /** Ends every open watch (store closing). */
  closeAll(): void {
    for (const watch of [...this.#open]) watch.close();
  }
}
