/**
 * One measurement of `capstan bench scheduler`: one scheduler process, one case, one fresh
 * namespace. The scheduler is started, shown ready by a warm-up pod it binds, then P pods are
 * created (32 at a time) while a watch notes when each is bound. Figures: pods bound per second
 * from the first create to the last bind, each pod's create → bound latency (p50, p99; from the
 * create's answer to the bind's watch event), and the
 * scheduler process's CPU and RSS over the measured part, read from `/proc`. Then the pods are
 * deleted and the scheduler stopped, whatever happened.
 *
 * With `createRate`, pod `i` is created no sooner than `i / createRate` seconds after the first:
 * a steady load, the same for every scheduler, so their latencies compare (created as fast as
 * possible, the side whose scheduler takes less CPU also lets the server create faster).
 *
 * With `backlog`, every pod is created before the scheduler starts: pods/s is then counted from
 * its first bind to its last, the scheduler's own rate with the server's create rate out of the
 * way (above, pods/s can be no more than creates/s), and there are no latencies (every pod
 * waited for the scheduler's start).
 */
import type { Pod } from '../../api/types/core-v1.js';
import { closedLoop } from '../load.js';
import type { BenchClient } from '../client.js';
import { count, createNamespace, deleteNamespace, mib } from '../context.js';
import { BenchError } from '../errors.js';
import { ProcSampler } from '../proc.js';
import type { Row } from '../report.js';
import { ratePerSecond, summarize } from '../stats.js';
import { BindWatch } from './binds.js';
import { checkPlacement } from './placement.js';
import { antiAffinityGroups, caseTitle, podBody, warmUpBody, type SchedulerCase } from './pods.js';
import {
  spawnScheduler,
  type SchedulerClientSettings,
  type SchedulerKind,
  type SchedulerProcess,
} from './process.js';

/** How long a fresh scheduler may take to bind its warm-up pod. */
const WARM_UP_TIMEOUT_MS = 120_000;
/** Concurrent creates (as `populate`): enough that creating is not what the scheduler waits for. */
const CREATORS = 32;

/** What one measurement needs. */
export interface MeasureSpec {
  readonly client: BenchClient;
  readonly scheduler: SchedulerKind;
  /** The subject of the row. */
  readonly subject: string;
  readonly settings: SchedulerClientSettings;
  readonly case: SchedulerCase;
  /** Create every pod before the scheduler starts (see the file's comment). */
  readonly backlog: boolean;
  /** Pods created per second, paced (see the file's comment); undefined: as fast as possible. */
  readonly createRate?: number;
  readonly pods: number;
  readonly nodes: number;
  readonly zones: number;
  /** Node name → zone, for the placement check. */
  readonly zoneOf: ReadonlyMap<string, string>;
  readonly progress: (line: string) => void;
}

/**
 * Resolves once `due` (a `process.hrtime.bigint()` reading) has passed, at once when it has. A
 * timer may fire up to a millisecond early against the clock (the event loop's cached time), so
 * it waits again until the clock says so.
 */
export async function until(due: bigint): Promise<void> {
  for (;;) {
    const ms = Number(due - process.hrtime.bigint()) / 1e6;
    if (ms <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(ms)));
  }
}

/** When pod `i` of a run started at `start` may be created, at `rate` pods per second. */
export function dueAt(start: bigint, i: number, rate: number): bigint {
  return start + BigInt(Math.round((i / rate) * 1e9));
}

/** A promise that rejects after `ms` (and never keeps the process alive). */
function deadline(ms: number, what: () => string): Promise<never> {
  return new Promise<never>((_, reject) => {
    setTimeout(() => reject(new BenchError('BENCH_SCHEDULER', what())), ms).unref();
  });
}

/**
 * The time allowed for P pods to be bound once all were created: a minute, plus 10 ms a pod (a
 * 5,000 pod run: 110 s). Creating them is bounded by the server alone.
 */
function bindTimeoutMs(pods: number): number {
  return 60_000 + 10 * pods;
}

/** Makes sure the namespace has its `default` ServiceAccount (the admission plugin wants it). */
async function ensureServiceAccount(client: BenchClient, ns: string): Promise<void> {
  const r = await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
    discardBody: true,
  });
  if (r.status !== 201 && r.status !== 409)
    throw new BenchError(
      'BENCH_HTTP_STATUS',
      `creating the default ServiceAccount answered HTTP ${r.status}`,
    );
}

/** Deletes every pod of `ns` at once (grace 0) and waits until none is left. */
async function deletePods(client: BenchClient, ns: string): Promise<void> {
  await client.request('DELETE', `/api/v1/namespaces/${ns}/pods?gracePeriodSeconds=0`, { discardBody: true });
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    const r = await client.request('GET', `/api/v1/namespaces/${ns}/pods?limit=1`);
    if (r.status !== 200 || !r.body.toString('utf8').includes('"name"')) return;
    await new Promise((res) => setTimeout(res, 200));
  }
}

/** What the server says of an unbound pod: its node and PodScheduled condition (diagnostics). */
async function serverState(client: BenchClient, ns: string, name: string): Promise<string> {
  try {
    const r = await client.request('GET', `/api/v1/namespaces/${ns}/pods/${name}`);
    if (r.status !== 200) return `${name}: HTTP ${r.status}`;
    const pod = JSON.parse(r.body.toString('utf8')) as Pod;
    const c = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
    const cond =
      c === undefined
        ? 'no PodScheduled condition'
        : `PodScheduled=${c.status} ${c.reason ?? ''} ${c.message ?? ''}`;
    return `${name}: node ${JSON.stringify(pod.spec?.nodeName ?? '')}, phase ${pod.status?.phase ?? ''}, rv ${pod.metadata.resourceVersion ?? ''}, ${cond}`;
  } catch (err) {
    return `${name}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/**
 * Waits until every pod in `names` is bound; a timeout (from `since`) or the scheduler's exit
 * rejects with the server's view of the first few unbound pods.
 */
async function awaitBinds(
  spec: MeasureSpec,
  ns: string,
  watch: BindWatch,
  names: readonly string[],
  exited: Promise<never>,
  since: string,
): Promise<void> {
  const timeout = bindTimeoutMs(names.length);
  const unbound = (): string => {
    const left = names.filter((n) => watch.boundAt(n) === undefined);
    return `${left.length} of ${names.length} pods unbound ${timeout / 1000} s after ${since} (${left.slice(0, 5).join(', ')}${left.length > 5 ? ', ...' : ''})`;
  };
  const abort = Promise.race([exited, deadline(timeout, () => `${spec.subject}: ${unbound()}`)]);
  try {
    await watch.allBound(names, abort);
  } catch (err) {
    const left = names.filter((n) => watch.boundAt(n) === undefined).slice(0, 5);
    const states = await Promise.all(left.map((n) => serverState(spec.client, ns, n)));
    if (err instanceof BenchError)
      throw new BenchError(
        'BENCH_SCHEDULER',
        `${err.message}; ${watch.describe()}; on the server: ${states.join('; ')}`,
      );
    throw err;
  }
}

/** The scheduler's CPU and RSS over the measured part, as figures. */
function usageFigures(usage: ReturnType<ProcSampler['stop']>): Row['figures'] {
  return usage === undefined
    ? {}
    : {
        'CPU s': usage.cpuMs / 1000,
        'peak RSS MiB': mib(usage.rssPeakBytes),
        'end RSS MiB': mib(usage.rssEndBytes),
      };
}

/** A scheduler under test, started; `exited` rejects should it exit while measured. */
async function startScheduler(
  spec: MeasureSpec,
  running: { proc?: SchedulerProcess },
): Promise<{ proc: SchedulerProcess; exited: Promise<never> }> {
  const proc = await spawnScheduler(spec.scheduler, spec.settings);
  running.proc = proc;
  const exited = proc.exited.then((why): never => {
    throw new BenchError('BENCH_SCHEDULER', `${spec.subject} exited: ${why}`);
  });
  exited.catch(() => undefined);
  return { proc, exited };
}

/**
 * Runs `measure` in a fresh namespace that has its `default` ServiceAccount and a bind watch;
 * then deletes the pods and the namespace and stops the scheduler `measure` started (through
 * {@link startScheduler} with the `running` it is given), whatever happened.
 */
async function inFreshNamespace(
  spec: MeasureSpec,
  measure: (ns: string, watch: BindWatch, running: { proc?: SchedulerProcess }) => Promise<Row>,
): Promise<Row> {
  const { client } = spec;
  const ns = await createNamespace(client, 'sched');
  let watch: BindWatch | undefined;
  const running: { proc?: SchedulerProcess } = {};
  try {
    await ensureServiceAccount(client, ns);
    watch = await BindWatch.open(client, ns);
    return await measure(ns, watch, running);
  } finally {
    watch?.close();
    await deletePods(client, ns).catch(() => undefined);
    await deleteNamespace(client, ns);
    await running.proc?.stop();
  }
}

/** Runs one measurement; resolves with its row. @throws BenchError BENCH_SCHEDULER */
export async function measureScheduler(spec: MeasureSpec): Promise<Row> {
  return spec.backlog ? measureBacklog(spec) : measureLive(spec);
}

/** A scheduler started on P pods that already exist (`backlog`). */
async function measureBacklog(spec: MeasureSpec): Promise<Row> {
  const { client, pods } = spec;
  const title = `${caseTitle(spec.case, pods, spec.nodes, spec.zones)}, backlog`;
  return inFreshNamespace(spec, async (ns, w, running) => {
    const path = `/api/v1/namespaces/${ns}/pods`;
    const groups = antiAffinityGroups(pods, spec.nodes);
    const names = Array.from({ length: pods }, (_, i) => `pod-${i}`);
    spec.progress(
      `  ${spec.subject}: creating ${count(pods)} pods (${spec.case}) before the scheduler starts`,
    );
    const created = await closedLoop(CREATORS, { maxOps: pods }, async (i) => {
      await client.expect('POST', path, 201, { body: podBody(spec.case, i, groups), discardBody: true });
    });
    const spawned = process.hrtime.bigint();
    const { proc, exited } = await startScheduler(spec, running);
    const sampler = new ProcSampler(proc.pid);
    await awaitBinds(spec, ns, w, names, exited, 'the scheduler started');
    const usage = sampler.stop();
    const binds = names.map((n) => w.boundAt(n) as bigint);
    const first = binds.reduce((a, b) => (b < a ? b : a));
    const last = binds.reduce((a, b) => (b > a ? b : a));
    const broken = checkPlacement(spec.case, names, (n) => w.nodeOf(n), spec.zoneOf, groups);
    return {
      scenario: 'scheduler',
      case: title,
      subject: spec.subject,
      figures: {
        'pods bound': binds.length,
        // P - 1 intervals between the first bind and the last.
        'pods/s': pods > 1 ? ratePerSecond(pods - 1, Number(last - first) / 1e6) : 0,
        'first bind s': Number(first - spawned) / 1e9,
        ...usageFigures(usage),
        'creates/s': created.opsPerSec,
      },
      ...(broken === undefined ? {} : { note: `placement broke the constraint: ${broken}` }),
    };
  });
}

/** A running scheduler, then P pods created while it binds them. */
async function measureLive(spec: MeasureSpec): Promise<Row> {
  const { client, pods } = spec;
  const rate = spec.createRate;
  const title = `${caseTitle(spec.case, pods, spec.nodes, spec.zones)}${rate === undefined ? '' : `, created at ${count(rate)}/s`}`;
  return inFreshNamespace(spec, async (ns, w, running) => {
    const { proc, exited } = await startScheduler(spec, running);
    const path = `/api/v1/namespaces/${ns}/pods`;
    await client.expect('POST', path, 201, { body: warmUpBody(), discardBody: true });
    await w.allBound(
      ['warm-up'],
      Promise.race([
        exited,
        deadline(WARM_UP_TIMEOUT_MS, () => `${spec.subject} bound no pod in ${WARM_UP_TIMEOUT_MS / 1000} s`),
      ]),
    );
    spec.progress(`  ${spec.subject}: ready; creating ${count(pods)} pods (${spec.case})`);
    const sampler = new ProcSampler(proc.pid);
    const groups = antiAffinityGroups(pods, spec.nodes);
    const names = Array.from({ length: pods }, (_, i) => `pod-${i}`);
    const created: bigint[] = new Array<bigint>(pods);
    const start = process.hrtime.bigint();
    // A pod exists from its create's answer on: that is the "created" end of its latency (a
    // bind seen before the answer counts as 0).
    const creating = closedLoop(CREATORS, { maxOps: pods }, async (i) => {
      if (rate !== undefined) await until(dueAt(start, i, rate));
      await client.expect('POST', path, 201, { body: podBody(spec.case, i, groups), discardBody: true });
      created[i] = process.hrtime.bigint();
    });
    const created_ = await Promise.race([creating, exited]);
    await awaitBinds(spec, ns, w, names, exited, 'the last create');
    const usage = sampler.stop();
    let last = start;
    const latencies = names.map((n, i) => {
      const at = w.boundAt(n) as bigint;
      if (at > last) last = at;
      return Math.max(0, Number(at - (created[i] as bigint)) / 1e6);
    });
    const lat = summarize(latencies);
    const elapsedMs = Number(last - start) / 1e6;
    const broken = checkPlacement(spec.case, names, (n) => w.nodeOf(n), spec.zoneOf, groups);
    return {
      scenario: 'scheduler',
      case: title,
      subject: spec.subject,
      figures: {
        'pods bound': names.filter((n) => w.boundAt(n) !== undefined).length,
        'pods/s': ratePerSecond(pods, elapsedMs),
        'p50 ms': lat.p50,
        'p99 ms': lat.p99,
        ...usageFigures(usage),
        'creates/s': created_.opsPerSec,
      },
      ...(broken === undefined ? {} : { note: `placement broke the constraint: ${broken}` }),
    };
  });
}
