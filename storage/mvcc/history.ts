/**
 * Watch history from disk: the events of a revision interval, for watchers that start in the
 * past or fell behind the in-memory tail.
 *
 * The log records are read in revision order and filtered by key; then the values of the
 * matching events (and their `prevKv`) are fetched with one `getMany`. Records still in
 * memory are taken from the recent log instead.
 */
import type { KeyValue, WatchEvent } from '../interface.js';
import {
  EMPTY_VALUE,
  RECORD_PUT,
  decodeLogRecord,
  logKey,
  logKeyRevision,
  logRecordKey,
  versionKey,
  type LogRecord,
} from './codec.js';
import { scanOptions, type LevelDb } from './level.js';
import type { RecentLog } from './recent-log.js';

/** Log records read per `nextv()` while replaying. */
const HISTORY_CHUNK = 512;

/** Events read from disk, and where to continue. */
export interface HistoryChunk {
  readonly events: WatchEvent[];
  /** The first revision not examined (resume here). */
  readonly next: bigint;
}

/** Thrown when a record or version that must exist is missing (the caller checks compaction). */
export class MissingHistoryError extends Error {}

/**
 * Events with revision in `[from, to]` whose key matches, at most `maxEvents` of them.
 * @throws MissingHistoryError when history is missing (compacted meanwhile, or damaged)
 */
export async function readHistory(
  db: LevelDb,
  recent: RecentLog,
  from: bigint,
  to: bigint,
  matches: (key: string) => boolean,
  maxEvents: number,
): Promise<HistoryChunk> {
  const matched: { rev: bigint; record: LogRecord }[] = [];
  let next = from;
  const iterator = db.iterator(scanOptions({ gte: logKey(from), lte: logKey(to) }));
  try {
    outer: for (;;) {
      const chunk = await iterator.nextv(HISTORY_CHUNK);
      if (chunk.length === 0) break;
      for (const [rkey, value] of chunk) {
        const rev = logKeyRevision(rkey);
        if (rev !== next) throw new MissingHistoryError(`log record ${next} is missing`);
        next = rev + 1n;
        if (!matches(logRecordKey(value))) continue;
        matched.push({ rev, record: decodeLogRecord(value) });
        if (matched.length >= maxEvents) break outer;
      }
    }
  } finally {
    await iterator.close();
  }
  if (matched.length < maxEvents && next <= to)
    throw new MissingHistoryError(`log records ${next}..${to} are missing`);
  return { events: await buildEvents(db, recent, matched), next };
}

async function buildEvents(
  db: LevelDb,
  recent: RecentLog,
  matched: readonly { rev: bigint; record: LogRecord }[],
): Promise<WatchEvent[]> {
  const events: (WatchEvent | undefined)[] = new Array<WatchEvent | undefined>(matched.length);
  // Two value slots per event: its own value (puts) and its prevKv's value.
  const keys: Buffer[] = [];
  const slots: number[] = [];
  for (let i = 0; i < matched.length; i++) {
    const { rev, record } = matched[i] as { rev: bigint; record: LogRecord };
    const cached = recent.get(rev)?.event;
    if (cached !== undefined) {
      events[i] = cached;
      continue;
    }
    if (record.type === RECORD_PUT) {
      keys.push(versionKey(record.key, rev, record.createRev, record.lease));
      slots.push(i * 2);
    }
    if (record.prevModRev !== 0n) {
      keys.push(versionKey(record.key, record.prevModRev, record.prevCreateRev, record.prevLease));
      slots.push(i * 2 + 1);
    }
  }
  const values: (Buffer | undefined)[] = new Array<Buffer | undefined>(matched.length * 2);
  if (keys.length > 0) {
    const fetched = await db.getMany(keys);
    for (let j = 0; j < keys.length; j++) {
      const value = fetched[j];
      if (value === undefined) throw new MissingHistoryError('a version named by the log is missing');
      values[slots[j] as number] = value;
    }
  }
  return matched.map(
    ({ rev, record }, i) => events[i] ?? eventOf(rev, record, values[i * 2], values[i * 2 + 1]),
  );
}

function eventOf(
  rev: bigint,
  record: LogRecord,
  value: Buffer | undefined,
  prevValue: Buffer | undefined,
): WatchEvent {
  const prevKv: KeyValue | undefined =
    record.prevModRev === 0n
      ? undefined
      : {
          key: record.key,
          value: prevValue ?? EMPTY_VALUE,
          createRevision: record.prevCreateRev,
          modRevision: record.prevModRev,
          lease: record.prevLease,
        };
  if (record.type === RECORD_PUT) {
    const kv: KeyValue = {
      key: record.key,
      value: value ?? EMPTY_VALUE,
      createRevision: record.createRev,
      modRevision: rev,
      lease: record.lease,
    };
    return { type: 'put', revision: rev, kv, prevKv };
  }
  if (prevKv === undefined) throw new MissingHistoryError(`delete at ${rev} names no previous version`);
  return { type: 'delete', revision: rev, kv: tombstoneKv(record.key, rev), prevKv };
}

/** The `kv` of a delete event: the key, an empty value, and the delete's revision. */
export function tombstoneKv(key: string, rev: bigint): KeyValue {
  return { key, value: EMPTY_VALUE, createRevision: 0n, modRevision: rev, lease: 0n };
}
