/**
 * The recent tail of the revision log, in memory: the shared buffer every watcher reads from
 * while it keeps up, and the source of `prevKv` for writes to recently written keys.
 *
 * Entries cover contiguous revisions `[first, last]`. Entries not yet durable are never
 * evicted (a write's `prevKv` may need them before they reach the disk); durable ones are
 * evicted oldest first once the tail exceeds its entry or byte bound. A watcher that falls
 * behind the tail reads the log from disk instead, so one slow watcher costs memory for no one.
 */
import type { KeyValue, WatchEvent } from '../interface.js';
import type { IndexEntry } from './key-index.js';

/** One write, from acceptance until it leaves the tail. */
export interface LogEntry {
  readonly revision: bigint;
  readonly type: 'put' | 'delete';
  readonly key: string;
  /** put: the key as written; delete: key, empty value, `modRevision = revision`. */
  readonly kv: KeyValue;
  /** The index entry this write installed (a delete's tombstone is removed once durable). */
  readonly indexEntry: IndexEntry;
  /** The key before the write; resolved before the write becomes durable. */
  prevKv: KeyValue | undefined;
  /** The watch event, built once when the write becomes durable and shared by all watchers. */
  event: WatchEvent | undefined;
}

/** Bookkeeping bytes per entry besides key and value (objects, bigints, the slot). */
const ENTRY_OVERHEAD = 256;

/** A bounded, contiguous window of the newest log entries. */
export class RecentLog {
  #entries: (LogEntry | undefined)[] = [];
  #head = 0;
  #first: bigint;
  #bytes = 0;
  readonly #maxEntries: number;
  readonly #maxBytes: number;

  /** @param nextRevision the revision the next appended entry will carry */
  constructor(nextRevision: bigint, maxEntries: number, maxBytes: number) {
    this.#first = nextRevision;
    this.#maxEntries = Math.max(1, maxEntries);
    this.#maxBytes = Math.max(1, maxBytes);
  }

  /** The oldest revision still in memory (equal to the next revision when empty). */
  get firstRevision(): bigint {
    return this.#first;
  }

  /** Appends the entry of the next revision; revisions must be contiguous. */
  append(entry: LogEntry): void {
    const expected = this.#first + BigInt(this.#entries.length - this.#head);
    if (entry.revision !== expected) {
      throw new Error(`recent log: appended revision ${entry.revision}, expected ${expected}`);
    }
    this.#entries.push(entry);
    this.#bytes += entrySize(entry);
  }

  /** The entry of `revision`, if it is still in memory. */
  get(revision: bigint): LogEntry | undefined {
    if (revision < this.#first) return undefined;
    return this.#entries[this.#head + Number(revision - this.#first)];
  }

  /** Marks everything through `revision` durable and evicts what exceeds the bounds. */
  durableThrough(revision: bigint): void {
    const entries = this.#entries;
    while (
      this.#head < entries.length &&
      (entries.length - this.#head > this.#maxEntries || this.#bytes > this.#maxBytes)
    ) {
      const oldest = entries[this.#head];
      if (oldest === undefined || oldest.revision > revision) break;
      this.#bytes -= entrySize(oldest);
      entries[this.#head++] = undefined;
      this.#first++;
    }
    // Drop the evicted slots in bulk so eviction stays O(1) amortized.
    if (this.#head > 4096 && this.#head * 2 > entries.length) {
      this.#entries = entries.slice(this.#head);
      this.#head = 0;
    }
  }
}

function entrySize(entry: LogEntry): number {
  return ENTRY_OVERHEAD + entry.key.length * 2 + entry.kv.value.byteLength;
}
