/**
 * One bench run: find or start the server(s), check that each answers with its credentials and
 * name it by what it is, open the raw-store baselines, run the chosen scenarios in order, and
 * tear everything down again (spawned servers, the local etcd, temporary directories) whatever
 * happens.
 *
 * With `--compare`, every scenario runs `--rounds` times on each of the two servers, interleaved
 * (A then B, then B then A, ...): the rows are the medians over the rounds and each figure both
 * measured gets a B ÷ A ratio with its spread (`rounds.ts`).
 *
 * With `--ha-compare`, A and B are control planes of several API servers on etcd clusters that
 * the run starts first (`ha-planes.ts`) and measures through one kubeconfig per server.
 */
import { existsSync } from 'node:fs';
import { openRawLevel, rawEtcd } from './baselines.js';
import type { Baselines, Scenario, ScenarioContext } from './context.js';
import { BenchError } from './errors.js';
import { startCapstanPlane, startKubePlane, type ControlPlane } from './ha-planes.js';
import { openSubject, type OpenedSubject, type SubjectSpec } from './open-subject.js';
import type { BenchOptions, ScenarioName } from './options.js';
import type { Comparison, Row, RunReport } from './report.js';
import { compareRounds, mergeRounds } from './rounds.js';
import { coldScenario } from './scenarios/cold.js';
import { authzScenario } from './scenarios/authz.js';
import { crudScenario } from './scenarios/crud.js';
import { customScenario } from './scenarios/custom.js';
import { informersScenario } from './scenarios/informers.js';
import { listScenario } from './scenarios/list.js';
import { mixedScenario } from './scenarios/mixed.js';
import { runSchedulerBench } from './scenarios/scheduler.js';
import { startupScenario } from './scenarios/startup.js';
import { watchScenario } from './scenarios/watch.js';
import { Teardown } from './teardown.js';

/** Scenarios that measure a server (`scheduler` runs on a cluster of its own: see below). */
type ServerScenario = Exclude<ScenarioName, 'scheduler'>;

const SCENARIO_FNS: Readonly<Record<ServerScenario, Scenario>> = {
  startup: startupScenario,
  cold: coldScenario,
  crud: crudScenario,
  list: listScenario,
  watch: watchScenario,
  informers: informersScenario,
  mixed: mixedScenario,
  authz: authzScenario,
  custom: customScenario,
};

/** Where a run reports as it goes. */
export interface RunIo {
  /** Progress lines (stderr). */
  readonly progress: (line: string) => void;
  /** Each scenario's rows (and comparisons) as soon as it finishes (the command prints tables). */
  readonly scenarioDone: (
    name: ScenarioName,
    rows: readonly Row[],
    comparisons: readonly Comparison[],
  ) => void;
}

async function openBaselines(options: BenchOptions, teardown: Teardown, io: RunIo): Promise<Baselines> {
  const measuresServers = options.scenarios.some((s) => s !== 'scheduler');
  if (!options.baselines || options.compare !== undefined || options.ha !== undefined || !measuresServers)
    return {};
  const level = await openRawLevel();
  teardown.add(() => level.close());
  if (!options.etcdBaseline) return { level };
  const { ETCD_BINARY, startEtcd } = await import('../../tools/etcd-local.js');
  if (!existsSync(ETCD_BINARY)) {
    io.progress(`no ${ETCD_BINARY}: skipping the raw etcd baseline`);
    return { level };
  }
  const etcd = await startEtcd();
  teardown.add(() => etcd.stop());
  const { Etcd3 } = await import('etcd3');
  const client = new Etcd3({ hosts: etcd.endpoints });
  teardown.add(() => client.close());
  return { level, etcd: rawEtcd(client) };
}

/** The subjects of a run: the default target, and the `--compare` one, or the `--ha-compare` planes. */
async function subjectSpecs(options: BenchOptions, teardown: Teardown, io: RunIo): Promise<SubjectSpec[]> {
  if (options.ha !== undefined) {
    const { servers, kubeBinDir } = options.ha;
    const capstan = await startCapstanPlane(servers, options.serverArgs, io.progress);
    teardown.add(() => capstan.stop());
    const kube = await startKubePlane(kubeBinDir, servers, io.progress);
    teardown.add(() => kube.stop());
    const plane = (p: ControlPlane, name: string): SubjectSpec => ({
      kubeconfig: p.kubeconfigs,
      context: undefined,
      serverPid: undefined,
      serverArgs: [],
      standIn: false,
      name,
      about: p.about,
      planePids: p.pids,
    });
    return [plane(capstan, 'A'), plane(kube, 'B')];
  }
  const a: SubjectSpec = {
    kubeconfig: options.kubeconfig,
    context: options.context,
    serverPid: options.serverPid,
    serverArgs: options.serverArgs,
    standIn: options.compare === undefined,
    ...(options.compare === undefined ? {} : { name: 'A' }),
  };
  if (options.compare === undefined) return [a];
  const c = options.compare;
  return [
    a,
    {
      kubeconfig: c.kubeconfig,
      context: c.context,
      serverPid: c.serverPid,
      serverArgs: c.serverArgs,
      standIn: false,
      name: 'B',
    },
  ];
}

/** Runs one scenario once on one subject; a failure costs that scenario's rows, not the run. */
async function runOnce(name: ServerScenario, ctx: ScenarioContext, failures: string[]): Promise<Row[]> {
  try {
    return await SCENARIO_FNS[name](ctx);
  } catch (err) {
    // A lost server or credentials end the run; anything else costs one scenario, and the
    // report still carries every other figure (and says what failed).
    if (err instanceof BenchError && (err.code === 'BENCH_UNREACHABLE' || err.code === 'BENCH_UNAUTHORIZED'))
      throw err;
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
    failures.push(`${name} on ${ctx.subject}: ${message}`);
    return [{ scenario: name, case: 'failed', subject: ctx.subject, figures: {}, note: message }];
  }
}

/** Runs the scenarios of `options`; resolves with the whole report. */
export async function runBench(options: BenchOptions, io: RunIo, command: string): Promise<RunReport> {
  const teardown = new Teardown();
  const startedAt = new Date().toISOString();
  try {
    const baselines = await openBaselines(options, teardown, io);
    const settings = {
      sizes: options.sizes,
      contentType: options.contentType,
      verbs: options.verbs,
      sessions: options.sessions,
      baselines,
      progress: io.progress,
    };
    const serverScenarios = options.scenarios.filter((s): s is ServerScenario => s !== 'scheduler');
    const subjects: OpenedSubject[] = [];
    if (serverScenarios.length > 0)
      for (const spec of await subjectSpecs(options, teardown, io))
        subjects.push(await openSubject(spec, settings, teardown));
    for (const s of subjects) io.progress(`subject ${s.ctx.subject}: ${s.target}`);
    const rounds = options.rounds;
    const rows: Row[] = [];
    const comparisons: Comparison[] = [];
    const failures: string[] = [];
    for (const name of serverScenarios) {
      for (let round = 0; round < options.warmupRounds; round++)
        for (const s of subjects) {
          io.progress(
            `${name}, warm-up ${round + 1}/${options.warmupRounds} (not measured): ${s.ctx.subject}`,
          );
          // A failed warm-up is reported (its figures were never wanted), so a broken server
          // is not hidden behind measured rounds that may then pass.
          const warmupFailures: string[] = [];
          await runOnce(name, s.ctx, warmupFailures);
          failures.push(...warmupFailures.map((f) => `warm-up ${round + 1}: ${f}`));
        }
      const perSubject = subjects.map(() => [] as Row[][]);
      for (let round = 0; round < rounds; round++) {
        const order = subjects.map((_, i) => i);
        if (round % 2 === 1) order.reverse();
        for (const i of order) {
          const s = subjects[i] as OpenedSubject;
          if (rounds > 1 || subjects.length > 1)
            io.progress(`${name}, round ${round + 1}/${rounds}: ${s.ctx.subject}`);
          (perSubject[i] as Row[][])[round] = await runOnce(name, s.ctx, failures);
        }
      }
      const rounded = subjects.map((s, i) => ({ subject: s.ctx.subject, rounds: perSubject[i] as Row[][] }));
      const got = rounded.flatMap((r) => mergeRounds(r));
      const compared = rounded.length === 2 ? compareRounds(rounded[0]!, rounded[1]!) : [];
      rows.push(...got);
      comparisons.push(...compared);
      io.scenarioDone(name, got, compared);
    }
    const sched = options.scenarios.includes('scheduler')
      ? await runSchedulerBench(options.scheduler, io.progress)
      : undefined;
    if (sched !== undefined) {
      rows.push(...sched.rows);
      comparisons.push(...sched.comparisons);
      failures.push(...sched.failures);
      io.scenarioDone('scheduler', sched.rows, sched.comparisons);
    }
    const subjectInfos = subjects.map((s) => ({
      label: s.ctx.subject,
      target: s.target,
      product: s.identity.product,
      version: s.identity.version,
      backend: s.identity.backend,
    }));
    const allSubjects = subjectInfos.length > 0 ? subjectInfos : (sched?.subjects ?? []);
    return {
      startedAt,
      command,
      node: process.version,
      target: subjects[0]?.target ?? sched?.target ?? '',
      subjects: allSubjects,
      rounds,
      ...(options.warmupRounds > 0 ? { warmupRounds: options.warmupRounds } : {}),
      rows,
      ...(allSubjects.length > 1 ? { comparisons } : {}),
      ...(failures.length === 0 ? {} : { failures }),
    };
  } finally {
    await teardown.run();
  }
}
