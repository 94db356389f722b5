/**
 * Tuning and test options of the embedded store. Every field is optional; the defaults suit a
 * Kubernetes API server (objects of a few KiB, a few dozen watchers, 5-minute compactions).
 */
import type { MemoryLevel } from 'memory-level';
import type { BatchInfo } from './group-commit.js';

export type { BatchInfo } from './group-commit.js';

/** Options of `openLevelStore` and `openMemoryStore`. */
export interface MvccOptions {
  /**
   * Most writes (revisions) in one group-commit batch; more concurrent writers spill into the
   * next batch. Default 4096.
   */
  readonly maxBatchWrites?: number;
  /**
   * Bounds of the in-memory log tail that live watchers read and `prevKv` comes from.
   * Watchers behind the tail read from disk. Defaults: 4096 entries (one full batch), 16 MiB.
   * The API server's watch cache keeps up with the tail; each entry holds its value and
   * previous value, so a longer tail only held memory: at 16,384 entries the tail took about
   * 25 MiB of a server's peak RSS with 10,000 pods (docs/bench/cluster.md).
   */
  readonly recentEntries?: number;
  readonly recentBytes?: number;
  /** Log records per compaction deletion batch, between two yields. Default 256. */
  readonly compactionChunk?: number;
  /**
   * Called after every durable batch with its size (tests count syncs with it; metrics).
   * Runs on the commit path: keep it trivial, and it must not throw.
   */
  readonly onBatchWritten?: (info: BatchInfo) => void;
  /**
   * `openMemoryStore` only: keep the data in this MemoryLevel instead of a fresh one, so
   * closing the store and opening another over the same instance exercises the restart path.
   * It must have been created with `{ keyEncoding: 'buffer', valueEncoding: 'buffer' }`.
   */
  readonly memoryLevel?: MemoryLevel<Buffer, Buffer>;
}

/** The options with defaults applied. */
export interface ResolvedOptions {
  readonly maxBatchWrites: number;
  readonly recentEntries: number;
  readonly recentBytes: number;
  readonly compactionChunk: number;
  readonly onBatchWritten: ((info: BatchInfo) => void) | undefined;
}

/**
 * Applies defaults.
 * @throws RangeError when a numeric option is not a positive integer
 */
export function resolveOptions(options: MvccOptions | undefined): ResolvedOptions {
  return {
    maxBatchWrites: positive(options?.maxBatchWrites, 4096, 'maxBatchWrites'),
    recentEntries: positive(options?.recentEntries, 4096, 'recentEntries'),
    recentBytes: positive(options?.recentBytes, 16 * 1024 * 1024, 'recentBytes'),
    compactionChunk: positive(options?.compactionChunk, 256, 'compactionChunk'),
    onBatchWritten: options?.onBatchWritten,
  };
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}
