/**
 * `informers`: K informers start at once against a namespace of N ConfigMaps, as after a control
 * plane restart (a relist storm). Each does what client-go's reflector does: a list with
 * `resourceVersion=0&limit=500` (following `continue` if the server pages it), then a watch from
 * the list's resourceVersion. An informer is synced when its watch answered 200. Figures: time
 * until all are synced, and the server's peak RSS meanwhile.
 */
import { BenchClient, type BenchStream } from '../client.js';
import { count, createNamespace, deleteNamespace, mib, populate, type ScenarioContext } from '../context.js';
import { ProcSampler } from '../proc.js';
import type { Row } from '../report.js';
import { fmt, msSince, percentile } from '../stats.js';

const RV = /"resourceVersion":"(\d+)"/;
const CONTINUE = /"continue":"([^"]+)"/;

async function informer(client: BenchClient, path: string, streams: BenchStream[]): Promise<number> {
  const t = process.hrtime.bigint();
  let query = 'resourceVersion=0&limit=500';
  let rv: string | undefined;
  for (;;) {
    const res = await client.expect('GET', `${path}?${query}`, 200, { discardBody: true });
    const head = res.head.toString('latin1');
    rv ??= RV.exec(head)?.[1];
    const token = CONTINUE.exec(head)?.[1];
    if (token === undefined) break;
    query = `limit=500&continue=${encodeURIComponent(token)}`;
  }
  const stream = client.stream(
    `${path}?watch=true&resourceVersion=${rv ?? '0'}&allowWatchBookmarks=true`,
    () => undefined,
  );
  streams.push(stream);
  const status = await stream.status;
  if (status !== 200) throw new Error(`informer watch answered HTTP ${status}`);
  return msSince(t);
}

/** Runs one relist storm per informer count. */
export async function informersScenario(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const n = ctx.sizes.informerObjects;
  const ns = await createNamespace(ctx.client, 'informers');
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  try {
    ctx.progress(`informers: filling ${count(n)} objects`);
    await populate(ctx, ns, 'cm-', 0, n);
    for (const k of ctx.sizes.informers) {
      ctx.progress(`informers: ${k} at once against ${count(n)} objects`);
      const client = new BenchClient(ctx.creds, Math.max(1, Math.ceil(k / 50)));
      const streams: BenchStream[] = [];
      const sampler = new ProcSampler(ctx.serverPid, 20);
      const t = process.hrtime.bigint();
      try {
        const each = await Promise.all(Array.from({ length: k }, () => informer(client, path, streams)));
        const all = msSince(t);
        const proc = sampler.stop();
        ctx.progress(`  all synced in ${fmt(all)} ms`);
        rows.push({
          scenario: 'informers',
          case: `${k} informers, ${count(n)} objects`,
          subject: ctx.subject,
          figures: {
            'all synced ms': all,
            'p50 synced ms': percentile(each, 50),
            ...(proc === undefined
              ? {}
              : {
                  'peak RSS MiB': mib(proc.rssPeakBytes),
                  'RSS rise MiB': mib(proc.rssPeakBytes - proc.rssStartBytes),
                }),
          },
        });
      } finally {
        sampler.stop();
        for (const s of streams) s.close();
        client.close();
      }
    }
    return rows;
  } finally {
    await deleteNamespace(ctx.client, ns);
  }
}
