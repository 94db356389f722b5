/**
 * Binary layout of the embedded revision log in one abstract-level keyspace (keys and values
 * are Buffers; no JSON anywhere). One byte prefixes separate four families:
 *
 * | key                                                        | value                         |
 * |------------------------------------------------------------|-------------------------------|
 * | `k` esc(key) 00 01 ~modRev(8) createRev(8) lease(8)        | the value (empty: tombstone)  |
 * | `r` rev(8)                                                 | log record (see below)        |
 * | `i` key(utf8)                                              | createRev modRev lease (8 ea.)|
 * | `l` leaseId(8)                                             | ttlSeconds(u32) expiresAt(f64)|
 * | `m` name                                                   | meta (format, secret, ...)    |
 *
 * **Versions (`k`)** hold every retained version of every key, sorted by key and then newest
 * first (the revision is stored inverted). A read at revision R takes, per key, the first
 * version with modRev ≤ R; a version with `createRev = 0` is a tombstone (the key was deleted
 * at modRev). The header lives in the LevelDB key, so keys-only iteration (count, keysOnly,
 * restart rebuild) never reads values. Versions are never overwritten, so an old read never
 * chases pointers: compaction only deletes versions no retained revision can see.
 *
 * **Head index (`i`)**: one small entry per live key naming its newest version, written in the
 * same batch as the version. It duplicates what the newest `k` entry says, but restart reads
 * only these few bytes per key: LevelDB stores keys and values in the same blocks, so even a
 * keys-only scan of `k` would read every value from disk.
 *
 * **Log records (`r`)** — one per revision, contiguous — drive watch replay and compaction:
 * `type(1) createRev(8) lease(8) prevModRev(8) prevCreateRev(8) prevLease(8) key(utf8)`.
 * The `prev*` fields name the key's version before this write (all zero when it did not
 * exist), which is both the watch event's `prevKv` and the version this write supersedes.
 *
 * **Key escaping.** User keys are UTF-8; a 0x00 byte is written as 00 FF and the key ends with
 * 00 01, so encoded keys sort exactly like the UTF-8 bytes of the user keys (etcd's order)
 * and every version of a key shares the prefix `k esc(key) 00 01`.
 */
import type { KeySpan } from '../interface.js';

/** Key family prefixes (one byte each; see the table above). */
export const PREFIX_VERSION = 0x6b; // 'k'
export const PREFIX_LOG = 0x72; // 'r'
export const PREFIX_HEAD = 0x69; // 'i'
export const PREFIX_LEASE = 0x6c; // 'l'
export const PREFIX_META = 0x6d; // 'm'

/** Bytes after the escaped key in a version key: terminator, ~modRev, createRev, lease. */
export const VERSION_SUFFIX_BYTES = 2 + 8 + 8 + 8;
/** Fixed bytes of a log record before the key. */
const RECORD_HEADER_BYTES = 1 + 8 * 5;

/** Revision of a fresh store, as in etcd: the first write is revision 2 and has the first record. */
export const INITIAL_REVISION = 1n;

/** Log record types. */
export const RECORD_PUT = 1;
export const RECORD_DELETE = 2;

const MAX_U64 = 0xffff_ffff_ffff_ffffn;
const TWO_POW_32 = 0x1_0000_0000;

/** Shared empty value (tombstones, keysOnly reads). Never mutated. */
export const EMPTY_VALUE: Uint8Array = Object.freeze(new Uint8Array(0));

/** Meta keys. The format byte guards against opening a future, incompatible layout. */
export const META_FORMAT = metaKey('format');
/** The continue-token HMAC secret, made at first open. */
export const META_SECRET = metaKey('continue-secret');
/** Revision history was compacted at (reads below fail). */
export const META_COMPACTED = metaKey('compacted');
/** Revision below which compaction has physically deleted what it may (resume point). */
export const META_RECLAIMED = metaKey('reclaimed');
/** Layout version written at first open; opening another version fails. */
export const FORMAT_VERSION = 1;

function metaKey(name: string): Buffer {
  return Buffer.concat([Buffer.of(PREFIX_META), Buffer.from(name, 'latin1')]);
}

/** Reads an unsigned 64-bit big-endian integer; numbers below 2^53 avoid the slow path. */
export function readU64(buf: Buffer, offset: number): bigint {
  const hi = buf.readUInt32BE(offset);
  const lo = buf.readUInt32BE(offset + 4);
  if (hi < 0x20_0000) return hi === 0 && lo === 0 ? 0n : BigInt(hi * TWO_POW_32 + lo);
  return buf.readBigUInt64BE(offset);
}

function readInvertedU64(buf: Buffer, offset: number): bigint {
  const hi = 0xffff_ffff - buf.readUInt32BE(offset);
  if (hi < 0x20_0000) return BigInt(hi * TWO_POW_32 + (0xffff_ffff - buf.readUInt32BE(offset + 4)));
  return MAX_U64 ^ buf.readBigUInt64BE(offset);
}

/** An unsigned 64-bit big-endian integer in 8 fresh bytes. */
export function u64(value: bigint): Buffer {
  const buf = Buffer.allocUnsafe(8);
  buf.writeBigUInt64BE(value);
  return buf;
}

/** The escaped UTF-8 bytes of a key containing U+0000 (rare: the fast paths skip this). */
function escapeSlow(key: string): Buffer {
  const raw = Buffer.from(key, 'utf8');
  const out: number[] = [];
  for (const byte of raw) {
    if (byte === 0) out.push(0, 0xff);
    else out.push(byte);
  }
  return Buffer.from(out);
}

function unescapeSlow(escaped: Buffer): string {
  const out = Buffer.allocUnsafe(escaped.length);
  let n = 0;
  for (let i = 0; i < escaped.length; i++) {
    const byte = escaped[i] as number;
    out[n++] = byte;
    if (byte === 0) i++; // skip the 0xff that follows an escaped zero
  }
  return out.toString('utf8', 0, n);
}

/** Writes `prefix esc(key)` into a fresh buffer with `extra` spare bytes; returns it and the end. */
function keyed(prefix: number, key: string, extra: number): [Buffer, number] {
  if (!key.includes('\u0000')) {
    const n = Buffer.byteLength(key, 'utf8');
    const buf = Buffer.allocUnsafe(1 + n + extra);
    buf[0] = prefix;
    buf.write(key, 1, 'utf8');
    return [buf, 1 + n];
  }
  const escaped = escapeSlow(key);
  const buf = Buffer.allocUnsafe(1 + escaped.length + extra);
  buf[0] = prefix;
  escaped.copy(buf, 1);
  return [buf, 1 + escaped.length];
}

/** The version key of `key` at `modRev`; `createRev = 0n` marks a tombstone. */
export function versionKey(key: string, modRev: bigint, createRev: bigint, lease: bigint): Buffer {
  const [buf, end] = keyed(PREFIX_VERSION, key, VERSION_SUFFIX_BYTES);
  buf[end] = 0;
  buf[end + 1] = 1;
  buf.writeBigUInt64BE(MAX_U64 ^ modRev, end + 2);
  buf.writeBigUInt64BE(createRev, end + 10);
  buf.writeBigUInt64BE(lease, end + 18);
  return buf;
}

/** Lower bound of the versions of `key` visible at revision `rev` (newest ≤ rev first). */
export function versionSeek(key: string, rev: bigint): Buffer {
  const [buf, end] = keyed(PREFIX_VERSION, key, 10);
  buf[end] = 0;
  buf[end + 1] = 1;
  buf.writeBigUInt64BE(MAX_U64 ^ rev, end + 2);
  return buf;
}

/** Bound just past every version of `key`: also the start of every key greater than `key`. */
export function versionsEnd(key: string): Buffer {
  const [buf, end] = keyed(PREFIX_VERSION, key, 2);
  buf[end] = 0;
  buf[end + 1] = 2;
  return buf;
}

/** Start of the versions of `key` and of every key after it. */
function versionsStart(key: string): Buffer {
  const [buf, end] = keyed(PREFIX_VERSION, key, 2);
  buf[end] = 0;
  buf[end + 1] = 1;
  return buf;
}

/** The user key of a version key. */
export function versionUserKey(vkey: Buffer): string {
  const end = vkey.length - VERSION_SUFFIX_BYTES;
  // The terminator's zero is the first zero unless the key itself contains U+0000.
  if (vkey.indexOf(0, 1) === end) return vkey.toString('utf8', 1, end);
  return unescapeSlow(vkey.subarray(1, end));
}

/** The mod revision of a version key. */
export function versionModRev(vkey: Buffer): bigint {
  return readInvertedU64(vkey, vkey.length - 24);
}

/**
 * The mod revision as a number, for hot loops that compare and only sometimes need the bigint.
 * Exact below 2^53 (9·10^15 writes); callers compare with bigints beyond {@link MAX_EXACT}.
 */
export function versionModRevNumber(vkey: Buffer): number {
  const off = vkey.length - 24;
  return (0xffff_ffff - vkey.readUInt32BE(off)) * TWO_POW_32 + (0xffff_ffff - vkey.readUInt32BE(off + 4));
}

/** The create revision as a number (exact below 2^53; zero for tombstones). */
export function versionCreateRevNumber(vkey: Buffer): number {
  const off = vkey.length - 16;
  return vkey.readUInt32BE(off) * TWO_POW_32 + vkey.readUInt32BE(off + 4);
}

/** Revisions up to this compare exactly as numbers. */
export const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/** The create revision of a version key (`0n`: tombstone). */
export function versionCreateRev(vkey: Buffer): bigint {
  return readU64(vkey, vkey.length - 16);
}

/** The lease of a version key (`0n`: none). */
export function versionLease(vkey: Buffer): bigint {
  return readU64(vkey, vkey.length - 8);
}

/** True when the version key marks a deletion (createRev is zero). */
export function versionIsTombstone(vkey: Buffer): boolean {
  const off = vkey.length - 16;
  return vkey.readUInt32BE(off) === 0 && vkey.readUInt32BE(off + 4) === 0;
}

/** True when two version keys belong to the same user key. */
export function sameUserKey(a: Buffer, b: Buffer): boolean {
  const end = a.length - VERSION_SUFFIX_BYTES;
  return a.length === b.length && a.compare(b, 0, end, 0, end) === 0;
}

/** The head-index key of `key` (plain UTF-8: it is only ever looked up whole or scanned). */
export function headKey(key: string): Buffer {
  const n = Buffer.byteLength(key, 'utf8');
  const buf = Buffer.allocUnsafe(1 + n);
  buf[0] = PREFIX_HEAD;
  buf.write(key, 1, 'utf8');
  return buf;
}

/** The head-index value: the key's newest version header. */
export function headValue(createRev: bigint, modRev: bigint, lease: bigint): Buffer {
  const buf = Buffer.allocUnsafe(24);
  buf.writeBigUInt64BE(createRev, 0);
  buf.writeBigUInt64BE(modRev, 8);
  buf.writeBigUInt64BE(lease, 16);
  return buf;
}

/** The log key of revision `rev`: log keys sort by revision. */
export function logKey(rev: bigint): Buffer {
  const buf = Buffer.allocUnsafe(9);
  buf[0] = PREFIX_LOG;
  buf.writeBigUInt64BE(rev, 1);
  return buf;
}

/** The revision a log key names. */
export function logKeyRevision(key: Buffer): bigint {
  return readU64(key, 1);
}

/** A decoded log record (see the module comment). */
export interface LogRecord {
  readonly type: typeof RECORD_PUT | typeof RECORD_DELETE;
  readonly key: string;
  readonly createRev: bigint;
  readonly lease: bigint;
  /** The key's previous live version (`0n`: none). */
  readonly prevModRev: bigint;
  readonly prevCreateRev: bigint;
  readonly prevLease: bigint;
}

/** Encodes a log record (layout in the module comment). */
export function encodeLogRecord(record: LogRecord): Buffer {
  const n = Buffer.byteLength(record.key, 'utf8');
  const buf = Buffer.allocUnsafe(RECORD_HEADER_BYTES + n);
  buf[0] = record.type;
  buf.writeBigUInt64BE(record.createRev, 1);
  buf.writeBigUInt64BE(record.lease, 9);
  buf.writeBigUInt64BE(record.prevModRev, 17);
  buf.writeBigUInt64BE(record.prevCreateRev, 25);
  buf.writeBigUInt64BE(record.prevLease, 33);
  buf.write(record.key, RECORD_HEADER_BYTES, 'utf8');
  return buf;
}

/**
 * Decodes a log record.
 * @throws Error on an unknown record type (a damaged database)
 */
export function decodeLogRecord(buf: Buffer): LogRecord {
  const type = buf[0];
  if (type !== RECORD_PUT && type !== RECORD_DELETE)
    throw new Error(`corrupt log record type ${String(type)}`);
  return {
    type,
    createRev: readU64(buf, 1),
    lease: readU64(buf, 9),
    prevModRev: readU64(buf, 17),
    prevCreateRev: readU64(buf, 25),
    prevLease: readU64(buf, 33),
    key: buf.toString('utf8', RECORD_HEADER_BYTES),
  };
}

/** The key part of a log record, without decoding the rest (watch filtering). */
export function logRecordKey(buf: Buffer): string {
  return buf.toString('utf8', RECORD_HEADER_BYTES);
}

/** The key of lease `id`'s record. */
export function leaseKey(id: bigint): Buffer {
  const buf = Buffer.allocUnsafe(9);
  buf[0] = PREFIX_LEASE;
  buf.writeBigUInt64BE(id, 1);
  return buf;
}

/** A persisted lease. */
export interface LeaseRecord {
  readonly id: bigint;
  readonly ttlSeconds: number;
  /** Absolute expiry, milliseconds since the epoch (survives restarts). */
  readonly expiresAt: number;
}

/** Encodes a lease record's value (the id is in the key). */
export function encodeLease(lease: LeaseRecord): Buffer {
  const buf = Buffer.allocUnsafe(12);
  buf.writeUInt32BE(Math.min(Math.ceil(lease.ttlSeconds), 0xffff_ffff), 0);
  buf.writeDoubleBE(lease.expiresAt, 4);
  return buf;
}

/** Decodes a lease record from its key and value. */
export function decodeLease(key: Buffer, value: Buffer): LeaseRecord {
  return { id: readU64(key, 1), ttlSeconds: value.readUInt32BE(0), expiresAt: value.readDoubleBE(4) };
}

/** The first key after every key that starts with `prefix` (undefined: none, all 0xff). */
function prefixEnd(prefix: Buffer): Buffer | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const byte = prefix[i] as number;
    if (byte !== 0xff) {
      const out = Buffer.from(prefix.subarray(0, i + 1));
      out[i] = byte + 1;
      return out;
    }
  }
  return undefined;
}

/** Encoded bounds `[gte, lt)` over the versions of a span, optionally after `afterKey`. */
export interface VersionBounds {
  readonly gte: Buffer;
  readonly lt: Buffer;
}

/** Bounds of a span's versions, starting after `afterKey` when given; undefined when empty. */
export function spanBounds(span: KeySpan, afterKey?: string): VersionBounds | undefined {
  let gte: Buffer;
  let lt: Buffer;
  if ('prefix' in span) {
    const [start, end] = keyed(PREFIX_VERSION, span.prefix, 0);
    gte = start.subarray(0, end);
    lt = prefixEnd(gte) ?? Buffer.of(PREFIX_VERSION + 1);
  } else {
    gte = versionsStart(span.start);
    lt = versionsStart(span.end);
  }
  if (afterKey !== undefined) {
    const after = versionsEnd(afterKey);
    if (Buffer.compare(after, gte) > 0) gte = after;
  }
  return Buffer.compare(gte, lt) < 0 ? { gte, lt } : undefined;
}

/** Every log record, and every lease record (scanned when opening a store). */
export const ALL_LOG: VersionBounds = { gte: Buffer.of(PREFIX_LOG), lt: Buffer.of(PREFIX_LOG + 1) };
export const ALL_LEASES: VersionBounds = { gte: Buffer.of(PREFIX_LEASE), lt: Buffer.of(PREFIX_LEASE + 1) };
