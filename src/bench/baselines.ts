/**
 * The raw stores under Capstan, driven with the same shapes as the API scenarios (concurrent
 * writes of one value size, point reads, a full-prefix read), so that API figures can be given
 * as "Capstan ÷ raw store": how close the server gets to the limit of the store under it.
 *
 * - raw classic-level with `sync: true` on every write, as the embedded log's group commit
 *   writes; besides one put per writer, a synced batch as large as the number of writers (the
 *   ideal group commit, the real ceiling for concurrent writers);
 * - raw etcd through `etcd3`, on a local etcd the caller starts (`tools/etcd-local.ts`).
 *
 * The storage benchmark (`tools/bench-storage.ts`) uses these same functions.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { Etcd3 } from 'etcd3';
import { closedLoop, type LoopBudget, type LoopResult } from './load.js';
import { msSince } from './stats.js';

/** The key of object `i` in the raw shapes (the same layout as Capstan's `/registry` keys). */
export function rawKey(prefix: string, i: number): string {
  return `${prefix}cm-${String(i).padStart(8, '0')}`;
}

/** A full-prefix read: how long it took and how much came back. */
export interface RangeFigures {
  readonly ms: number;
  readonly count: number;
  readonly bytes: number;
}

/** One raw store, reduced to the four shapes the baselines need. */
export interface RawSubject {
  /** Report name, e.g. `raw classic-level (sync)`. */
  readonly name: string;
  put(key: string, value: Uint8Array): Promise<void>;
  get(key: string): Promise<Uint8Array | undefined>;
  /** Writes `count` keys `rawKey(prefix, 0..count-1)` as fast as the store takes them. */
  fill(prefix: string, count: number, value: Uint8Array): Promise<void>;
  /** Reads every key under `prefix`. */
  range(prefix: string): Promise<RangeFigures>;
  close(): Promise<void>;
}

/** Raw classic-level in a temporary directory (removed on close); every write synced. */
export async function openRawLevel(): Promise<
  RawSubject & { readonly db: ClassicLevel<string, Uint8Array> }
> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-level-'));
  const db = new ClassicLevel<string, Uint8Array>(dir, { valueEncoding: 'view' });
  await db.open();
  const sync = { sync: true } as const;
  return {
    name: 'raw classic-level (sync)',
    db,
    put: (key, value) => db.put(key, value, sync),
    get: (key) => db.get(key),
    async fill(prefix, count, value) {
      for (let i = 0; i < count; i += 1000) {
        const ops = [];
        for (let j = i; j < Math.min(count, i + 1000); j++)
          ops.push({ type: 'put' as const, key: rawKey(prefix, j), value });
        await db.batch(ops, sync);
      }
    },
    async range(prefix) {
      const t = process.hrtime.bigint();
      let count = 0;
      let bytes = 0;
      // The byte after '/' ends the prefix span, as the stores' prefix ranges do.
      for await (const [k, v] of db.iterator({ gte: prefix, lt: prefix.slice(0, -1) + '0' })) {
        count++;
        bytes += k.length + v.byteLength;
      }
      return { ms: msSince(t), count, bytes };
    },
    async close() {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Raw etcd through an `etcd3` client the caller owns (close() does not close it). */
export function rawEtcd(client: Etcd3): RawSubject {
  return {
    name: 'raw etcd3',
    async put(key, value) {
      await client
        .put(key)
        .value(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
        .exec();
    },
    async get(key) {
      return (await client.get(key).buffer()) ?? undefined;
    },
    async fill(prefix, count, value) {
      const buf = Buffer.from(value);
      let next = 0;
      await Promise.all(
        Array.from({ length: 64 }, async () => {
          while (next < count) await client.put(rawKey(prefix, next++)).value(buf).exec();
        }),
      );
    },
    async range(prefix) {
      // Pages of 1,000 at the first page's revision, as the etcd backend reads: one response
      // for everything would pass gRPC's 4 MiB message limit at a few thousand 1 KiB values.
      const t = process.hrtime.bigint();
      const end = Buffer.from(
        prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1),
      );
      let key = Buffer.from(prefix);
      let revision: string | undefined;
      let count = 0;
      let bytes = 0;
      for (;;) {
        const res = await client.kv.range({
          key,
          range_end: end,
          limit: 1000,
          ...(revision === undefined ? {} : { revision }),
        });
        revision ??= res.header.revision;
        for (const kv of res.kvs) {
          count++;
          bytes += kv.key.length + kv.value.length;
        }
        const last = res.kvs[res.kvs.length - 1];
        if (!res.more || last === undefined) break;
        key = Buffer.concat([last.key, Buffer.from([0])]);
      }
      return { ms: msSince(t), count, bytes };
    },
    close: async () => undefined,
  };
}

/** `writers` concurrent writers putting fresh keys under `prefix` until the budget runs out. */
export function rawWrites(
  subject: RawSubject,
  prefix: string,
  writers: number,
  budget: LoopBudget,
  value: Uint8Array,
): Promise<LoopResult> {
  return closedLoop(writers, budget, (n) => subject.put(rawKey(prefix, n), value));
}

/**
 * One loop writing synced classic-level batches of `size` fresh keys: the ideal group commit
 * for `size` concurrent writers. `opsPerSec` counts keys, not batches; latency is per batch.
 */
export async function rawLevelBatchWrites(
  db: ClassicLevel<string, Uint8Array>,
  prefix: string,
  size: number,
  budget: LoopBudget,
  value: Uint8Array,
): Promise<LoopResult> {
  let n = 0;
  const r = await closedLoop(1, budget, async () => {
    const ops = [];
    for (let i = 0; i < size; i++) ops.push({ type: 'put' as const, key: rawKey(prefix, n++), value });
    await db.batch(ops, { sync: true });
  });
  return { ...r, opsPerSec: r.opsPerSec * size };
}

/** `readers` concurrent readers getting random keys among `count` filled ones. */
export function rawGets(
  subject: RawSubject,
  prefix: string,
  count: number,
  readers: number,
  budget: LoopBudget,
): Promise<LoopResult> {
  return closedLoop(readers, budget, async (n) => {
    // A multiplicative hash spreads reads without a random generator on the measured path.
    const v = await subject.get(rawKey(prefix, (Math.imul(n, 2654435761) >>> 0) % count));
    if (v === undefined) throw new Error(`${subject.name}: key ${n} missing`);
  });
}
