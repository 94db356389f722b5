/**
 * `watch`: W watchers on the ConfigMaps of one namespace while one writer creates ConfigMaps at R
 * per second. Each watcher timestamps every event it receives; write-to-delivery latency is from
 * the moment the write was sent to the moment a watcher saw its event (so it includes the
 * write itself, as a controller would see it). Also: events per second delivered to all watchers,
 * events not delivered within 10 s of the last write (of W × writes), and the server's CPU time per delivered event.
 *
 * Watchers find the object name in each event line without parsing the JSON: with thousands of
 * watchers the client must stay cheaper than the server it measures.
 */
import { BenchClient, type BenchStream } from '../client.js';
import { createNamespace, deleteNamespace, type ScenarioContext } from '../context.js';
import { closedLoop } from '../load.js';
import { configMapBodies, JSON_TYPE } from '../objects.js';
import { ProcSampler } from '../proc.js';
import type { Row } from '../report.js';
import { fmt, msSince, ratePerSecond, summarize } from '../stats.js';

const MARKER = '"name":"w-';
/** Streams per HTTP/2 connection the watchers open (servers commonly allow 100 to 250). */
const STREAMS_PER_SESSION = 100;

/**
 * Splits a watch stream into lines and calls `onName(seq)` for each event naming `w-<seq>`.
 * Keeps the partial last line between chunks.
 */
export class EventScanner {
  #rest = '';
  readonly #onSeq: (seq: number) => void;

  constructor(onSeq: (seq: number) => void) {
    this.#onSeq = onSeq;
  }

  push(chunk: Buffer): void {
    const text = this.#rest + chunk.toString('latin1');
    let start = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
      const at = text.indexOf(MARKER, start);
      if (at >= 0 && at < nl) {
        const end = text.indexOf('"', at + MARKER.length);
        this.#onSeq(Number(text.slice(at + MARKER.length, end)));
      }
      start = nl + 1;
    }
    this.#rest = text.slice(start);
  }
}

async function oneCase(ctx: ScenarioContext, watchers: number, label: string): Promise<Row> {
  const ns = await createNamespace(ctx.client, 'watch');
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const watchClient = new BenchClient(ctx.creds, Math.ceil(watchers / STREAMS_PER_SESSION));
  const streams: BenchStream[] = [];
  const sent: bigint[] = [];
  const latencies: number[] = [];
  let delivered = 0;
  try {
    const list = await ctx.client.expect('GET', `${path}?limit=1`, 200);
    const rv = /"resourceVersion":"(\d+)"/.exec(list.body.toString('utf8'))?.[1] ?? '0';
    for (let i = 0; i < watchers; i++) {
      const scanner = new EventScanner((seq) => {
        const t = sent[seq];
        if (t === undefined) return;
        delivered++;
        latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
      });
      streams.push(
        watchClient.stream(`${path}?watch=true&resourceVersion=${rv}&allowWatchBookmarks=false`, (c) =>
          scanner.push(c),
        ),
      );
    }
    const statuses = await Promise.all(streams.map((s) => s.status));
    const bad = statuses.find((s) => s !== 200);
    if (bad !== undefined) throw new Error(`a watch answered HTTP ${bad}`);

    const bodies = configMapBodies(JSON_TYPE, ctx.sizes.objectSize);
    const writes = Math.max(1, Math.round((ctx.sizes.writeRate * ctx.sizes.watchDurationMs) / 1000));
    const interval = 1000 / ctx.sizes.writeRate;
    const sampler = new ProcSampler(ctx.serverPid);
    const t0 = process.hrtime.bigint();
    const inflight: Promise<unknown>[] = [];
    for (let seq = 0; seq < writes; seq++) {
      // Open loop: writes go out on schedule whether or not earlier ones finished.
      const due = seq * interval - msSince(t0);
      if (due > 0) await new Promise((r) => setTimeout(r, due));
      sent[seq] = process.hrtime.bigint();
      inflight.push(
        ctx.client.expect('POST', path, 201, { body: bodies.body(`w-${seq}`), discardBody: true }),
      );
    }
    await Promise.all(inflight);
    const expected = writes * watchers;
    const until = Date.now() + 10_000;
    while (delivered < expected && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const elapsed = msSince(t0);
    const proc = sampler.stop();
    const lat = summarize(latencies);
    ctx.progress(
      `  ${watchers} watchers: p50 ${fmt(lat.p50)} ms, p99 ${fmt(lat.p99)} ms, ${delivered}/${expected} events`,
    );
    return {
      scenario: 'watch',
      case: label,
      subject: ctx.subject,
      figures: {
        'p50 ms': lat.p50,
        'p99 ms': lat.p99,
        'events/s': ratePerSecond(delivered, elapsed),
        'undelivered after 10 s': expected - delivered,
        ...(proc === undefined
          ? {}
          : { 'server CPU µs/event': (proc.cpuMs * 1000) / Math.max(1, delivered) }),
      },
    };
  } finally {
    for (const s of streams) s.close();
    watchClient.close();
    await deleteNamespace(ctx.client, ns);
  }
}

/**
 * A burst of writes as a CRUD benchmark leaves behind: `writes` creates and deletes from 32
 * clients in a namespace of its own, as fast as the server takes them.
 */
async function burst(ctx: ScenarioContext, writes: number): Promise<void> {
  const ns = await createNamespace(ctx.client, 'burst');
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const bodies = configMapBodies(JSON_TYPE, ctx.sizes.objectSize);
  try {
    await closedLoop(32, { maxOps: Math.max(1, Math.floor(writes / 2)) }, async (n) => {
      await ctx.client.expect('POST', path, 201, { body: bodies.body(`b-${n}`), discardBody: true });
      await ctx.client.expect('DELETE', `${path}/b-${n}`, [200, 202], { discardBody: true });
    });
  } finally {
    await deleteNamespace(ctx.client, ns);
  }
}

/** Runs one case per watcher count, then (when sized) the case right after a burst of writes. */
export async function watchScenario(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const rate = ctx.sizes.writeRate;
  for (const w of ctx.sizes.watchers) {
    ctx.progress(`watch: ${w} watchers at ${rate} writes/s`);
    rows.push(await oneCase(ctx, w, `${w} watchers, ${rate} writes/s`));
  }
  const w = ctx.sizes.burstWatchers;
  if (w > 0) {
    const writes = ctx.sizes.burstWrites;
    ctx.progress(`watch: a burst of ${writes} writes, then ${w} watchers at ${rate} writes/s`);
    await burst(ctx, writes);
    rows.push(
      await oneCase(ctx, w, `${w} watchers, ${rate} writes/s, right after a burst of ${writes} writes`),
    );
  }
  return rows;
}
