/**
 * One bench run: find or start the server, check that it answers with these credentials, open
 * the raw-store baselines, run the chosen scenarios in order, and tear everything down again
 * (the spawned server, the local etcd, temporary directories) whatever happens.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  KubeconfigError,
  readKubeconfigCredentials,
  type KubeconfigCredentials,
} from '../pki/kubeconfig-credentials.js';
import { openRawLevel, rawEtcd } from './baselines.js';
import { BenchClient } from './client.js';
import type { Baselines, Scenario, ScenarioContext } from './context.js';
import { BenchError } from './errors.js';
import type { BenchOptions, ScenarioName } from './options.js';
import type { Row, RunReport } from './report.js';
import { authzScenario } from './scenarios/authz.js';
import { crudScenario } from './scenarios/crud.js';
import { customScenario } from './scenarios/custom.js';
import { informersScenario } from './scenarios/informers.js';
import { listScenario } from './scenarios/list.js';
import { mixedScenario } from './scenarios/mixed.js';
import { startupScenario } from './scenarios/startup.js';
import { watchScenario } from './scenarios/watch.js';
import { spawnServer, type SpawnedServer } from './server-process.js';

const SCENARIO_FNS: Readonly<Record<ScenarioName, Scenario>> = {
  startup: startupScenario,
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
  /** Each scenario's rows as soon as it finishes (the command prints a table). */
  readonly scenarioDone: (name: ScenarioName, rows: readonly Row[]) => void;
}

/** Cleanups run in reverse order of registration, every one even when an earlier one fails. */
class Teardown {
  readonly #steps: (() => Promise<void> | void)[] = [];
  add(step: () => Promise<void> | void): void {
    this.#steps.push(step);
  }
  async run(): Promise<void> {
    for (const step of this.#steps.reverse()) await Promise.resolve(step()).catch(() => undefined);
  }
}

function credentials(path: string, context: string | undefined): KubeconfigCredentials {
  try {
    return readKubeconfigCredentials(path, context);
  } catch (err) {
    if (err instanceof KubeconfigError) throw new BenchError('BENCH_KUBECONFIG', err.message, { cause: err });
    throw err;
  }
}

/**
 * Checks that the server answers an authenticated read: the first thing any scenario needs.
 * @throws BenchError BENCH_UNREACHABLE, BENCH_UNAUTHORIZED (401/403) or BENCH_HTTP_STATUS.
 */
export async function preflight(client: BenchClient): Promise<void> {
  await client.expect('GET', '/api/v1/namespaces/default', 200, { discardBody: true });
}

async function openBaselines(options: BenchOptions, teardown: Teardown, io: RunIo): Promise<Baselines> {
  if (!options.baselines) return {};
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

/** Runs the scenarios of `options`; resolves with the whole report. */
export async function runBench(options: BenchOptions, io: RunIo, command: string): Promise<RunReport> {
  const teardown = new Teardown();
  const startedAt = new Date().toISOString();
  try {
    let creds: KubeconfigCredentials;
    let pid = options.serverPid;
    let target: string;
    if (options.kubeconfig !== undefined) {
      creds = credentials(options.kubeconfig, options.context);
      target = `${creds.server} (kubeconfig ${options.kubeconfig})`;
    } else {
      const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-'));
      teardown.add(() => rm(dir, { recursive: true, force: true }));
      io.progress('starting capstan server on a temporary data dir');
      const server: SpawnedServer = await spawnServer({
        dataDir: join(dir, 'data'),
        extraArgs: options.serverArgs,
      });
      teardown.add(() => server.stop());
      creds = credentials(server.kubeconfigPath, undefined);
      pid = server.pid;
      const store = options.serverArgs.some((a) => a.startsWith('--etcd-servers'))
        ? 'etcd'
        : 'embedded LevelDB';
      target = `capstan server started by the bench (${store} store)`;
    }
    const client = new BenchClient(creds, options.sessions);
    teardown.add(() => client.close());
    await preflight(client);
    const baselines = await openBaselines(options, teardown, io);
    const ctx: ScenarioContext = {
      client,
      creds,
      serverPid: pid,
      sizes: options.sizes,
      contentType: options.contentType,
      baselines,
      serverArgs: options.serverArgs,
      progress: io.progress,
    };
    const rows: Row[] = [];
    const failures: string[] = [];
    for (const name of options.scenarios) {
      let got: Row[];
      try {
        got = await SCENARIO_FNS[name](ctx);
      } catch (err) {
        // A lost server or credentials end the run; anything else costs one scenario, and the
        // report still carries every other figure (and says what failed).
        if (
          err instanceof BenchError &&
          (err.code === 'BENCH_UNREACHABLE' || err.code === 'BENCH_UNAUTHORIZED')
        )
          throw err;
        const message = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
        failures.push(`${name}: ${message}`);
        got = [{ scenario: name, case: 'failed', subject: 'capstan', figures: {}, note: message }];
      }
      rows.push(...got);
      io.scenarioDone(name, got);
    }
    return {
      startedAt,
      command,
      node: process.version,
      target,
      rows,
      ...(failures.length === 0 ? {} : { failures }),
    };
  } finally {
    await teardown.run();
  }
}
