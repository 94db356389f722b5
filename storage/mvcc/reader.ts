/**
 * Reads at a revision: point gets and span scans over the version keys.
 *
 * A read at revision R takes, for each key, the first (newest) version with modRev ≤ R;
 * a tombstone there means the key is absent at R. Newer versions are skipped. Version data
 * at or below a retained revision never changes (compaction only removes versions that no
 * retained revision can see), so a scan needs no snapshot beyond its iterator's own; the
 * caller re-checks the compacted revision afterwards in case compaction overtook the read.
 */
import type { ContinueTokens } from '../continue-token.js';
import type { KeySpan, KeyValue, RangeResult } from '../interface.js';
import {
  EMPTY_VALUE,
  MAX_EXACT,
  sameUserKey,
  versionCreateRevNumber,
  versionModRevNumber,
  versionCreateRev,
  versionIsTombstone,
  versionLease,
  versionModRev,
  versionSeek,
  versionsEnd,
  versionUserKey,
  versionKey,
  spanBounds,
  type VersionBounds,
} from './codec.js';
import type { IndexEntry, KeyIndex } from './key-index.js';
import { SCAN_CHUNK, scanOptions, type LevelDb } from './level.js';
import type { RecentLog } from './recent-log.js';

/** What reads need from the store. */
export interface ReadContext {
  readonly db: LevelDb;
  readonly recent: RecentLog;
  readonly index: KeyIndex;
}

/** A chunk of a span read. */
export interface ScanResult {
  readonly items: KeyValue[];
  /** A live key follows the last item (only known when a limit was given). */
  readonly more: boolean;
}

function kvOf(vkey: Buffer, value: Uint8Array): KeyValue {
  return {
    key: versionUserKey(vkey),
    value,
    createRevision: versionCreateRev(vkey),
    modRevision: versionModRev(vkey),
    lease: versionLease(vkey),
  };
}

/** {@link kvOf} for scans: reuses the mod revision already read, and one bigint when equal. */
function scannedKv(vkey: Buffer, value: Uint8Array, mod: number): KeyValue {
  if (mod > Number.MAX_SAFE_INTEGER) return kvOf(vkey, value);
  const modRevision = BigInt(mod);
  return {
    key: versionUserKey(vkey),
    value,
    // Most keys were never updated: create and mod revision are the same number.
    createRevision: versionCreateRevNumber(vkey) === mod ? modRevision : versionCreateRev(vkey),
    modRevision,
    lease: versionLease(vkey),
  };
}

/**
 * Picks, in a key-ordered scan of versions, the one version per key visible at a revision.
 * Allocation-free per entry: revisions compare as numbers while they are exact.
 */
class Visibility {
  readonly #rev: bigint;
  readonly #revNumber: number;
  readonly #exact: boolean;
  #decided: Buffer | undefined;

  constructor(rev: bigint) {
    this.#rev = rev;
    this.#exact = rev <= MAX_EXACT;
    this.#revNumber = Number(rev);
  }

  /** The version's mod revision when it is the live version visible at the revision, else -1. */
  check(vkey: Buffer): number {
    // Versions sort newest first within a key: once one was at or below the revision, the
    // key is decided and its older versions are skipped.
    if (this.#decided !== undefined && sameUserKey(vkey, this.#decided)) return -1;
    const mod = versionModRevNumber(vkey);
    if (this.#exact ? mod > this.#revNumber : versionModRev(vkey) > this.#rev) return -1;
    this.#decided = vkey;
    return versionIsTombstone(vkey) ? -1 : mod;
  }
}

/**
 * The exact version an index entry names (durable, not a tombstone), from memory when recent.
 * Resolves undefined only when the version is gone (compacted after the entry was taken).
 */
export async function readVersion(
  ctx: ReadContext,
  key: string,
  entry: IndexEntry,
): Promise<KeyValue | undefined> {
  const recent = ctx.recent.get(entry.modRev);
  if (recent !== undefined) return recent.kv;
  const value = await ctx.db.get(versionKey(key, entry.modRev, entry.createRev, entry.lease));
  if (value === undefined) return undefined;
  return { key, value, createRevision: entry.createRev, modRevision: entry.modRev, lease: entry.lease };
}

/**
 * The key at revision `rev`. `current` is the durable revision: when `rev` equals it, the
 * index answers which version to read (pending tombstones keep deleted keys visible).
 */
export async function getAt(
  ctx: ReadContext,
  key: string,
  rev: bigint,
  current: bigint,
): Promise<KeyValue | undefined> {
  const entry = ctx.index.get(key);
  if (entry === undefined && rev === current) return undefined;
  if (entry !== undefined && entry.modRev <= rev) {
    if (entry.createRev === 0n) return undefined;
    const kv = await readVersion(ctx, key, entry);
    if (kv !== undefined) return kv;
  }
  // An older revision, or a write to the key is still pending: find the version on disk.
  const found = await ctx.db
    .iterator(scanOptions({ gte: versionSeek(key, rev), lt: versionsEnd(key), limit: 1 }))
    .all();
  const first = found[0];
  if (first === undefined || versionIsTombstone(first[0])) return undefined;
  return kvOf(first[0], first[1]);
}

/**
 * Up to `limit` live keys of `bounds` at revision `rev`, in key order. With `keysOnly` the
 * values are not read at all (a keys-only iterator) and items carry an empty value.
 */
export async function scanAt(
  db: LevelDb,
  bounds: VersionBounds,
  rev: bigint,
  limit: number,
  keysOnly: boolean,
): Promise<ScanResult> {
  const visibility = new Visibility(rev);
  const items: KeyValue[] = [];
  let more = false;
  /** Takes one entry; false once the limit is reached and a further live key was seen. */
  const take = (vkey: Buffer, value: Uint8Array): boolean => {
    const mod = visibility.check(vkey);
    if (mod < 0) return true;
    if (items.length === limit) {
      more = true;
      return false;
    }
    items.push(scannedKv(vkey, value, mod));
    return true;
  };
  const chunkSize = Math.min(SCAN_CHUNK, limit + 1);
  if (keysOnly) {
    const iterator = db.keys(scanOptions(bounds));
    try {
      outer: for (;;) {
        const chunk = await iterator.nextv(chunkSize);
        if (chunk.length === 0) break;
        for (const vkey of chunk) if (!take(vkey, EMPTY_VALUE)) break outer;
      }
    } finally {
      await iterator.close();
    }
  } else {
    const iterator = db.iterator(scanOptions(bounds));
    try {
      outer: for (;;) {
        const chunk = await iterator.nextv(chunkSize);
        if (chunk.length === 0) break;
        for (const [vkey, value] of chunk) if (!take(vkey, value)) break outer;
      }
    } finally {
      await iterator.close();
    }
  }
  return { items, more };
}

/** The number of live keys of `bounds` at revision `rev` (keys only; values are not read). */
export async function countAt(db: LevelDb, bounds: VersionBounds, rev: bigint): Promise<number> {
  const visibility = new Visibility(rev);
  let count = 0;
  const iterator = db.keys(scanOptions(bounds));
  try {
    for (;;) {
      const chunk = await iterator.nextv(SCAN_CHUNK * 4);
      if (chunk.length === 0) break;
      for (const vkey of chunk) if (visibility.check(vkey) >= 0) count++;
    }
  } finally {
    await iterator.close();
  }
  return count;
}

/** What one range chunk reads. */
export interface RangeChunkOptions {
  /** Most items (Infinity: all). */
  readonly limit: number;
  readonly keysOnly: boolean;
  readonly countOnly: boolean;
}

/** Where a continued range read resumes. */
export interface RangeResume {
  /** The last key already returned. */
  readonly after: string;
  /** Live keys after `after` at the read's revision, when the continue token carried it. */
  readonly remaining: number | undefined;
}

/**
 * One chunk of a (possibly paged) range at `rev`, resuming after `resume.after` when continuing.
 * With a limit and more keys left, a continue token is sealed carrying how many live keys follow:
 * counted keys-only on a chunk that does not know it, else what the previous chunk left minus
 * what this one returned (the data at `rev` never changes), so paging a span reads it once.
 */
export async function rangeAt(
  db: LevelDb,
  tokens: ContinueTokens,
  span: KeySpan,
  rev: bigint,
  resume: RangeResume | undefined,
  options: RangeChunkOptions,
): Promise<RangeResult> {
  const bounds = spanBounds(span, resume?.after);
  if (bounds === undefined) return { items: [], revision: rev, more: false, count: 0 };
  const known = resume?.remaining;
  if (options.countOnly) {
    return { items: [], revision: rev, more: false, count: known ?? (await countAt(db, bounds, rev)) };
  }
  const { items, more } = await scanAt(db, bounds, rev, options.limit, options.keysOnly);
  const last = items[items.length - 1];
  if (!more || last === undefined) return { items, revision: rev, more: false, count: items.length };
  let remaining: number;
  if (known !== undefined && known >= items.length) {
    remaining = known - items.length;
  } else {
    const rest = spanBounds(span, last.key);
    remaining = rest === undefined ? 0 : await countAt(db, rest, rev);
  }
  const token = tokens.seal(span, { revision: rev, lastKey: last.key, remaining });
  return { items, revision: rev, more: true, count: items.length + remaining, continue: token };
}
