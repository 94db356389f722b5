/**
 * `create`, `get`, `update`, `delete`: for each number of concurrent clients, a closed loop of
 * each verb on ConfigMaps of the chosen size and media type, beside the same write and read
 * shapes on the raw stores (synced classic-level put and batch, etcd3 put, point gets).
 *
 * Order per client count: creates for the run's duration, then gets and unconditional updates
 * (PUT without a resourceVersion) over the created objects for the same duration, then one
 * delete of each created object. When only some verbs are named (`capstan bench get`), only
 * those are timed; without creates, 100 objects (or one per client, if more) are created
 * first, untimed.
 *
 * When the server runs on this machine, each timed loop also reports the server's CPU time per
 * operation (`server CPU µs/op`, from /proc): on a small machine where client and server share
 * the cores, it tells what a feature costs the server more steadily than throughput does. For a
 * control plane the bench started (`--ha-compare`), that is its servers' CPU together, and
 * `etcd CPU µs/op` is its etcd members'. `bench CPU µs/op` is this process's own (the load
 * generator's), always given: where everything shares the cores, a server's throughput is what
 * the CPU left by etcd and the load generator allows.
 */
import { rawGets, rawLevelBatchWrites, rawWrites, type RawSubject } from '../baselines.js';
import { createNamespace, deleteNamespace, type ScenarioContext } from '../context.js';
import type { PlanePids } from '../ha-planes.js';
import { closedLoop, type LoopResult } from '../load.js';
import { readProc } from '../proc.js';
import { configMapBodies, JSON_TYPE, updateTarget } from '../objects.js';
import type { Figures, Ratio, Row } from '../report.js';
import { fmt } from '../stats.js';

/** Objects created (untimed) for the other verbs when creates are not measured (or one per client). */
const FILL = 100;

/** The figures of a closed loop. */
export function loopFigures(r: LoopResult): Figures {
  return {
    'ops/s': r.opsPerSec,
    'p50 ms': r.latency.p50,
    'p99 ms': r.latency.p99,
    'p99.9 ms': r.latency.p999,
  };
}

function ratio(ours: LoopResult, raw: LoopResult | undefined, to: string): Ratio[] {
  return raw === undefined ? [] : [{ to, value: ours.opsPerSec / raw.opsPerSec }];
}

interface RawFigures {
  readonly levelPut?: LoopResult;
  readonly levelBatch?: LoopResult;
  readonly etcdPut?: LoopResult;
  readonly levelGet?: LoopResult;
  readonly etcdGet?: LoopResult;
}

async function rawShapes(ctx: ScenarioContext, clients: number): Promise<RawFigures> {
  const { level, etcd } = ctx.baselines;
  const budget = { durationMs: ctx.sizes.durationMs };
  const value = new Uint8Array(ctx.sizes.objectSize).fill(0x78);
  // A fresh prefix per call: the raw stores live for the whole run.
  const prefix = `/bench/raw/${Date.now().toString(36)}-${clients}/`;
  const out: { -readonly [K in keyof RawFigures]: RawFigures[K] } = {};
  const writesThenGets = async (s: RawSubject, p: string): Promise<[LoopResult, LoopResult]> => {
    const w = await rawWrites(s, p, clients, budget, value);
    const g = await rawGets(s, p, w.latency.count, clients, budget);
    return [w, g];
  };
  if (level !== undefined) {
    [out.levelPut, out.levelGet] = await writesThenGets(level, `${prefix}put/`);
    out.levelBatch = await rawLevelBatchWrites(level.db, `${prefix}batch/`, clients, budget, value);
  }
  if (etcd !== undefined) [out.etcdPut, out.etcdGet] = await writesThenGets(etcd, `${prefix}etcd/`);
  return out;
}

/**
 * A closed loop with CPU time per operation: the server's (of a control plane, its servers'
 * together) and, for a control plane the bench started, its etcd members'. Undefined when the
 * processes are not local.
 */
interface CrudLoop extends LoopResult {
  readonly serverCpuUsPerOp?: number;
  readonly etcdCpuUsPerOp?: number;
  /** This process's CPU per operation (the load generator's); undefined when nothing was done. */
  readonly benchCpuUsPerOp?: number;
}

/** The processes whose CPU a crud loop reads: a control plane's, or the one server's. */
function timedPids(ctx: ScenarioContext): PlanePids {
  if (ctx.planePids !== undefined) return ctx.planePids;
  return { servers: ctx.serverPid === undefined ? [] : [ctx.serverPid], store: [] };
}

/** CPU ms of `pids` together; undefined when one of them cannot be read (or there is none). */
function cpuMsOf(pids: readonly number[]): number | undefined {
  let sum = 0;
  for (const pid of pids) {
    const reading = readProc(pid);
    if (reading === undefined) return undefined;
    sum += reading.cpuMs;
  }
  return pids.length === 0 ? undefined : sum;
}

/** Runs `loop`, reading the CPU time of `pids` and of this process around it. */
async function cpuTimed(pids: PlanePids, loop: () => Promise<LoopResult>): Promise<CrudLoop> {
  const servers = cpuMsOf(pids.servers);
  const store = cpuMsOf(pids.store);
  const bench = process.cpuUsage();
  const r = await loop();
  const own = process.cpuUsage(bench);
  const n = r.latency.count;
  const perOp = (before: number | undefined, after: number | undefined): number | undefined =>
    before === undefined || after === undefined || n === 0 ? undefined : ((after - before) * 1000) / n;
  const serverCpuUsPerOp = perOp(servers, cpuMsOf(pids.servers));
  const etcdCpuUsPerOp = perOp(store, cpuMsOf(pids.store));
  return {
    ...r,
    ...(serverCpuUsPerOp === undefined ? {} : { serverCpuUsPerOp }),
    ...(etcdCpuUsPerOp === undefined ? {} : { etcdCpuUsPerOp }),
    ...(n === 0 ? {} : { benchCpuUsPerOp: (own.user + own.system) / n }),
  };
}

function crudFigures(r: CrudLoop): Figures {
  return {
    ...loopFigures(r),
    ...(r.serverCpuUsPerOp === undefined ? {} : { 'server CPU µs/op': r.serverCpuUsPerOp }),
    ...(r.etcdCpuUsPerOp === undefined ? {} : { 'etcd CPU µs/op': r.etcdCpuUsPerOp }),
    ...(r.benchCpuUsPerOp === undefined ? {} : { 'bench CPU µs/op': r.benchCpuUsPerOp }),
  };
}

/** Runs the four verbs for every client count. */
export async function crudScenario(ctx: ScenarioContext): Promise<Row[]> {
  const rows: Row[] = [];
  const bodies = configMapBodies(ctx.contentType, ctx.sizes.objectSize);
  const typeName = ctx.contentType === JSON_TYPE ? 'JSON' : 'protobuf';
  const ns = await createNamespace(ctx.client, 'crud');
  const base = `/api/v1/namespaces/${ns}/configmaps`;
  const send = { contentType: bodies.contentType, accept: ctx.contentType, discardBody: true } as const;
  try {
    // A server that does not take this media type gets one row that says so, not a crash.
    const probe = await ctx.client.request('POST', base, { ...send, body: bodies.body('probe') });
    if (probe.status !== 201) {
      if (ctx.contentType === JSON_TYPE)
        await ctx.client.expect('POST', base, 201, { body: bodies.body('probe2') });
      return [
        {
          scenario: 'create',
          case: typeName,
          subject: ctx.subject,
          figures: {},
          note: `server refused ${ctx.contentType} bodies (HTTP ${probe.status})`,
        },
      ];
    }
    for (const clients of ctx.sizes.clients) {
      const c = `${clients} clients, ${typeName}`;
      const budget = { durationMs: ctx.sizes.durationMs };
      const name = (i: number): string => `c${clients}-${i}`;
      ctx.progress(`${[...ctx.verbs].join('/')}, ${clients} clients`);
      const verbs = ctx.verbs;
      const pids = timedPids(ctx);
      const post = (n: number): Promise<unknown> =>
        ctx.client.expect('POST', base, 201, { ...send, body: bodies.body(name(n)) });
      const create = !verbs.has('create')
        ? undefined
        : await cpuTimed(pids, () => closedLoop(clients, budget, post));
      // Without timed creates, a fixed set of objects for the other verbs (set-up, not measured).
      const created =
        create?.latency.count ??
        (await closedLoop(32, { maxOps: Math.max(FILL, clients) }, post)).latency.count;
      const pick = (n: number): number => (Math.imul(n, 2654435761) >>> 0) % created;
      const get = !verbs.has('get')
        ? undefined
        : await cpuTimed(pids, () =>
            closedLoop(clients, budget, (n) =>
              ctx.client.expect('GET', `${base}/${name(pick(n))}`, 200, send),
            ),
          );
      let conflicts = 0;
      const update = !verbs.has('update')
        ? undefined
        : await cpuTimed(pids, () =>
            closedLoop(clients, budget, async (n) => {
              const { index, generation } = updateTarget(n, created);
              const res = await ctx.client.expect('PUT', `${base}/${name(index)}`, [200, 409], {
                ...send,
                body: bodies.body(name(index), generation),
              });
              if (res.status === 409) conflicts++;
            }),
          );
      const del = !verbs.has('delete')
        ? undefined
        : await cpuTimed(pids, () =>
            closedLoop(clients, { maxOps: created }, (n) =>
              ctx.client.expect('DELETE', `${base}/${name(n)}`, [200, 202], send),
            ),
          );
      const rate = (verb: string, r: LoopResult | undefined): string =>
        r === undefined ? '' : ` ${verb} ${fmt(r.opsPerSec)}/s`;
      ctx.progress(
        ` ${rate('create', create)}${rate('get', get)}${rate('update', update)}${rate('delete', del)}`,
      );
      const raw = await rawShapes(ctx, clients);
      const writeRatios = (r: LoopResult | undefined): Ratio[] =>
        r === undefined
          ? []
          : [
              ...ratio(r, raw.levelBatch, `raw classic-level batch of ${clients}`),
              ...ratio(r, raw.levelPut, 'raw classic-level put'),
              ...ratio(r, raw.etcdPut, 'raw etcd3 put'),
            ];
      const measured: [string, CrudLoop | undefined, Figures, Ratio[]][] = [
        ['create', create, {}, writeRatios(create)],
        [
          'get',
          get,
          {},
          get === undefined
            ? []
            : [
                ...ratio(get, raw.levelGet, 'raw classic-level get'),
                ...ratio(get, raw.etcdGet, 'raw etcd3 get'),
              ],
        ],
        ['update', update, { conflicts }, writeRatios(update)],
        ['delete', del, {}, writeRatios(del)],
      ];
      for (const [scenario, r, extra, ratios] of measured)
        if (r !== undefined)
          rows.push({
            scenario,
            case: c,
            subject: ctx.subject,
            figures: { ...crudFigures(r), ...extra },
            ...(ratios.length === 0 ? {} : { ratios }),
          });
      const rawRow = (scenario: string, subject: string, r: LoopResult | undefined): void => {
        if (r !== undefined) rows.push({ scenario, case: c, subject, figures: loopFigures(r) });
      };
      if (create !== undefined) {
        rawRow('create', 'raw classic-level put (sync)', raw.levelPut);
        rawRow('create', `raw classic-level batch of ${clients} (sync)`, raw.levelBatch);
        rawRow('create', 'raw etcd3 put', raw.etcdPut);
      }
      if (get !== undefined) {
        rawRow('get', 'raw classic-level get', raw.levelGet);
        rawRow('get', 'raw etcd3 get', raw.etcdGet);
      }
    }
    return rows;
  } finally {
    await deleteNamespace(ctx.client, ns);
  }
}
