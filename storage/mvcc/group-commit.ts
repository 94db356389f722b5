/**
 * Group commit: many concurrent writers share one synced LevelDB batch.
 *
 * State machine (one instance per store):
 * - **idle**: no batch is being written. The first write opens a batch and schedules a drain
 *   on the next turn of the event loop, so every write made in the current turn joins it.
 * - **writing**: one batch is being loaded and written (`sync: true`). Writes arriving
 *   meanwhile join the next open batch. When the write finishes, its writers are resumed and
 *   the drain yields one turn so that their follow-up writes join the next batch too.
 * - **failed**: a batch write failed. That batch and every later one are rejected and no new
 *   work is accepted; the store turns unavailable (its in-memory index already counted those
 *   writes, so continuing could serve state the disk does not have).
 *
 * A batch is written with one `db.batch()` call, so its writes are all-or-nothing on disk.
 */
import type { KeyValue } from '../interface.js';
import type { IndexEntry } from './key-index.js';
import {
  breathe,
  writeOptions,
  type LevelChainedBatch,
  type LevelDb,
  type LevelWriteOptions,
} from './level.js';
import type { LogEntry } from './recent-log.js';

/** A previous version to read from disk before the batch is written (for `prevKv`). */
export interface PendingLoad {
  readonly entry: LogEntry;
  readonly versionKey: Buffer;
  readonly prev: IndexEntry;
}

/**
 * Work that becomes durable together. Operations go straight into a LevelDB chained batch
 * (classic-level copies each one into its native write batch at once), which costs a quarter
 * of the JavaScript time of an array batch and keeps no per-operation objects alive.
 */
export class Batch {
  readonly entries: LogEntry[] = [];
  readonly loads: PendingLoad[] = [];
  /** Resolves when the batch is durable; rejects when it failed. */
  readonly done: Promise<void>;
  readonly #chain: LevelChainedBatch;
  #resolve!: () => void;
  #reject!: (error: unknown) => void;

  constructor(chain: LevelChainedBatch) {
    this.#chain = chain;
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Batches holding only bookkeeping may have no waiter; their failure is reported elsewhere.
    this.done.catch(() => undefined);
  }

  put(key: Buffer, value: Buffer): void {
    this.#chain.put(key, value);
  }

  del(key: Buffer): void {
    this.#chain.del(key);
  }

  /** LevelDB operations so far. */
  get size(): number {
    return this.#chain.length;
  }

  /** @internal Writes the operations atomically. */
  write(options: LevelWriteOptions): Promise<void> {
    return this.#chain.write(options);
  }

  /** @internal Settles `done`; a failed batch's operations are discarded, never written. */
  settle(error?: unknown): void {
    if (error === undefined) {
      this.#resolve();
      return;
    }
    this.#reject(error);
    this.#chain.close().catch(() => undefined);
  }
}

/** What a batch write looked like, for tests and metrics. */
export interface BatchInfo {
  /** Revisions (writes) in the batch. */
  readonly writes: number;
  /** LevelDB operations in the batch. */
  readonly ops: number;
}

/** How the committer reports back to its store. */
export interface GroupCommitHooks {
  /** The batch is durable; called before its writers resume. Must not throw. */
  readonly onDurable: (batch: Batch) => void;
  /** A batch failed; returns the error its writers (and all later ones) receive. */
  readonly onFailure: (cause: unknown) => Error;
  readonly onBatchWritten?: ((info: BatchInfo) => void) | undefined;
}

/** The group-commit pipeline of one store (see the module comment for its states). */
export class GroupCommitter {
  readonly #db: LevelDb;
  readonly #options: LevelWriteOptions;
  readonly #maxWrites: number;
  readonly #hooks: GroupCommitHooks;
  #open: Batch | undefined;
  readonly #queue: Batch[] = [];
  #running = false;
  #scheduled = false;
  #failure: Error | undefined;
  #last: Promise<void> = Promise.resolve();

  constructor(db: LevelDb, sync: boolean, maxWrites: number, hooks: GroupCommitHooks) {
    this.#db = db;
    this.#options = writeOptions(sync);
    this.#maxWrites = Math.max(1, maxWrites);
    this.#hooks = hooks;
  }

  /**
   * The batch new work joins (opening one when needed). Callers add entries, operations and loads
   * synchronously, then await `done`.
   * @throws the failure error once a batch has failed
   */
  batch(): Batch {
    if (this.#failure !== undefined) throw this.#failure;
    let open = this.#open;
    if (open === undefined || open.entries.length >= this.#maxWrites) {
      if (open !== undefined) this.#queue.push(open);
      open = new Batch(this.#db.batch());
      this.#open = open;
      this.#last = open.done;
      this.#schedule();
    }
    return open;
  }

  /** Resolves when every batch opened so far is durable; rejects if one failed. */
  settled(): Promise<void> {
    return this.#last;
  }

  #schedule(): void {
    if (this.#running || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#start);
  }

  readonly #start = (): void => {
    this.#scheduled = false;
    if (this.#running) return;
    this.#running = true;
    this.#drain().catch((error: unknown) => this.#fail(error));
  };

  async #drain(): Promise<void> {
    try {
      for (;;) {
        const batch = this.#queue.shift() ?? this.#takeOpen();
        if (batch === undefined || this.#failure !== undefined) return;
        await this.#write(batch);
        // Writers resumed by this batch usually write again at once: let them join the next.
        if (this.#queue.length === 0) await breathe();
      }
    } finally {
      this.#running = false;
    }
  }

  #takeOpen(): Batch | undefined {
    const open = this.#open;
    this.#open = undefined;
    return open;
  }

  async #write(batch: Batch): Promise<void> {
    try {
      if (batch.loads.length > 0) await this.#load(batch.loads);
      await batch.write(this.#options);
    } catch (error) {
      this.#fail(error, batch);
      return;
    }
    this.#hooks.onBatchWritten?.({ writes: batch.entries.length, ops: batch.size });
    this.#hooks.onDurable(batch);
    batch.settle();
  }

  /** Reads the previous versions that were no longer in memory when their write was made. */
  async #load(loads: readonly PendingLoad[]): Promise<void> {
    const values = await this.#db.getMany(loads.map((load) => load.versionKey));
    for (let i = 0; i < loads.length; i++) {
      const load = loads[i] as PendingLoad;
      const value = values[i];
      if (value === undefined) {
        throw new Error(`version ${load.prev.modRev} of key ${JSON.stringify(load.entry.key)} is missing`);
      }
      const prevKv: KeyValue = {
        key: load.entry.key,
        value,
        createRevision: load.prev.createRev,
        modRevision: load.prev.modRev,
        lease: load.prev.lease,
      };
      load.entry.prevKv = prevKv;
    }
  }

  #fail(cause: unknown, batch?: Batch): void {
    const error = this.#failure ?? this.#hooks.onFailure(cause);
    this.#failure = error;
    batch?.settle(error);
    for (const queued of this.#queue.splice(0)) queued.settle(error);
    this.#takeOpen()?.settle(error);
  }
}
