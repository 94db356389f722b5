/**
 * Measures a second run of the one-command cluster (issue 31, item 5): with its state present and
 * containerd installed, the time from the command (`bash tools/run.sh --data-dir=DIR ...`) to the
 * restarted agent renewing its node Lease, while a pod keeps running across the restart.
 *
 *   node dist/tools/measure-cluster-restart.js [--runs=5] [--pod-cidr=CIDR] [--bridge=NAME] [--trace]
 *       [--compare=DIR]
 *
 * With `--compare=DIR` (another checkout, built, e.g. a worktree of main) the second runs alternate
 * between this checkout's tools/run.sh and DIR's, on the same state, the order swapped every round.
 *
 * The bridge (and with it the nftables tables named after it) and the pod CIDR are this run's own
 * unless given: `cstm-` and 8 random hex digits, and 10.244.X.0/24 with X drawn from 152-215, so
 * that two runs on one machine do not share a bridge, its tables or its routes.
 *
 * It prepares a temporary data dir (a first run, a Deployment of one busybox pod, Running), then
 * stops and starts the cluster `runs` times. Each run's figure is the wall time from spawning
 * tools/run.sh to the node Lease's `renewTime` (the agent's clock is this machine's), read once
 * the run prints its `node: ... lease renewed` line (which comes after the agent's whole start,
 * its networking included); the renewal must fall between the spawn and that line. The pod's
 * container ID and restart count are checked to be unchanged. Ends with `capstan cluster --reset`.
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
  /** When tools/run.sh was spawned (epoch ms). */
  readonly spawnedAt: number;
  /** From the spawn to the `node: ` line. */
  readonly ms: number;
  readonly line: string;
}

/** With `--trace`: the start-up trace (CAPSTAN_STARTUP_TRACE=1) of each second run is printed. */
const TRACE = process.argv.includes('--trace');

function start(root: string, dataDir: string, podCIDR: string, bridge: string): Promise<Started> {
  const t0 = performance.now();
  const spawnedAt = performance.timeOrigin + t0;
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
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: TRACE ? { ...process.env, CAPSTAN_STARTUP_TRACE: '1' } : process.env,
    },
  );
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    out += d.toString();
  });
  return new Promise((resolveStart, reject) => {
    let seen = false;
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('node: '));
      if (line === undefined || seen) return;
      seen = true;
      const ms = performance.now() - t0;
      if (TRACE) printTrace(err, spawnedAt);
      resolveStart({ child, spawnedAt, ms, line });
    });
    child.once('exit', (code) => reject(new Error(`tools/run.sh exited with ${code}:\n${out}`)));
  });
}

/**
 * Prints the `startup <phase> <ms> cpu <ms>` lines of `stderr` as milliseconds since the command
 * was spawned: tools/run.sh's lines carry the wall clock (`at <epoch ms>`), the capstan process's
 * are since its own start, placed by its `startup process origin <epoch ms>` line.
 */
function printTrace(stderr: string, spawnedAt: number): void {
  let origin: number | undefined;
  for (const line of stderr.split('\n')) {
    const m = /^startup (.*?) (?:at ([\d.]+)|([\d.]+) cpu ([\d.]+))$/.exec(line);
    if (!m) continue;
    const [, phase = '', wall, rel, cpu] = m;
    const o = /^process origin ([\d.]+)$/.exec(phase);
    if (o) origin = Number(o[1]);
    const at = wall !== undefined ? Number(wall) : origin !== undefined ? origin + Number(rel) : NaN;
    const cpuNote = cpu !== undefined ? `  (capstan cpu ${cpu} ms)` : '';
    console.log(`  ${(at - spawnedAt).toFixed(0).padStart(6)} ms  ${phase}${cpuNote}`);
  }
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
    let c = await start(ROOT, dataDir, podCIDR, bridge);
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
    // This checkout, and with --compare the other one, in turn (the order swapped every round).
    const compare = flag('compare', '');
    const roots = compare === '' ? [ROOT] : [ROOT, resolve(compare)];
    const figures = new Map<string, number[]>(roots.map((r) => [r, []]));
    for (let i = 0; i < runs * roots.length; i++) {
      const round = Math.floor(i / roots.length);
      const root = roots[(i + round) % roots.length] ?? ROOT;
      await stop(c.child);
      c = await start(root, dataDir, podCIDR, bridge);
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
      // The first renewal of this run: after the spawn, and before the line printed after it.
      const renewMs = renew - c.spawnedAt;
      if (!(renewMs >= -1 && renewMs <= c.ms + 1)) {
        throw new Error(`the Lease's renewTime is ${renewMs.toFixed(0)} ms from the spawn: not this run's`);
      }
      figures.get(root)?.push(renewMs);
      console.log(
        `second run ${round + 1} of ${root}: ${renewMs.toFixed(0)} ms to the Lease's renewTime (the node line after ${c.ms.toFixed(0)} ms)`,
      );
    }
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await status();
    console.log(
      `pod container and restarts: before ${before}, after ${after} (${before === after ? 'unchanged' : 'CHANGED'})`,
    );
    for (const [root, ms] of figures) {
      ms.sort((a, b) => a - b);
      console.log(
        `${root}: median ${ms[Math.floor(ms.length / 2)]?.toFixed(0)} ms, min ${ms[0]?.toFixed(0)} ms, max ${ms.at(-1)?.toFixed(0)} ms`,
      );
    }
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
