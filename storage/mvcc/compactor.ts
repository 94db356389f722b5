/**
 * Physical compaction: after `compact(R)` has been recorded, delete what no read at a revision
 * ≥ R can see, and let LevelDB reclaim the space.
 *
 * It walks the log records of `[reclaimed, R)` in order. A record at revision m < R
 * - supersedes the version its `prev*` fields name, which no read at ≥ R can see: delete it;
 * - if it is a delete, its tombstone (modRev m < R) only says "absent", which the missing
 *   versions say too once the version before it is gone: delete it in the same batch;
 * - is not needed by watches (they start at ≥ R): delete it.
 * Versions at or after R, and the newest version below R of each live key, are never touched,
 * so reads at ≥ R see the same data before, during and after the walk. Each chunk's deletions
 * and the advanced `reclaimed` mark are one batch: a crash resumes where it stopped, and the
 * deletions are idempotent. Between chunks the walk yields to the event loop, so writers and
 * readers interleave with it; LevelDB's own `compactRange` then runs in its background thread.
 */
import {
  META_RECLAIMED,
  RECORD_DELETE,
  decodeLogRecord,
  logKey,
  logKeyRevision,
  u64,
  versionKey,
} from './codec.js';
import { breathe, compactRangeOf, scanOptions, writeOptions, type LevelDb, type LevelOp } from './level.js';

/** Log records handled per deletion batch (between two yields). */
export const DEFAULT_COMPACTION_CHUNK = 256;
/** Revisions per `compactRange` call over the log. */
const LOG_PIECE = 16_384n;
/** Every this many deleted versions, one becomes a `compactRange` boundary. */
const SAMPLE_EVERY = 2048;

/** How a reclaim pass runs. */
export interface ReclaimOptions {
  readonly chunk: number;
  /** Stop early (store closing); the next open resumes from the persisted mark. */
  readonly stopped: () => boolean;
}

/** What a reclaim pass removed (for tests and logs). */
export interface ReclaimResult {
  readonly records: number;
  readonly versions: number;
  /** The reclaimed mark after the pass (equal to `to` unless stopped early). */
  readonly reclaimed: bigint;
}

/** Deletes what compaction at `to` makes unreachable, starting at the mark `from`. */
export async function reclaim(
  db: LevelDb,
  from: bigint,
  to: bigint,
  options: ReclaimOptions,
): Promise<ReclaimResult> {
  let records = 0;
  let versions = 0;
  let reclaimed = from;
  // Boundaries for compacting the touched version range in pieces: a sample of the deleted
  // keys plus the extremes. One manual compaction over the whole keyspace could keep LevelDB's
  // compaction thread busy long enough to stall writers on level-0 files.
  const samples: Buffer[] = [];
  let minVersion: Buffer | undefined;
  let maxVersion: Buffer | undefined;
  const noteVersion = (key: Buffer): void => {
    if (minVersion === undefined || Buffer.compare(key, minVersion) < 0) minVersion = key;
    if (maxVersion === undefined || Buffer.compare(key, maxVersion) > 0) maxVersion = key;
    if (versions % SAMPLE_EVERY === 0) samples.push(key);
  };
  if (from < to) {
    const iterator = db.iterator(scanOptions({ gte: logKey(from), lt: logKey(to) }));
    try {
      for (;;) {
        if (options.stopped()) break;
        const chunk = await iterator.nextv(options.chunk);
        if (chunk.length === 0) break;
        const ops: LevelOp[] = [];
        for (const [rkey, value] of chunk) {
          const record = decodeLogRecord(value);
          const rev = logKeyRevision(rkey);
          if (record.prevModRev !== 0n) {
            const prev = versionKey(record.key, record.prevModRev, record.prevCreateRev, record.prevLease);
            ops.push({ type: 'del', key: prev });
            noteVersion(prev);
            versions++;
          }
          if (record.type === RECORD_DELETE) {
            const tombstone = versionKey(record.key, rev, 0n, 0n);
            ops.push({ type: 'del', key: tombstone });
            noteVersion(tombstone);
            versions++;
          }
          ops.push({ type: 'del', key: rkey });
          records++;
          reclaimed = rev + 1n;
        }
        ops.push({ type: 'put', key: META_RECLAIMED, value: u64(reclaimed) });
        await db.batch(ops, writeOptions(false));
        await breathe();
      }
    } finally {
      await iterator.close();
    }
  }
  if (!options.stopped()) {
    reclaimed = to;
    // Synced: also makes the unsynced deletion batches before it durable (one LevelDB log).
    await db.put(META_RECLAIMED, u64(reclaimed), writeOptions(true));
    const compactRange = compactRangeOf(db);
    if (compactRange !== undefined && records > 0) {
      for (let start = from; start < to && !options.stopped(); start += LOG_PIECE) {
        const end = start + LOG_PIECE < to ? start + LOG_PIECE : to;
        await compactRange(logKey(start), logKey(end));
      }
      if (minVersion !== undefined && maxVersion !== undefined) {
        const bounds = [minVersion, ...samples, maxVersion].sort((a, b) => Buffer.compare(a, b));
        for (let i = 1; i < bounds.length && !options.stopped(); i++) {
          await compactRange(bounds[i - 1] as Buffer, bounds[i] as Buffer);
        }
      }
    }
  }
  return { records, versions, reclaimed };
}
