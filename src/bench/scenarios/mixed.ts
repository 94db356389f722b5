/**
 * `mixed`: a controller-like load, sustained: one watch on the namespace (the controller's
 * informer) and M workers that each get an object and write it back changed (the reconcile's
 * update), over objects created first. ConfigMaps have no status subresource, so the update is
 * a whole-object PUT: the same storage work as a status update, a little more validation.
 * Figures: reconciles per second, p99 of each step, events the watch received per second, and
 * the server's CPU per reconcile.
 */
import { createNamespace, deleteNamespace, populate, type ScenarioContext } from '../context.js';
import { closedLoop } from '../load.js';
import { configMapBodies, JSON_TYPE } from '../objects.js';
import { ProcSampler } from '../proc.js';
import type { Row } from '../report.js';
import { fmt, msSince, ratePerSecond, summarize } from '../stats.js';

const OBJECTS = 1000;

/** Runs the mix for twice the run's loop duration. */
export async function mixedScenario(ctx: ScenarioContext): Promise<Row[]> {
  const workers = ctx.sizes.mixedWorkers;
  ctx.progress(`mixed: watch + ${workers} get/update workers`);
  const ns = await createNamespace(ctx.client, 'mixed');
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const bodies = configMapBodies(JSON_TYPE, ctx.sizes.objectSize);
  let events = 0;
  const watch = ctx.client.stream(`${path}?watch=true`, (chunk) => {
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) events++;
  });
  try {
    await populate(ctx, ns, 'cm-', 0, OBJECTS);
    const gets: number[] = [];
    const updates: number[] = [];
    let conflicts = 0;
    const eventsBefore = events;
    const sampler = new ProcSampler(ctx.serverPid);
    const t = process.hrtime.bigint();
    // Each object's updates count up, so every update changes its object (none is a no-op).
    const generations = new Uint32Array(OBJECTS);
    const r = await closedLoop(workers, { durationMs: ctx.sizes.durationMs * 2 }, async (n) => {
      const index = (Math.imul(n, 2654435761) >>> 0) % OBJECTS;
      const name = `cm-${index}`;
      let s = process.hrtime.bigint();
      await ctx.client.expect('GET', `${path}/${name}`, 200, { discardBody: true });
      gets.push(msSince(s));
      s = process.hrtime.bigint();
      const generation = (generations[index] as number) + 1;
      generations[index] = generation;
      const res = await ctx.client.expect('PUT', `${path}/${name}`, [200, 409], {
        body: bodies.body(name, generation),
        discardBody: true,
      });
      if (res.status === 409) conflicts++;
      updates.push(msSince(s));
    });
    const elapsed = msSince(t);
    const proc = sampler.stop();
    const g = summarize(gets);
    const u = summarize(updates);
    ctx.progress(`  ${fmt(r.opsPerSec)} reconciles/s`);
    return [
      {
        scenario: 'mixed',
        case: `1 watch + ${workers} workers`,
        subject: ctx.subject,
        figures: {
          'reconciles/s': r.opsPerSec,
          'get p99 ms': g.p99,
          'update p99 ms': u.p99,
          'watch events/s': ratePerSecond(events - eventsBefore, elapsed),
          conflicts,
          ...(proc === undefined
            ? {}
            : { 'server CPU ms/reconcile': proc.cpuMs / Math.max(1, r.latency.count) }),
        },
      },
    ];
  } finally {
    watch.close();
    await deleteNamespace(ctx.client, ns);
  }
}
