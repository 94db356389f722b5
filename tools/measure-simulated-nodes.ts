/**
 * Simulated nodes at scale (issue 31 item 3): starts `capstan server` and, as a separate process,
 * `capstan agent --simulate --nodes=N`; times the registration, optionally binds M pods to the
 * nodes and times them to Running, then reads the agent's CPU and RSS from `/proc` over an idle
 * window (no pod changes; leases every 10 s and node status every 5 m go on). The goal is
 * 1,000 idle nodes at ≤ 5% of one core; the figures are printed, not asserted.
 *
 *   npm run build && node dist/tools/measure-simulated-nodes.js [--nodes 1000] [--pods 0]
 *       [--idle-seconds 60] [--qps 500] [--cpu-prof DIR]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '../src/api/types/core-v1.js';
import { Client, loadKubeconfig, NAMESPACES, PODS } from '../src/client/index.js';
import { readProc } from '../src/bench/proc.js';
import { CAPSTAN_MAIN, spawnServer } from '../src/bench/server-process.js';

interface Args {
  nodes: number;
  pods: number;
  idleSeconds: number;
  qps: number;
  /** Directory for a V8 CPU profile of the agent (`--cpu-prof-dir`), if any. */
  cpuProf: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { nodes: 1000, pods: 0, idleSeconds: 60, qps: 500, cpuProf: undefined };
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i];
    if (name === '--cpu-prof') {
      args.cpuProf = argv[i + 1];
      continue;
    }
    const value = Number(argv[i + 1]);
    if (!Number.isFinite(value)) throw new Error(`${name}: a number is required`);
    if (name === '--nodes') args.nodes = value;
    else if (name === '--pods') args.pods = value;
    else if (name === '--idle-seconds') args.idleSeconds = value;
    else if (name === '--qps') args.qps = value;
    else throw new Error(`unknown flag ${name}`);
  }
  return args;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dataDir = await mkdtemp(join(tmpdir(), 'capstan-simnodes-'));
  const server = await spawnServer({
    dataDir,
    extraArgs: ['--max-requests-inflight=4000', '--max-mutating-requests-inflight=2000'],
  });
  const agent = spawn(
    process.execPath,
    [
      ...(args.cpuProf === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${args.cpuProf}`]),
      CAPSTAN_MAIN,
      'agent',
      '--simulate',
      `--kubeconfig=${server.kubeconfigPath}`,
      `--nodes=${args.nodes}`,
      `--kube-api-qps=${args.qps}`,
      `--kube-api-burst=${args.qps * 2}`,
    ],
    { stdio: ['ignore', 'inherit', 'pipe'] },
  );
  const started = Date.now();
  try {
    await new Promise<void>((resolve, reject) => {
      let text = '';
      agent.stderr.on('data', (c: Buffer) => {
        text += c.toString('utf8');
        process.stderr.write(c);
        if (text.includes('registered in')) resolve();
      });
      agent.once('exit', (code) => reject(new Error(`the agent exited (${String(code)})`)));
    });
    console.log(`${args.nodes} nodes registered in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const client = new Client({
      ...loadKubeconfig(server.kubeconfigPath),
      qps: args.qps,
      burst: args.qps * 2,
    });
    if (args.pods > 0) {
      const ns = 'sim-scale';
      await client
        .resource(NAMESPACES)
        .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      const podsApi = client.resource<Pod>(PODS);
      const t0 = Date.now();
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let i = next++; i < args.pods; i = next++) {
          await podsApi.create({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: `p-${i}`, namespace: ns },
            spec: {
              nodeName: `sim-node-${i % args.nodes}`,
              containers: [{ name: 'app', image: 'nginx:1.27' }],
            },
          });
        }
      };
      await Promise.all(Array.from({ length: 64 }, worker));
      console.log(`${args.pods} pods created in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      for (;;) {
        const left = await podsApi.list({ namespace: ns, fieldSelector: 'status.phase!=Running', limit: 1 });
        if (left.items.length === 0) break;
        await sleep(2000);
      }
      console.log(
        `${args.pods} pods Running ${((Date.now() - t0) / 1000).toFixed(1)} s after the first create`,
      );
    }
    await client.close();
    await sleep(5000); // let the last writes settle
    const pid = agent.pid ?? 0;
    const a0 = readProc(pid);
    const s0 = readProc(server.pid);
    await sleep(args.idleSeconds * 1000);
    const a1 = readProc(pid);
    const s1 = readProc(server.pid);
    if (a0 === undefined || a1 === undefined || s0 === undefined || s1 === undefined)
      throw new Error('no /proc readings');
    const pct = (a: number, b: number): string =>
      `${(((b - a) / (args.idleSeconds * 1000)) * 100).toFixed(2)}%`;
    console.log(
      `idle over ${args.idleSeconds} s: agent CPU ${pct(a0.cpuMs, a1.cpuMs)} of one core, RSS ${(a1.rssBytes / 2 ** 20).toFixed(0)} MiB; ` +
        `server CPU ${pct(s0.cpuMs, s1.cpuMs)}, RSS ${(s1.rssBytes / 2 ** 20).toFixed(0)} MiB`,
    );
  } finally {
    const exited = new Promise((r) => agent.once('exit', r));
    agent.kill('SIGTERM');
    const timer = setTimeout(() => agent.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
