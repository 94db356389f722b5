/**
 * Scheduler processes of `capstan bench scheduler`: Capstan's (`capstan scheduler`, started from
 * this build) or an external binary with kube-scheduler's flags (kube-scheduler v1.33 itself),
 * each given the same client QPS and burst, without leader election or a serving port, so that
 * the two differ only in the scheduler.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCapstanPackage } from '../../package/root.js';
import { packageVersion } from '../../server/package-version.js';
import { BenchError } from '../errors.js';
import { CAPSTAN_MAIN } from '../server-process.js';

/**
 * The `capstan` entry the bench's processes run: {@link CAPSTAN_MAIN}, or, when this code runs
 * from the sources (vitest), the build's `dist/src/cli/main.js`.
 * @throws BenchError BENCH_SERVER_START when there is no build.
 */
export function capstanEntry(): string {
  if (existsSync(CAPSTAN_MAIN)) return CAPSTAN_MAIN;
  const root = findCapstanPackage(dirname(fileURLToPath(import.meta.url)))?.root;
  const built = root === undefined ? undefined : join(root, 'dist', 'src', 'cli', 'main.js');
  if (built !== undefined && existsSync(built)) return built;
  throw new BenchError('BENCH_SERVER_START', `${CAPSTAN_MAIN} is missing: run npm run build first`);
}

/**
 * Which scheduler a process runs: Capstan's, the binary at `binary` (kube-scheduler's flags), or
 * the ceiling binder (`capstan bench binder`, src/bench/scheduler/ceiling.ts), which does no
 * scheduling work.
 */
export type SchedulerKind =
  | { readonly kind: 'capstan' }
  | { readonly kind: 'binary'; readonly binary: string }
  | { readonly kind: 'ceiling' };

/** The client settings every scheduler under test gets. */
export interface SchedulerClientSettings {
  readonly kubeconfig: string;
  readonly qps: number;
  readonly burst: number;
  /** Where a configuration file may be written (the external binary's). */
  readonly dir: string;
}

/** A running scheduler process. */
export interface SchedulerProcess {
  readonly pid: number;
  /** Resolves when the process exits, with the last lines it wrote on stderr. */
  readonly exited: Promise<string>;
  /** SIGTERM, then SIGKILL after 10 s; resolves once it exited. Idempotent. */
  stop(): Promise<void>;
}

/**
 * What the rows call a scheduler: `capstan scheduler v<version>`, or the binary's name and the
 * first line its `--version` prints (`kube-scheduler Kubernetes v1.33.13`).
 */
export function schedulerLabel(s: SchedulerKind): string {
  if (s.kind === 'capstan') return `capstan scheduler v${packageVersion()}`;
  if (s.kind === 'ceiling') return 'ceiling: binds only';
  const r = spawnSync(s.binary, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const version = (r.stdout ?? '').trim().split('\n')[0] ?? '';
  // A build without version stamping says `v0.0.0-master+$Format:%H$`: the name alone is clearer.
  return version === '' || version.includes('$Format')
    ? basename(s.binary)
    : `${basename(s.binary)} ${version}`;
}

/**
 * kube-scheduler's configuration for the bench: the kubeconfig and the client's QPS and burst in
 * `clientConnection` (where kube-scheduler reads them once a file is given), no leader election.
 */
export function kubeSchedulerConfig(settings: SchedulerClientSettings): string {
  return [
    'apiVersion: kubescheduler.config.k8s.io/v1',
    'kind: KubeSchedulerConfiguration',
    'clientConnection:',
    `  kubeconfig: ${JSON.stringify(settings.kubeconfig)}`,
    `  qps: ${settings.qps}`,
    `  burst: ${settings.burst}`,
    'leaderElection:',
    '  leaderElect: false',
    '',
  ].join('\n');
}

/** The command line of a scheduler under test. */
async function commandLine(
  s: SchedulerKind,
  settings: SchedulerClientSettings,
): Promise<{ file: string; args: string[] }> {
  const common = [`--kubeconfig=${settings.kubeconfig}`, '--leader-elect=false', '--secure-port=0'];
  if (s.kind === 'capstan') {
    return {
      file: process.execPath,
      args: [
        capstanEntry(),
        'scheduler',
        ...common,
        `--kube-api-qps=${settings.qps}`,
        `--kube-api-burst=${settings.burst}`,
      ],
    };
  }
  if (s.kind === 'ceiling')
    return {
      file: process.execPath,
      args: [capstanEntry(), 'bench', 'binder', `--kubeconfig=${settings.kubeconfig}`],
    };
  if (!existsSync(s.binary)) throw new BenchError('BENCH_USAGE', `no scheduler binary at ${s.binary}`);
  const config = join(settings.dir, 'kube-scheduler-config.yaml');
  await writeFile(config, kubeSchedulerConfig(settings));
  return { file: s.binary, args: [`--config=${config}`, ...common] };
}

/**
 * Starts a scheduler. It is running, not necessarily ready: the caller waits for a first pod to
 * be bound before timing anything.
 * @throws BenchError BENCH_SERVER_START when the build or the binary is missing.
 */
export async function spawnScheduler(
  s: SchedulerKind,
  settings: SchedulerClientSettings,
): Promise<SchedulerProcess> {
  const { file, args } = await commandLine(s, settings);
  const child: ChildProcess = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-4096)));
  // Diagnostics: CAPSTAN_BENCH_SCHEDULER_LOG=<file> appends every scheduler's stderr there.
  const logFile = process.env['CAPSTAN_BENCH_SCHEDULER_LOG'];
  if (logFile !== undefined && logFile !== '') {
    const log = createWriteStream(logFile, { flags: 'a' });
    log.write(`== ${file} ${args.join(' ')} (pid ${child.pid ?? '?'}) ${new Date().toISOString()}\n`);
    child.stderr?.pipe(log);
  }
  const exited = new Promise<string>((resolve) => {
    const done = (): void => resolve(lastLines(stderr));
    child.once('exit', done);
    child.once('error', done);
  });
  let gone = false;
  void exited.then(() => (gone = true));
  const killOnParentExit = (): void => {
    child.kill('SIGKILL');
  };
  process.on('exit', killOnParentExit);
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid ?? -1,
    exited,
    stop: () =>
      (stopping ??= (async () => {
        if (!gone) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }
        process.off('exit', killOnParentExit);
      })()),
  };
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ');
}
