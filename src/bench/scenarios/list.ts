/**
 * `list`: one namespace grown to each size in turn (1,000 / 10,000 / 100,000 ConfigMaps), then at
 * each size: a list with resourceVersion unset (a consistent read), with `resourceVersion=0`
 * (any recent state, the watch cache's answer where there is one), and paged with `limit=500`
 * following `continue` to the end; each the median of a few runs, with MB/s of response body.
 * Then 10 lists at once (RV=0) while the server's RSS is sampled: the rise of its peak over the
 * RSS before, beside the size of one response.
 *
 * Baselines: the same number of values read from the raw stores in one prefix range.
 */
import { createNamespace, count, deleteNamespace, mib, populate, type ScenarioContext } from '../context.js';
import { ProcSampler } from '../proc.js';
import type { Figures, Ratio, Row } from '../report.js';
import { fmt, median, megabytesPerSecond, msSince } from '../stats.js';
import type { RangeFigures } from '../baselines.js';

const CONTINUE = /"continue":"([^"]+)"/;

/** One timed list (all pages); returns ms and body bytes. */
export async function timedList(
  ctx: ScenarioContext,
  path: string,
  query: string,
  paged: boolean,
): Promise<{ ms: number; bytes: number; pages: number }> {
  const t = process.hrtime.bigint();
  let bytes = 0;
  let pages = 0;
  let next = `${path}?${query}`;
  for (;;) {
    const res = await ctx.client.expect('GET', next, 200, { discardBody: true });
    bytes += res.bytes;
    pages++;
    if (!paged) break;
    const token = CONTINUE.exec(res.head.toString('latin1'))?.[1];
    if (token === undefined) break;
    next = `${path}?${query}&continue=${encodeURIComponent(token)}`;
  }
  return { ms: msSince(t), bytes, pages };
}

function listFigures(samples: readonly { ms: number; bytes: number }[]): Figures {
  const ms = median(samples.map((s) => s.ms));
  const bytes = samples[0]?.bytes ?? 0;
  return { 'time ms': ms, 'MB/s': megabytesPerSecond(bytes, ms), 'body MB': bytes / 1e6 };
}

async function rawRange(
  ctx: ScenarioContext,
  size: number,
): Promise<{ level?: RangeFigures; etcd?: RangeFigures }> {
  const value = new Uint8Array(ctx.sizes.objectSize).fill(0x78);
  const prefix = `/bench/list/${Date.now().toString(36)}-${size}/`;
  const out: { level?: RangeFigures; etcd?: RangeFigures } = {};
  for (const which of ['level', 'etcd'] as const) {
    const s = ctx.baselines[which];
    if (s === undefined) continue;
    await s.fill(prefix, size, value);
    const runs: RangeFigures[] = [];
    for (let i = 0; i < ctx.sizes.listRepeats; i++) runs.push(await s.range(prefix));
    out[which] = {
      ms: median(runs.map((r) => r.ms)),
      count: runs[0]?.count ?? 0,
      bytes: runs[0]?.bytes ?? 0,
    };
  }
  return out;
}

/** Runs the list shapes at every size. */
export async function listScenario(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const ns = await createNamespace(ctx.client, 'list');
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  let filled = 0;
  try {
    for (const size of [...ctx.sizes.listSizes].sort((a, b) => a - b)) {
      ctx.progress(`list: filling to ${count(size)} objects`);
      await populate(ctx, ns, 'cm-', filled, size);
      filled = size;
      const raw = await rawRange(ctx, size);
      const ratios = (ms: number): Ratio[] => [
        ...(raw.level === undefined
          ? []
          : [{ to: 'raw classic-level range (time)', value: ms / raw.level.ms }]),
        ...(raw.etcd === undefined ? [] : [{ to: 'raw etcd3 range (time)', value: ms / raw.etcd.ms }]),
      ];
      // One untimed list first, so the first timed shape does not pay for warming caches.
      await timedList(ctx, path, '', false);
      for (const [label, query, paged] of [
        ['RV unset', '', false],
        ['RV=0', 'resourceVersion=0', false],
        ['limit=500 pages', 'limit=500', true],
      ] as const) {
        const samples = [];
        for (let i = 0; i < ctx.sizes.listRepeats; i++)
          samples.push(await timedList(ctx, path, query, paged));
        const figures = listFigures(samples);
        rows.push({
          scenario: 'list',
          case: `${count(size)} objects, ${label}`,
          subject: ctx.subject,
          figures,
          ratios: ratios(figures['time ms'] ?? NaN),
        });
        ctx.progress(`  ${label}: ${fmt(figures['time ms'] ?? NaN)} ms`);
      }
      for (const [which, name] of [
        ['level', 'raw classic-level range'],
        ['etcd', 'raw etcd3 range'],
      ] as const) {
        const r = raw[which];
        if (r !== undefined)
          rows.push({
            scenario: 'list',
            case: `${count(size)} objects`,
            subject: name,
            figures: { 'time ms': r.ms, 'MB/s': megabytesPerSecond(r.bytes, r.ms), 'body MB': r.bytes / 1e6 },
          });
      }
      // Ten at once: does memory grow with the number of lists in flight, or by a response each?
      const sampler = new ProcSampler(ctx.serverPid, 20);
      const t = process.hrtime.bigint();
      const all = await Promise.all(
        Array.from({ length: 10 }, () => timedList(ctx, path, 'resourceVersion=0', false)),
      );
      const ms = msSince(t);
      const proc = sampler.stop();
      const bytes = all[0]?.bytes ?? 0;
      rows.push({
        scenario: 'list',
        case: `${count(size)} objects, 10 concurrent RV=0`,
        subject: ctx.subject,
        figures: {
          'time ms': ms,
          'MB/s': megabytesPerSecond(bytes * 10, ms),
          'body MB': bytes / 1e6,
          ...(proc === undefined
            ? {}
            : {
                'peak RSS MiB': mib(proc.rssPeakBytes),
                'RSS rise MiB': mib(proc.rssPeakBytes - proc.rssStartBytes),
              }),
        },
      });
    }
    return rows;
  } finally {
    await deleteNamespace(ctx.client, ns);
  }
}
