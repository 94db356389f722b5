/**
 * Measures a second run of the one-command cluster (issue 31, item 5): with its state present and
 * containerd installed, the time from the command (`bash tools/run.sh --data-dir=DIR ...`) to the
 * restarted agent renewing its node Lease, while a pod keeps running across the restart.
 *
 *   node dist/tools/measure-cluster-restart.js [--runs=5] [--pod-cidr=CIDR] [--bridge=NAME]
 *
 * The bridge (and with it the nftables tables named after it) and the pod CIDR are this run's own
 * unless given: `cstm-` and 8 random hex digits, and 10.244.X.0/24 with X drawn from 152-215, so
 * that two runs on one machine do not share a bridge, its tables or its routes.
 *
 * It prepares a temporary data dir (a first run, a Deployment of one busybox pod, Running), then
 * stops and starts the cluster `runs` times. Each run's figure is the wall time from spawning
 * tools/run.sh to its `node: ... lease renewed` line (printed right after the agent's first Lease
 * renewal of that run); the Lease's `renewTime` is checked to fall inside the run, and the pod's
 * container ID and restart count to be unchanged. Ends with `capstan cluster --reset`.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

function flag(name: string, def: string): string {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? def : a.slice(name.length + 3);
}

interface Started {
  readonly child: ChildProcess;
  readonly ms: number;
  readonly line: string;
}

function start(dataDir: string, podCIDR: string, bridge: string): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(
    'bash',
    [
      'tools/run.sh',
      `--data-dir=${dataDir}`,
      `--cert-dir=${dataDir}/pki`,
      '--secure-port=0',
      `--pod-cidr=${podCIDR}`,
      `--bridge=${bridge}`,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolveStart, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('node: '));
      if (line !== undefined) resolveStart({ child, ms: performance.now() - t0, line });
    });
    child.once('exit', (code) => reject(new Error(`tools/run.sh exited with ${code}:\n${out}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((r) => {
    child.once('exit', () => r());
    child.kill('SIGTERM');
  });
}

async function kubectl(dataDir: string, ...args: string[]): Promise<string> {
  return (await run(KUBECTL, ['--kubeconfig', join(dataDir, 'admin.kubeconfig'), ...args])).stdout;
}

async function main(): Promise<void> {
  const runs = Number(flag('runs', '5'));
  const podCIDR = flag('pod-cidr', `10.244.${randomInt(152, 216)}.0/24`);
  const bridge = flag('bridge', `cstm-${randomBytes(4).toString('hex')}`);
  console.log(`bridge ${bridge}, pod CIDR ${podCIDR}`);
  const dataDir = await mkdtemp(join(tmpdir(), 'capstan-measure-'));
  try {
    let c = await start(dataDir, podCIDR, bridge);
    console.log(`first run (state created): ${c.ms.toFixed(0)} ms`);
    await kubectl(
      dataDir,
      'create',
      'deployment',
      'web',
      '--image=docker.io/capstan/busybox:1',
      '--',
      'sleep',
      '1000000',
    );
    await kubectl(dataDir, 'rollout', 'status', 'deployment/web', '--timeout=120s');
    const status = (): Promise<string> =>
      kubectl(
        dataDir,
        'get',
        'pods',
        '-l',
        'app=web',
        '-o',
        'jsonpath={.items[0].status.containerStatuses[0].containerID} {.items[0].status.containerStatuses[0].restartCount}',
      );
    const before = await status();
    const figures: number[] = [];
    for (let i = 0; i < runs; i++) {
      await stop(c.child);
      const wallStart = Date.now();
      c = await start(dataDir, podCIDR, bridge);
      const renew = Date.parse(
        await kubectl(
          dataDir,
          'get',
          'lease',
          '-n',
          'kube-node-lease',
          'capstan-node-0',
          '-o',
          'jsonpath={.spec.renewTime}',
        ),
      );
      const inside = renew >= wallStart - 1 && renew <= wallStart + c.ms + 1;
      figures.push(c.ms);
      const inProcess = /lease renewed ([\d.]+) s after start/.exec(c.line)?.[1] ?? '?';
      console.log(
        `second run ${i + 1}: ${c.ms.toFixed(0)} ms to the lease renewal, ${inProcess} s of it in the capstan process (renewTime inside the run: ${inside})`,
      );
    }
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await status();
    console.log(
      `pod container and restarts: before ${before}, after ${after} (${before === after ? 'unchanged' : 'CHANGED'})`,
    );
    figures.sort((a, b) => a - b);
    console.log(
      `median ${figures[Math.floor(figures.length / 2)]?.toFixed(0)} ms, min ${figures[0]?.toFixed(0)} ms, max ${figures.at(-1)?.toFixed(0)} ms`,
    );
    await stop(c.child);
  } finally {
    await run('node', [
      join(ROOT, 'dist/bundle/capstan.js'),
      'cluster',
      '--reset',
      `--data-dir=${dataDir}`,
      `--cert-dir=${dataDir}/pki`,
    ]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
