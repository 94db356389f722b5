/**
 * The embedded MVCC revision log: the {@link Store} contract on abstract-level.
 *
 * - {@link openLevelStore}: classic-level (LevelDB) on disk. Persistent and durable: a write
 *   is acknowledged only after its group-commit batch is synced (`fsync`).
 * - {@link openMemoryStore}: memory-level, for tests. Neither persistent nor durable, but the
 *   same engine, so every behaviour except crash survival is the same.
 *
 * A LevelDB directory is locked by the process that opened it: opening it twice fails with
 * `UnavailableError`. See store.ts for the data flow and codec.ts for the on-disk layout.
 */
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import type { Store } from '../interface.js';
import type { LevelDb } from './level.js';
import { resolveOptions, type MvccOptions } from './options.js';
import { MvccStore } from './store.js';

export { MvccStore } from './store.js';
export type { BatchInfo, MvccOptions } from './options.js';

const ENCODINGS = { keyEncoding: 'buffer', valueEncoding: 'buffer' } as const;

/**
 * Opens (creating if missing) the LevelDB store in directory `path`.
 * @throws UnavailableError when the directory cannot be opened (missing permissions, locked by
 *   another process or instance, corrupt, or written by an incompatible version)
 */
export async function openLevelStore(path: string, options?: MvccOptions): Promise<Store> {
  const db = new ClassicLevel<Buffer, Buffer>(path, ENCODINGS) as unknown as LevelDb;
  return MvccStore.open(db, {
    capabilities: { backend: 'leveldb', persistent: true, durable: true, shared: false },
    sync: true,
    options: resolveOptions(options),
  });
}

/**
 * Opens a store in memory: fresh, or over `options.memoryLevel` to reopen that instance's data.
 * @throws TypeError when `options.memoryLevel` does not use Buffer encodings
 */
export async function openMemoryStore(options?: MvccOptions): Promise<Store> {
  const given = options?.memoryLevel;
  if (
    given !== undefined &&
    (given.keyEncoding().name !== 'buffer' || given.valueEncoding().name !== 'buffer')
  ) {
    throw new TypeError("memoryLevel must be created with keyEncoding and valueEncoding 'buffer'");
  }
  const db = (given ?? new MemoryLevel<Buffer, Buffer>(ENCODINGS)) as unknown as LevelDb;
  return MvccStore.open(db, {
    capabilities: { backend: 'memory', persistent: false, durable: false, shared: false },
    sync: false,
    options: resolveOptions(options),
  });
}
