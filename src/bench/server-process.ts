/**
 * A `capstan server` child process the bench starts itself: on 127.0.0.1, a free port, and a data
 * directory the caller owns (fresh or populated), so that start-up can be timed from process
 * start and the server's CPU and memory read from `/proc`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readKubeconfigCredentials } from '../pki/kubeconfig-credentials.js';
import { freePort } from './cluster/children.js';
import { fastestCliEntryPath } from '../server/package-version.js';
import { BenchClient } from './client.js';
import { BenchError } from './errors.js';
import { msSince } from './stats.js';

/** The `capstan` entry point servers are started from: the bundle when built (as tools/run.sh runs it). */
export const CAPSTAN_MAIN = fastestCliEntryPath();

/** Options of {@link spawnServer}. */
export interface SpawnOptions {
  /** `--data-dir` (certificates go to `<dataDir>/pki`). */
  readonly dataDir: string;
  /** More `capstan server` flags (e.g. `--etcd-servers=...`). */
  readonly extraArgs?: readonly string[];
  /** The `capstan` entry to run (default {@link CAPSTAN_MAIN}; a start-up comparison runs two builds). */
  readonly main?: string;
  /** `--bind-address` (default 127.0.0.1; another loopback address for servers of one control plane). */
  readonly bindAddress?: string;
  /** `--secure-port` (default: a free port); a restart passes the previous one. */
  readonly port?: number;
  /** How long to wait for the first successful request (default 60 s). */
  readonly timeoutMs?: number;
}

/** A started server and its start-up figures. */
export interface SpawnedServer {
  readonly pid: number;
  readonly port: number;
  readonly kubeconfigPath: string;
  /** Process start to the first authenticated 200 (`GET /api/v1/namespaces/default`). */
  readonly firstRequestMs: number;
  /** Process start to the first `/readyz` 200. */
  readonly readyMs: number;
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process exited. Idempotent. */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `capstan server` and resolves once it answered an authenticated request and `/readyz`.
 * @throws BenchError BENCH_SERVER_START when the build is missing, the process exits early, or
 *   it does not answer within the timeout (the process is killed first).
 */
export async function spawnServer(options: SpawnOptions): Promise<SpawnedServer> {
  const main = options.main ?? CAPSTAN_MAIN;
  if (!existsSync(main))
    throw new BenchError('BENCH_SERVER_START', `${main} is missing: run npm run build first`);
  const port = options.port ?? (await freePort());
  const kubeconfigPath = join(options.dataDir, 'admin.kubeconfig');
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      main,
      'server',
      `--data-dir=${options.dataDir}`,
      `--secure-port=${port}`,
      `--bind-address=${options.bindAddress ?? '127.0.0.1'}`,
      ...(options.extraArgs ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-2048)));
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      resolve();
    });
    child.once('error', () => {
      exited = true;
      resolve();
    });
  });
  const killOnParentExit = (): void => {
    child.kill('SIGKILL');
  };
  process.on('exit', killOnParentExit);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(timer);
      }
      process.off('exit', killOnParentExit);
    })());

  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let client: BenchClient | undefined;
  try {
    let firstRequestMs = Number.NaN;
    let readyMs = Number.NaN;
    while (Number.isNaN(firstRequestMs) || Number.isNaN(readyMs)) {
      if (exited) throw new BenchError('BENCH_SERVER_START', `capstan server exited: ${lastLine(stderr)}`);
      if (Date.now() > deadline)
        throw new BenchError(
          'BENCH_SERVER_START',
          `capstan server did not answer in time: ${lastLine(stderr)}`,
        );
      try {
        // The kubeconfig is written once the server listens; until then it may be a previous run's
        // (populated data dir), which names the old port: wait for this run's port.
        client ??= clientFor(kubeconfigPath, port);
        if (
          Number.isNaN(firstRequestMs) &&
          (await client.request('GET', '/api/v1/namespaces/default')).status === 200
        )
          firstRequestMs = msSince(started);
        if (Number.isNaN(readyMs) && (await client.request('GET', '/readyz')).status === 200)
          readyMs = msSince(started);
      } catch {
        client?.close();
        client = undefined;
      }
      if (Number.isNaN(firstRequestMs) || Number.isNaN(readyMs)) await sleep(2);
    }
    return { pid: child.pid ?? -1, port, kubeconfigPath, firstRequestMs, readyMs, stop };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    client?.close();
  }
}

function clientFor(kubeconfigPath: string, port: number): BenchClient {
  const creds = readKubeconfigCredentials(kubeconfigPath);
  if (new URL(creds.server).port !== String(port)) throw new Error('kubeconfig from an earlier run');
  return new BenchClient(creds, 1);
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}
