/**
 * Opening a store: read the meta keys, rebuild the in-memory key index from the versions, load
 * the leases, and find the revision to resume at.
 *
 * The rebuild scans the head index (24 bytes per live key, see codec.ts) in large `nextv`
 * chunks; the versions and their values are not read. The current
 * revision is the newest log record's: every revision has exactly one record, and compaction
 * keeps every record at or after the compacted revision, so the newest one always survives.
 */
import { randomBytes } from 'node:crypto';
import {
  ALL_LEASES,
  ALL_LOG,
  FORMAT_VERSION,
  INITIAL_REVISION,
  META_COMPACTED,
  META_FORMAT,
  META_RECLAIMED,
  META_SECRET,
  PREFIX_HEAD,
  decodeLease,
  logKeyRevision,
  readU64,
  type LeaseRecord,
} from './codec.js';
import type { KeyIndex } from './key-index.js';
import type { AbstractIteratorOptions } from 'abstract-level';
import { ITERATOR_BYTES, writeOptions, type LevelDb } from './level.js';

/** Bounds of the head index as UTF-8 strings (the prefix byte is ASCII). */
const HEADS_FROM = String.fromCharCode(PREFIX_HEAD);
const HEADS_TO = String.fromCharCode(PREFIX_HEAD + 1);

/** Entries per `nextv()` during the rebuild; head entries are small, so large chunks are cheap. */
const REBUILD_CHUNK = 8192;

/** Everything a store needs from disk to start serving. */
export interface RecoveredState {
  readonly index: KeyIndex;
  readonly leases: readonly LeaseRecord[];
  /** Leases named by keys but without a record (only after external damage): expire at once. */
  readonly orphanLeases: readonly bigint[];
  readonly revision: bigint;
  readonly compacted: bigint;
  /** Compaction has physically reclaimed everything before this revision. */
  readonly reclaimed: bigint;
  readonly secret: Buffer;
}

/**
 * Reads a store's state from an open database, initializing a fresh one (format, secret).
 * @throws Error when the database was written in an unsupported format
 */
export async function recover(db: LevelDb): Promise<RecoveredState> {
  const [format, compactedRaw, reclaimedRaw, storedSecret] = await db.getMany([
    META_FORMAT,
    META_COMPACTED,
    META_RECLAIMED,
    META_SECRET,
  ]);
  if (format !== undefined && format[0] !== FORMAT_VERSION) {
    throw new Error(`unsupported storage format ${String(format[0])} (this build reads ${FORMAT_VERSION})`);
  }
  let secret = storedSecret;
  if (secret === undefined || format === undefined) {
    // First open: the continue-token secret is made once and kept, so tokens survive restarts.
    secret = storedSecret ?? randomBytes(32);
    await db.batch(
      [
        { type: 'put', key: META_FORMAT, value: Buffer.of(FORMAT_VERSION) },
        { type: 'put', key: META_SECRET, value: secret },
      ],
      writeOptions(true),
    );
  }
  const compacted = compactedRaw === undefined ? 0n : readU64(compactedRaw, 0);
  const reclaimed = reclaimedRaw === undefined ? 0n : readU64(reclaimedRaw, 0);
  const lastRecord = await lastLogRevision(db);
  const revision = [lastRecord, compacted, INITIAL_REVISION].reduce((a, b) => (a > b ? a : b));

  const leases = await loadLeases(db);
  const index: KeyIndex = new Map();
  const known = new Set(leases.map((lease) => lease.id));
  const orphans = new Set<bigint>();
  await rebuildIndex(db, index, (lease) => {
    if (!known.has(lease)) orphans.add(lease);
  });
  return { index, leases, orphanLeases: [...orphans], revision, compacted, reclaimed, secret };
}

async function lastLogRevision(db: LevelDb): Promise<bigint> {
  const keys = await db.keys({ gte: ALL_LOG.gte, lt: ALL_LOG.lt, reverse: true, limit: 1 }).all();
  const last = keys[0];
  return last === undefined ? 0n : logKeyRevision(last);
}

async function loadLeases(db: LevelDb): Promise<LeaseRecord[]> {
  const entries = await db.iterator({ gte: ALL_LEASES.gte, lt: ALL_LEASES.lt }).all();
  return entries.map(([key, value]) => decodeLease(key, value));
}

async function rebuildIndex(db: LevelDb, index: KeyIndex, onLease: (lease: bigint) => void): Promise<void> {
  // Keys decoded to strings by the binding itself: cheaper than a Buffer per key, then a slice.
  const options = { gte: HEADS_FROM, lt: HEADS_TO, keyEncoding: 'utf8', highWaterMarkBytes: ITERATOR_BYTES };
  const iterator = db.iterator<string, Buffer>(options as AbstractIteratorOptions<string, Buffer>);
  try {
    for (;;) {
      const chunk = await iterator.nextv(REBUILD_CHUNK);
      if (chunk.length === 0) break;
      for (const [key, head] of chunk) {
        const lease = readU64(head, 16);
        const modRev = readU64(head, 8);
        // Most keys were never updated: one bigint serves both revisions.
        const createRev = head.compare(head, 8, 16, 0, 8) === 0 ? modRev : readU64(head, 0);
        index.set(key.slice(1), { createRev, modRev, lease });
        if (lease !== 0n) onLease(lease);
      }
    }
  } finally {
    await iterator.close();
  }
}
