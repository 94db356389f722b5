/**
 * Measures a real `capstan server` process: time from spawn to the first successful authenticated
 * request, idle RSS, and RSS after creating N ConfigMaps.
 *
 *   npm run build && node dist/tools/measure-server.js [--configmaps 10000] [--runs 3]
 *
 * Each run starts the built server on a fresh temporary data dir and random port (embedded
 * LevelDB store), so the start includes generating certificates and creating the store.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readKubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';
import { IDLE_MS } from '../src/bench/scenarios/startup.js';
import { fmt, median, msSince } from '../src/bench/stats.js';

const MAIN = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        typeof addr === 'object' && addr !== null ? resolve(addr.port) : reject(new Error('no port')),
      );
    });
  });
}

/** CA and admin client credentials from a kubeconfig the server wrote. */
function credentials(kubeconfig: string): { ca?: string; cert?: string; key?: string } {
  const { ca, cert, key } = readKubeconfigCredentials(kubeconfig);
  return {
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  };
}

function call(agent: Agent, port: number, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: body ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) / 1024;
}

interface RunResult {
  startMs: number;
  idleRssMiB: number;
  loadedRssMiB: number | undefined;
}

async function oneRun(configmaps: number): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-measure-'));
  const port = await freePort();
  const kubeconfig = join(dir, 'data', 'admin.kubeconfig');
  const started = process.hrtime.bigint();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      MAIN,
      'server',
      `--data-dir=${join(dir, 'data')}`,
      `--cert-dir=${join(dir, 'certs')}`,
      `--secure-port=${port}`,
      '--bind-address=127.0.0.1',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    let agent: Agent | undefined;
    let startMs = Number.NaN;
    for (let i = 0; i < 3000 && Number.isNaN(startMs); i++) {
      try {
        agent ??= new Agent({ ...credentials(kubeconfig), keepAlive: true, maxSockets: 32 });
        if ((await call(agent, port, 'GET', '/api/v1/namespaces/default')) === 200)
          startMs = msSince(started);
      } catch {
        await new Promise((r) => setTimeout(r, 2));
      }
    }
    if (agent === undefined || Number.isNaN(startMs))
      throw new Error('server did not answer within the polling budget');
    // Idle once V8's memory reducer has shrunk the start-up heap, as `capstan bench startup` reads it.
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const pid = child.pid ?? 0;
    const idleRssMiB = rssMiB(pid);
    let loadedRssMiB: number | undefined;
    if (configmaps > 0) {
      const data = { payload: 'x'.repeat(1000) };
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < configmaps) {
            const name = `cm-${next++}`;
            const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
            const code = await call(agent, port, 'POST', '/api/v1/namespaces/default/configmaps', body);
            if (code !== 201) throw new Error(`create ${name}: HTTP ${code}`);
          }
        }),
      );
      await new Promise((r) => setTimeout(r, 2000));
      loadedRssMiB = rssMiB(pid);
    }
    agent.destroy();
    return { startMs, idleRssMiB, loadedRssMiB };
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string, fallback: number): number => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const runs = arg('--runs', 3);
  const configmaps = arg('--configmaps', 10_000);
  const results: RunResult[] = [];
  for (let i = 0; i < runs; i++) results.push(await oneRun(i === runs - 1 ? configmaps : 0));
  const starts = results.map((r) => r.startMs);
  const last = results[results.length - 1];
  console.log(
    `start to first successful request (fresh data dir): median ${fmt(median(starts))} ms over ${runs} runs (${starts.map(fmt).join(', ')})`,
  );
  console.log(`idle RSS: ${results.map((r) => fmt(r.idleRssMiB)).join(', ')} MiB`);
  if (last?.loadedRssMiB !== undefined)
    console.log(
      `RSS with ${configmaps.toLocaleString('en-US')} ConfigMaps of 1 KiB: ${fmt(last.loadedRssMiB)} MiB`,
    );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
