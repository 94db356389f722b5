/**
 * `cold`: the first requests a server answers right after a long write history, against the
 * same requests once warm. A namespace gets N ConfigMaps, then updates until H events were
 * written (issue 16: 10,000 objects, 100,000 events). Then each probe runs once cold and
 * `listRepeats` times warm (median):
 *
 * - LIST with resourceVersion unset, with `resourceVersion=0`, paged with `limit=500`, and 10
 *   lists at once (RV=0);
 * - a watch from the last write's resourceVersion: the time from opening it to the event of a
 *   write made once it answered.
 *
 * "Cold" is a restart before each probe when the bench started the server (a cache that fills on
 * first use is empty again, one filled at boot is not); for any other server it is first use
 * after the history, each probe in turn, without a restart (the row says so).
 */
import { count, createNamespace, deleteNamespace, mib, populate, type ScenarioContext } from '../context.js';
import { closedLoop } from '../load.js';
import { configMapBodies, JSON_TYPE, updateTarget } from '../objects.js';
import { readProc } from '../proc.js';
import type { Row } from '../report.js';
import { fmt, median, msSince } from '../stats.js';
import { timedList } from './list.js';

const RV = /"resourceVersion":"(\d+)"/;
/** How long the watch probe waits for its event. */
const WATCH_TIMEOUT_MS = 60_000;

/** A probe: one timed first request (ms). */
interface Probe {
  readonly label: string;
  run(): Promise<number>;
}

/** Unconditional updates (PUT without a resourceVersion) of `cm-0 .. cm-<objects-1>` in turn. */
async function updates(ctx: ScenarioContext, path: string, objects: number, n: number): Promise<void> {
  const bodies = configMapBodies(JSON_TYPE, ctx.sizes.objectSize);
  await closedLoop(32, { maxOps: n }, async (k) => {
    const { index, generation } = updateTarget(k, objects);
    const name = `cm-${index}`;
    await ctx.client.expect('PUT', `${path}/${name}`, 200, {
      body: bodies.body(name, generation),
      discardBody: true,
    });
    if ((k + 1) % 10_000 === 0) ctx.progress(`  updated ${count(k + 1)} times`);
  });
}

/** Opens a watch from `rv`, then writes `name` and resolves with the ms until its event arrived. */
async function watchProbe(ctx: ScenarioContext, path: string, rv: string, name: string): Promise<number> {
  const bodies = configMapBodies(JSON_TYPE, ctx.sizes.objectSize);
  const marker = `"name":"${name}"`;
  let seen: (() => void) | undefined;
  const arrived = new Promise<void>((resolve) => (seen = resolve));
  let text = '';
  const t = process.hrtime.bigint();
  const stream = ctx.client.stream(`${path}?watch=true&resourceVersion=${rv}`, (chunk) => {
    text = (text + chunk.toString('latin1')).slice(-4 * marker.length - 65536);
    if (text.includes(marker)) seen?.();
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const status = await stream.status;
    if (status !== 200) throw new Error(`the cold watch answered HTTP ${status}`);
    await ctx.client.expect('POST', path, 201, { body: bodies.body(name), discardBody: true });
    await Promise.race([
      arrived,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no watch event within ${WATCH_TIMEOUT_MS / 1000} s`)),
          WATCH_TIMEOUT_MS,
        );
      }),
    ]);
    return msSince(t);
  } finally {
    clearTimeout(timer);
    stream.close();
  }
}

/** Builds the history, then times every probe cold and warm. */
export async function coldScenario(ctx: ScenarioContext): Promise<Row[]> {
  const objects = ctx.sizes.coldObjects;
  const history = Math.max(ctx.sizes.coldHistory, objects);
  const ns = await createNamespace(ctx.client, 'cold');
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  try {
    ctx.progress(`cold: ${count(objects)} objects, ${count(history)} events of history`);
    await populate(ctx, ns, 'cm-', 0, objects);
    await updates(ctx, path, objects, history - objects);
    // A create, so that it is surely a write: an update that leaves cm-0 as it was would be a
    // no-op answered with cm-0's older resourceVersion, and the watch probes would replay the
    // history since then instead of timing one event.
    const last = await ctx.client.expect('POST', path, 201, {
      body: configMapBodies(JSON_TYPE, ctx.sizes.objectSize).body('history-end'),
    });
    const rv = RV.exec(last.body.toString('utf8'))?.[1] ?? '0';
    let probeNo = 0;
    const list = (query: string, paged: boolean) => async (): Promise<number> =>
      (await timedList(ctx, path, query, paged)).ms;
    const probes: Probe[] = [
      { label: 'RV unset', run: list('', false) },
      { label: 'RV=0', run: list('resourceVersion=0', false) },
      { label: 'limit=500 pages', run: list('limit=500', true) },
      {
        label: '10 lists at once, RV=0',
        run: async () => {
          const t = process.hrtime.bigint();
          await Promise.all(
            Array.from({ length: 10 }, () => timedList(ctx, path, 'resourceVersion=0', false)),
          );
          return msSince(t);
        },
      },
      { label: 'watch, first event', run: () => watchProbe(ctx, path, rv, `probe-${probeNo++}`) },
    ];
    const restart = ctx.restart;
    const cold = new Map<string, number>();
    let restartMs = Number.NaN;
    for (const p of probes) {
      if (restart !== undefined) {
        const t = process.hrtime.bigint();
        await restart();
        restartMs = msSince(t);
      }
      await ctx.client.connectAll();
      cold.set(p.label, await p.run());
      ctx.progress(`  cold ${p.label}: ${fmt(cold.get(p.label) ?? NaN)} ms`);
    }
    const rss = ctx.serverPid === undefined ? undefined : readProc(ctx.serverPid);
    const rows: Row[] = [];
    const what = `${count(objects)} objects after ${count(history)} events`;
    const note =
      restart === undefined
        ? 'cold = first use after the history (the bench did not start this server)'
        : undefined;
    for (const p of probes) {
      const warm: number[] = [];
      for (let i = 0; i < ctx.sizes.listRepeats; i++) warm.push(await p.run());
      const warmMs = median(warm);
      rows.push({
        scenario: 'cold',
        case: `${what}, ${p.label}`,
        subject: ctx.subject,
        figures: { 'cold ms': cold.get(p.label) ?? NaN, 'warm ms': warmMs },
        ...(note === undefined ? {} : { note }),
      });
      ctx.progress(`  warm ${p.label}: ${fmt(warmMs)} ms`);
    }
    if (rss !== undefined || restart !== undefined)
      rows.push({
        scenario: 'cold',
        case: what,
        subject: ctx.subject,
        figures: {
          ...(rss === undefined ? {} : { 'RSS MiB': mib(rss.rssBytes) }),
          ...(restart === undefined ? {} : { 'restart ms': restartMs }),
        },
      });
    return rows;
  } finally {
    await deleteNamespace(ctx.client, ns);
  }
}
