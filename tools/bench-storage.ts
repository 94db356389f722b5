/**
 * Storage benchmarks: the embedded MVCC log and the etcd backend side by side with the raw stores
 * under them, measured in one run so every figure can be read as a ratio.
 *
 *   npm run build && node dist/tools/bench-storage.js [--quick] [--no-etcd] [--out FILE.md] [--json FILE]
 *
 * Scenarios (values of 1 KiB):
 * - writes with 1, 16 and 128 concurrent writers for a fixed time: the embedded log (creates, each
 *   acknowledged only when synced) against raw classic-level `put` with `sync: true` from the same
 *   number of writers, and against raw classic-level synced batches of the same size (the ideal
 *   group commit); the etcd backend against raw etcd3 `put`s and against the same guarded create
 *   transaction sent straight through etcd3;
 * - range of 10,000 and 100,000 keys at the current revision against raw classic-level iteration;
 * - watch replay of 100,000 events from the first revision;
 * - restart (close and reopen) of an embedded store holding 100,000 keys.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { ClassicLevel } from 'classic-level';
import { Etcd3 } from 'etcd3';
import type { Store } from '../storage/interface.js';
import { openLevelStore } from '../storage/mvcc/index.js';
import { openEtcdStore } from '../storage/etcd/index.js';
import { startEtcd } from './etcd-local.js';
import { rawLevelBatchWrites } from '../src/bench/baselines.js';
import { closedLoop } from '../src/bench/load.js';
import { fmt, msSince, ratePerSecond } from '../src/bench/stats.js';

interface Args {
  quick: boolean;
  etcd: boolean;
  out: string | undefined;
  json: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { quick: false, etcd: true, out: undefined, json: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') args.quick = true;
    else if (a === '--no-etcd') args.etcd = false;
    else if (a === '--out') args.out = argv[++i];
    else if (a === '--json') args.json = argv[++i];
    else throw new Error(`unknown argument ${String(a)}`);
  }
  return args;
}

const VALUE = new Uint8Array(1024).fill(0x61);

/** One measured row of the report. */
interface Row {
  scenario: string;
  subject: string;
  opsPerSec?: number;
  p50Ms?: number;
  p99Ms?: number;
  ms?: number;
  ratio?: number;
  ratioTo?: string;
}

/** The shared closed loop, reduced to the figures this report shows. */
async function loop(
  writers: number,
  durationMs: number,
  op: (n: number) => Promise<unknown>,
): Promise<{ opsPerSec: number; p50: number; p99: number }> {
  const r = await closedLoop(writers, { durationMs }, op);
  return { opsPerSec: r.opsPerSec, p50: r.latency.p50, p99: r.latency.p99 };
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function key(i: number): string {
  return `/registry/configmaps/bench/cm-${String(i).padStart(8, '0')}`;
}

async function benchEmbeddedWrites(
  rows: Row[],
  concurrency: readonly number[],
  durationMs: number,
): Promise<void> {
  for (const c of concurrency) {
    const raw = await withTempDir(async (dir) => {
      const db = new ClassicLevel<string, Uint8Array>(dir, { valueEncoding: 'view' });
      await db.open();
      const r = await loop(c, durationMs, (n) => db.put(key(n), VALUE, { sync: true }));
      await db.close();
      return r;
    });
    const rawBatch = await withTempDir(async (dir) => {
      const db = new ClassicLevel<string, Uint8Array>(dir, { valueEncoding: 'view' });
      await db.open();
      const r = await rawLevelBatchWrites(db, '/registry/configmaps/bench/', c, { durationMs }, VALUE);
      await db.close();
      return { opsPerSec: r.opsPerSec };
    });
    const ours = await withTempDir(async (dir) => {
      const store = await openLevelStore(dir);
      const r = await loop(c, durationMs, (n) => store.create(key(n), VALUE));
      await store.close();
      return r;
    });
    const best = Math.max(raw.opsPerSec, rawBatch.opsPerSec);
    const bestName = raw.opsPerSec >= rawBatch.opsPerSec ? 'raw put' : 'raw batch';
    rows.push(
      {
        scenario: `writes, ${c} writers`,
        subject: 'raw classic-level put (sync)',
        opsPerSec: raw.opsPerSec,
        p50Ms: raw.p50,
        p99Ms: raw.p99,
      },
      {
        scenario: `writes, ${c} writers`,
        subject: `raw classic-level batch of ${c} (sync)`,
        opsPerSec: rawBatch.opsPerSec,
      },
      {
        scenario: `writes, ${c} writers`,
        subject: 'Capstan embedded log create',
        opsPerSec: ours.opsPerSec,
        p50Ms: ours.p50,
        p99Ms: ours.p99,
        ratio: ours.opsPerSec / best,
        ratioTo: bestName,
      },
    );
    progress(
      `writes ${c}: raw ${fmt(raw.opsPerSec)}/s, raw batch ${fmt(rawBatch.opsPerSec)}/s, ours ${fmt(ours.opsPerSec)}/s`,
    );
  }
}

/** Fills a store with `count` keys quickly (concurrent creates). */
async function fill(store: Store, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 256 }, async () => {
      while (next < count) await store.create(key(next++), VALUE);
    }),
  );
}

async function benchRangeReplayRestart(rows: Row[], sizes: readonly number[]): Promise<void> {
  for (const size of sizes) {
    await withTempDir(async (dir) => {
      const rawDir = join(dir, 'raw');
      const db = new ClassicLevel<string, Uint8Array>(rawDir, { valueEncoding: 'view' });
      await db.open();
      for (let i = 0; i < size; i += 1000) {
        const ops = [];
        for (let j = i; j < Math.min(size, i + 1000); j++)
          ops.push({ type: 'put' as const, key: key(j), value: VALUE });
        await db.batch(ops);
      }
      let t = process.hrtime.bigint();
      let seen = 0;
      for await (const [, v] of db.iterator({ gte: '/registry/configmaps/', lt: '/registry/configmaps0' }))
        seen += v.byteLength > 0 ? 1 : 0;
      const rawMs = msSince(t);
      await db.close();
      if (seen !== size) throw new Error(`raw iteration saw ${seen} of ${size}`);

      const storeDir = join(dir, 'store');
      let store = await openLevelStore(storeDir);
      await fill(store, size);
      t = process.hrtime.bigint();
      const result = await store.range({ prefix: '/registry/configmaps/' });
      const oursMs = msSince(t);
      if (result.items.length !== size) throw new Error(`range returned ${result.items.length} of ${size}`);
      rows.push(
        {
          scenario: `range ${size.toLocaleString('en-US')} keys`,
          subject: 'raw classic-level iterate',
          ms: rawMs,
        },
        {
          scenario: `range ${size.toLocaleString('en-US')} keys`,
          subject: 'Capstan embedded range',
          ms: oursMs,
          ratio: oursMs / rawMs,
          ratioTo: 'raw iterate (time)',
        },
      );
      progress(`range ${size}: raw ${fmt(rawMs)} ms, ours ${fmt(oursMs)} ms`);

      if (size >= 100_000) {
        const first = (await store.currentRevision()) - BigInt(size) + 1n;
        t = process.hrtime.bigint();
        const watch = store.watch({ prefix: '/registry/configmaps/' }, { fromRevision: first });
        let events = 0;
        for await (const ev of watch) {
          if (ev.type !== 'progress' && ++events === size) break;
        }
        watch.close();
        const replayMs = msSince(t);
        rows.push({
          scenario: `watch replay ${size.toLocaleString('en-US')} events`,
          subject: 'Capstan embedded watch',
          ms: replayMs,
          opsPerSec: ratePerSecond(size, replayMs),
        });
        progress(`replay ${size}: ${fmt(replayMs)} ms`);

        await store.close();
        t = process.hrtime.bigint();
        store = await openLevelStore(storeDir);
        await store.get(key(0));
        const restartMs = msSince(t);
        rows.push({
          scenario: `restart with ${size.toLocaleString('en-US')} keys`,
          subject: 'Capstan embedded open + first get',
          ms: restartMs,
        });
        progress(`restart ${size}: ${fmt(restartMs)} ms`);
      }
      await store.close();
    });
  }
}

async function benchEtcdWrites(
  rows: Row[],
  concurrency: readonly number[],
  durationMs: number,
): Promise<void> {
  const etcd = await startEtcd();
  try {
    const raw = new Etcd3({ hosts: etcd.endpoints });
    const store = await openEtcdStore({ endpoints: etcd.endpoints });
    // Warm both clients' connections and etcd's first allocations before anything is timed.
    await loop(16, 1000, (n) =>
      raw
        .put(`/warm/raw/${key(n)}`)
        .value(Buffer.from(VALUE))
        .exec(),
    );
    await loop(16, 1000, (n) => store.create(`/warm/ours/${key(n)}`, VALUE));
    let round = 0;
    for (const c of concurrency) {
      round++;
      const rawResult = await loop(c, durationMs, (n) =>
        raw
          .put(`/raw/${round}/${key(n)}`)
          .value(Buffer.from(VALUE))
          .exec(),
      );
      const ours = await loop(c, durationMs, (n) => store.create(`/ours/${round}/${key(n)}`, VALUE));
      // The same shape as a create: a put guarded by "the key does not exist", straight through etcd3.
      // Measured after ours, so any slowdown of a growing etcd counts against the baseline.
      const rawCreate = await loop(c, durationMs, (n) => {
        const k = `/rawtxn/${round}/${key(n)}`;
        return raw
          .if(k, 'Create', '==', 0)
          .then(raw.put(k).value(Buffer.from(VALUE)))
          .commit();
      });
      rows.push(
        {
          scenario: `etcd writes, ${c} writers`,
          subject: 'raw etcd3 put',
          opsPerSec: rawResult.opsPerSec,
          p50Ms: rawResult.p50,
          p99Ms: rawResult.p99,
        },
        {
          scenario: `etcd writes, ${c} writers`,
          subject: 'Capstan etcd backend create',
          opsPerSec: ours.opsPerSec,
          p50Ms: ours.p50,
          p99Ms: ours.p99,
          ratio: ours.opsPerSec / rawResult.opsPerSec,
          ratioTo: 'raw etcd3 put',
        },
        {
          scenario: `etcd writes, ${c} writers`,
          subject: 'raw etcd3 create txn (put if absent)',
          opsPerSec: rawCreate.opsPerSec,
          p50Ms: rawCreate.p50,
          p99Ms: rawCreate.p99,
        },
        {
          scenario: `etcd writes, ${c} writers`,
          subject: 'Capstan etcd backend create',
          opsPerSec: ours.opsPerSec,
          ratio: ours.opsPerSec / rawCreate.opsPerSec,
          ratioTo: 'raw etcd3 create txn',
        },
      );
      progress(
        `etcd writes ${c}: raw put ${fmt(rawResult.opsPerSec)}/s, raw create txn ${fmt(rawCreate.opsPerSec)}/s, ours ${fmt(ours.opsPerSec)}/s`,
      );
    }
    await store.close();
    raw.close();
  } finally {
    await etcd.stop();
  }
}

function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}

function report(rows: readonly Row[], args: Args): string {
  const lines = [
    '# Storage benchmark',
    '',
    `Command: \`node dist/tools/bench-storage.js${args.quick ? ' --quick' : ''}${args.etcd ? '' : ' --no-etcd'}\` on ${new Date().toISOString()}, Node ${process.version}.`,
    'Ratios compare figures measured in this one run (ops/s: ours ÷ raw, higher is better; time: ours ÷ raw, lower is better).',
    '',
    '| scenario | subject | ops/s | p50 ms | p99 ms | time ms | ratio |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const cell = (n: number | undefined): string => (n === undefined ? '' : fmt(n));
    const ratio = r.ratio === undefined ? '' : `${fmt(r.ratio)} × ${r.ratioTo ?? ''}`;
    lines.push(
      `| ${r.scenario} | ${r.subject} | ${cell(r.opsPerSec)} | ${cell(r.p50Ms)} | ${cell(r.p99Ms)} | ${cell(r.ms)} | ${ratio} |`,
    );
  }
  return lines.join('\n') + '\n';
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const durationMs = args.quick ? 1000 : 3000;
  const rows: Row[] = [];
  await benchEmbeddedWrites(rows, [1, 16, 128], durationMs);
  await benchRangeReplayRestart(rows, args.quick ? [10_000] : [10_000, 100_000]);
  if (args.etcd) await benchEtcdWrites(rows, [1, 16, 128], durationMs);
  const md = report(rows, args);
  process.stdout.write(md);
  if (args.out !== undefined) writeFileSync(args.out, md);
  if (args.json !== undefined) writeFileSync(args.json, JSON.stringify(rows, null, 2));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
