/**
 * Staging one write into a group-commit batch: the version key, the log record, the head-index
 * entry, the recent-log entry, and the `prevKv` (from memory when the previous version is recent, else a disk read
 * that the batch performs before it is written).
 *
 * The caller has already decided the compare and taken the revision; staging is synchronous,
 * so the revision order of entries in the recent log and in batches is the order of calls.
 */
import { ownedCopy } from '../bytes.js';
import type { KeyValue } from '../interface.js';
import {
  RECORD_DELETE,
  RECORD_PUT,
  encodeLogRecord,
  headKey,
  headValue,
  logKey,
  versionKey,
} from './codec.js';
import type { Batch } from './group-commit.js';
import { tombstoneKv } from './history.js';
import type { IndexEntry } from './key-index.js';
import type { LogEntry, RecentLog } from './recent-log.js';

/** The stored value of a tombstone version. */
const TOMBSTONE_VALUE = Buffer.alloc(0);

/**
 * Stages a put of `value` (copied: the caller may reuse its buffer) at `revision`.
 * @param live the key's current entry, or undefined when the put creates the key
 */
export function stagePut(
  batch: Batch,
  recent: RecentLog,
  key: string,
  value: Uint8Array,
  revision: bigint,
  lease: bigint,
  live: IndexEntry | undefined,
): LogEntry {
  const createRev = live === undefined ? revision : live.createRev;
  const stored = ownedCopy(value);
  const kv: KeyValue = { key, value: stored, createRevision: createRev, modRevision: revision, lease };
  const entry: LogEntry = {
    revision,
    type: 'put',
    key,
    kv,
    indexEntry: { createRev, modRev: revision, lease },
    prevKv: undefined,
    event: undefined,
  };
  batch.put(versionKey(key, revision, createRev, lease), stored);
  batch.put(logKey(revision), record(RECORD_PUT, key, createRev, lease, live));
  batch.put(headKey(key), headValue(createRev, revision, lease));
  link(batch, recent, entry, live);
  return entry;
}

/** Stages the deletion of the live key `live` at `revision`. */
export function stageDelete(
  batch: Batch,
  recent: RecentLog,
  key: string,
  revision: bigint,
  live: IndexEntry,
): LogEntry {
  const entry: LogEntry = {
    revision,
    type: 'delete',
    key,
    kv: tombstoneKv(key, revision),
    indexEntry: { createRev: 0n, modRev: revision, lease: 0n },
    prevKv: undefined,
    event: undefined,
  };
  batch.put(versionKey(key, revision, 0n, 0n), TOMBSTONE_VALUE);
  batch.put(logKey(revision), record(RECORD_DELETE, key, 0n, 0n, live));
  batch.del(headKey(key));
  link(batch, recent, entry, live);
  return entry;
}

function record(
  type: typeof RECORD_PUT | typeof RECORD_DELETE,
  key: string,
  createRev: bigint,
  lease: bigint,
  prev: IndexEntry | undefined,
): Buffer {
  return encodeLogRecord({
    type,
    key,
    createRev,
    lease,
    prevModRev: prev?.modRev ?? 0n,
    prevCreateRev: prev?.createRev ?? 0n,
    prevLease: prev?.lease ?? 0n,
  });
}

/** Resolves `prevKv` from memory or schedules its load, then appends the entry. */
function link(batch: Batch, recent: RecentLog, entry: LogEntry, live: IndexEntry | undefined): void {
  if (live !== undefined) {
    // Every not-yet-durable entry is in the recent log, so a miss means the version is on disk.
    const previous = recent.get(live.modRev);
    if (previous !== undefined) entry.prevKv = previous.kv;
    else
      batch.loads.push({
        entry,
        versionKey: versionKey(entry.key, live.modRev, live.createRev, live.lease),
        prev: live,
      });
  }
  recent.append(entry);
  batch.entries.push(entry);
}
