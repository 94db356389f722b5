/**
 * The slice of abstract-level the engine uses, with Buffer keys and values throughout
 * (`keyEncoding: 'buffer'`, `valueEncoding: 'buffer'`), so no operation re-encodes anything.
 */
import type {
  AbstractBatchOperation,
  AbstractChainedBatch,
  AbstractChainedBatchWriteOptions,
  AbstractIteratorOptions,
  AbstractLevel,
} from 'abstract-level';

/** A database opened with Buffer key and value encodings. */
export type LevelDb = AbstractLevel<string | Buffer | Uint8Array, Buffer, Buffer>;

/** One batch operation on {@link LevelDb}. */
export type LevelOp = AbstractBatchOperation<LevelDb, Buffer, Buffer>;

/** A chained (incrementally built) batch on {@link LevelDb}. */
export type LevelChainedBatch = AbstractChainedBatch<LevelDb, Buffer, Buffer>;

/** Options of a batch write (`sync` is classic-level's; others ignore it). */
export type LevelWriteOptions = AbstractChainedBatchWriteOptions;

/**
 * Iterator options: `highWaterMarkBytes` (classic-level) lets one `nextv()` return a whole
 * chunk instead of stopping at 16 KiB; other implementations ignore it.
 */
export const ITERATOR_BYTES = 4 * 1024 * 1024;

/** Range options for an iterator or key iterator, with classic-level's read-ahead bound. */
export interface ScanRange {
  readonly gte?: Buffer;
  readonly gt?: Buffer;
  readonly lt?: Buffer;
  readonly lte?: Buffer;
  readonly limit?: number;
  readonly reverse?: boolean;
}

/** Iterator options for `range` (with `highWaterMarkBytes`, which abstract-level's types lack). */
export function scanOptions(range: ScanRange): AbstractIteratorOptions<Buffer, Buffer> {
  return { ...range, highWaterMarkBytes: ITERATOR_BYTES } as AbstractIteratorOptions<Buffer, Buffer>;
}

/** Entries per `nextv()` call in long scans. */
export const SCAN_CHUNK = 1024;

/** classic-level's `compactRange`, when the backend has one (memory-level does not). */
export function compactRangeOf(db: LevelDb): ((start: Buffer, end: Buffer) => Promise<void>) | undefined {
  const candidate = (db as unknown as { compactRange?: unknown }).compactRange;
  if (typeof candidate !== 'function') return undefined;
  return (start, end) => (candidate as (s: Buffer, e: Buffer) => Promise<void>).call(db, start, end);
}

/** Write options: `sync` is classic-level's (fsync before acknowledging); others ignore it. */
export function writeOptions(sync: boolean): LevelWriteOptions {
  return { sync };
}

/** Resolves on the next turn of the event loop (lets I/O and other tasks run). */
export function breathe(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
