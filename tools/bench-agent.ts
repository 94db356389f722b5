/**
 * The node agent against kubelet v1.33 (issue 32's benchmark), on one containerd and one
 * `capstan server`, the two node agents in turn, round by round, the order reversed every other
 * round. Each turn starts the agent as a process of its own on a fresh node name, waits for its
 * Node to be Ready, and measures:
 *
 * - idle RSS (and idle CPU) of the agent process, with no pods, after `--idle` seconds;
 * - single pods: `--single` pods created one every 2 s, create → Running p50 and p99 (from the
 *   create's answer to the first watch event showing `status.phase: Running`);
 * - a burst: `--burst` pods created at once, p50 and p99 the same way;
 * - steady state: with the burst's pods running, the agent's CPU over `--steady` seconds, as
 *   CPU milliseconds per running pod per minute.
 *
 * Then it deletes the pods (waiting until the agent removed them from the API), stops the agent
 * and removes what it left: sandboxes through CRI, mounts under its root dir, its cgroup root,
 * the iptables chains kubelet adds (`KUBE-KUBELET-CANARY`, `KUBE-IPTABLES-HINT`, ...) when they
 * were not there before, and the kernel settings kubelet changes (`vm.overcommit_memory`,
 * `kernel.panic`, `kernel.panic_on_oops`, ...) are put back. At the end containerd goes with
 * everything it ran, the pods' bridge, and the Service range's blackhole route if the tool added it.
 *
 * Both agents get the same CNI network (the agent writes its bridge conflist from `--pod-cidr`;
 * the same conflist is written for kubelet), the same locally built images (pause as the sandbox,
 * busybox `sleep` as the pod), the admin kubeconfig, and cgroupfs under a cgroup root of their
 * own. kubelet runs with a KubeletConfiguration: cgroupfs, `failCgroupV1: false`,
 * `failSwapOn: false`, image GC off, its servers on free loopback ports. Needs root, containerd,
 * runc, the CNI plugins, busybox-static, a build (`dist/`), and kubelet, which is never part of
 * the repository:
 *
 *   npm run build
 *   node dist/tools/bench-agent.js --kubelet /work/refbuild/bin/kubelet [--rounds 2] [--single 15] \
 *     [--burst 30] [--steady 60] [--idle 15] [--pod-cidr 10.244.240.0/24] [--only capstan|kubelet]
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchClient } from '../src/bench/client.js';
import { readProc } from '../src/bench/proc.js';
import { percentile } from '../src/bench/stats.js';
import { BUSYBOX_IMAGE } from '../src/cluster/dev-images.js';
import {
  arg,
  toolStart,
  hostState,
  removeAgentLeftovers,
  sleep,
  startAgent,
  waitNodeReady,
  withAgentEnv,
  type AgentEnv,
  type Kind,
  type NodeAgent,
} from './node-agents.js';

toolStart(
  'usage: node dist/tools/bench-agent.js [--kubelet PATH] [--rounds N] [--single N] [--burst N] [--steady S] [--idle S] [--pod-cidr CIDR] [--only capstan|kubelet] [--containerd-log-level LEVEL]',
);
const KUBELET = arg('kubelet', '/work/refbuild/bin/kubelet');
const ROUNDS = Number(arg('rounds', '2'));
const SINGLE = Number(arg('single', '15'));
const BURST = Number(arg('burst', '30'));
const STEADY_S = Number(arg('steady', '60'));
const IDLE_S = Number(arg('idle', '15'));
const POD_CIDR = arg('pod-cidr', '10.244.240.0/24');
const ONLY = arg('only', '');
/** containerd's log level (`info` logs every CRI call, to read a pod's start-up timeline). */
const CONTAINERD_LOG_LEVEL = arg('containerd-log-level', 'warn');
/** The server's Service range (its blackhole route covers it while pods run). */
const SERVICE_RANGE = '10.0.0.0/24';
const NS = 'bench-agent';
const TAG = `capbench${process.pid}`;
const BRIDGE = `cba${process.pid}`.slice(0, 15);
/** Watches the bench namespace's pods and notes when each was first seen Running. */
class RunningWatch {
  readonly #running = new Map<string, number>();
  #pending = '';
  readonly #stream;

  constructor(client: BenchClient) {
    this.#stream = client.stream(`/api/v1/namespaces/${NS}/pods?watch=true`, (chunk) => {
      const now = performance.now();
      this.#pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = this.#pending.indexOf('\n')) !== -1) {
        const line = this.#pending.slice(0, nl);
        this.#pending = this.#pending.slice(nl + 1);
        if (!line.includes('"Running"')) continue;
        const ev = JSON.parse(line) as {
          object?: { metadata?: { name?: string }; status?: { phase?: string } };
        };
        const name = ev.object?.metadata?.name;
        if (name !== undefined && ev.object?.status?.phase === 'Running' && !this.#running.has(name))
          this.#running.set(name, now);
      }
    });
  }

  async opened(): Promise<void> {
    const s = await this.#stream.status;
    if (s !== 200) throw new Error(`pod watch answered HTTP ${s}`);
  }

  runningAt(name: string): number | undefined {
    return this.#running.get(name);
  }

  async waitRunning(names: readonly string[], timeoutMs: number, agent: NodeAgent): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (names.some((n) => !this.#running.has(n))) {
      if (agent.exited !== undefined) throw new Error(`${agent.kind} exited: ${agent.exited}`);
      if (Date.now() > until) {
        const left = names.filter((n) => !this.#running.has(n));
        throw new Error(
          `${left.length} pods not Running after ${timeoutMs / 1000} s (${left.slice(0, 3).join(', ')})`,
        );
      }
      await sleep(20);
    }
  }

  close(): void {
    this.#stream.close();
  }
}

function podBody(name: string, node: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: node,
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      dnsPolicy: 'Default',
      terminationGracePeriodSeconds: 1,
      containers: [
        { name: 'c', image: BUSYBOX_IMAGE, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] },
      ],
    },
  });
}

async function createPod(client: BenchClient, name: string, node: string): Promise<number> {
  await client.expect('POST', `/api/v1/namespaces/${NS}/pods`, 201, {
    body: podBody(name, node),
    discardBody: true,
  });
  return performance.now();
}

/** Deletes every pod of the namespace and waits until the agent removed them all. */
async function deleteAll(client: BenchClient, agent: NodeAgent): Promise<void> {
  await client.request('DELETE', `/api/v1/namespaces/${NS}/pods`, { discardBody: true });
  const until = Date.now() + 180_000;
  for (;;) {
    const r = await client.request('GET', `/api/v1/namespaces/${NS}/pods?limit=1`);
    if (r.status === 200 && !r.body.toString('utf8').includes('"nodeName"')) return;
    if (agent.exited !== undefined || Date.now() > until) {
      // Force: the agent is gone or stuck; its containers go with the CRI clean-up.
      await client.request('DELETE', `/api/v1/namespaces/${NS}/pods?gracePeriodSeconds=0`, {
        discardBody: true,
      });
      console.error(`  ${agent.kind}: pods not removed by the agent within 180 s; force-deleted`);
      return;
    }
    await sleep(200);
  }
}

interface Turn {
  kind: Kind;
  round: number;
  readyMs: number;
  idleRssMiB: number;
  idleCpuMsPerMin: number;
  single: number[];
  burst: number[];
  burstWallMs: number;
  /** The agent's CPU from the burst's first create to its last pod Running. */
  burstCpuMs: number;
  steadyCpuMsPerPodMin: number;
  steadyRssMiB: number;
}

async function turn(kind: Kind, round: number, env: AgentEnv): Promise<Turn> {
  const client = env.client;
  const node = `${TAG}-${kind}-${round}`;
  const turnDir = join(env.dir, node);
  const cgroupRoot = `/${node}`;
  const before = hostState();
  const agent = await startAgent(kind, env, turnDir, node, cgroupRoot);
  const watch = new RunningWatch(client);
  try {
    await watch.opened();
    const readyMs = await waitNodeReady(client, agent);
    console.error(`round ${round} ${kind}: node Ready after ${readyMs.toFixed(0)} ms; idle ${IDLE_S} s`);
    await sleep(IDLE_S * 1000);
    const i0 = readProc(agent.pid);
    await sleep(10_000);
    const i1 = readProc(agent.pid);
    if (i0 === undefined || i1 === undefined) throw new Error(`${kind}: cannot read /proc/${agent.pid}`);
    const idleRssMiB = i1.rssBytes / 2 ** 20;
    const idleCpuMsPerMin = ((i1.cpuMs - i0.cpuMs) * 60) / 10;

    const single: number[] = [];
    for (let i = 0; i < SINGLE; i++) {
      const name = `single-${i}`;
      const next = sleep(2000);
      const at = await createPod(client, name, node);
      await watch.waitRunning([name], 60_000, agent);
      single.push((watch.runningAt(name) as number) - at);
      if (CONTAINERD_LOG_LEVEL !== 'warn')
        console.error(
          `  ${name}: created ${new Date(performance.timeOrigin + at).toISOString()}, Running after ${single.at(-1)?.toFixed(0)} ms`,
        );
      await next;
    }
    console.error(`round ${round} ${kind}: single p50 ${percentile(single, 50).toFixed(0)} ms; deleting`);
    await deleteAll(client, agent);

    const names = Array.from({ length: BURST }, (_, i) => `burst-${i}`);
    const b0 = readProc(agent.pid);
    const t0 = performance.now();
    const created = await Promise.all(names.map((n) => createPod(client, n, node)));
    await watch.waitRunning(names, 120_000, agent);
    const burst = names.map((n, i) => (watch.runningAt(n) as number) - (created[i] as number));
    const burstWallMs = Math.max(...names.map((n) => watch.runningAt(n) as number)) - t0;
    const burstCpuMs = (readProc(agent.pid)?.cpuMs ?? Number.NaN) - (b0?.cpuMs ?? Number.NaN);
    console.error(
      `round ${round} ${kind}: burst p99 ${percentile(burst, 99).toFixed(0)} ms; steady ${STEADY_S} s`,
    );
    await sleep(10_000);
    const s0 = readProc(agent.pid);
    await sleep(STEADY_S * 1000);
    const s1 = readProc(agent.pid);
    if (s0 === undefined || s1 === undefined) throw new Error(`${kind}: cannot read /proc/${agent.pid}`);
    const steadyCpuMsPerPodMin = ((s1.cpuMs - s0.cpuMs) * 60) / STEADY_S / BURST;
    await deleteAll(client, agent);
    return {
      kind,
      round,
      readyMs,
      idleRssMiB,
      idleCpuMsPerMin,
      single,
      burst,
      burstWallMs,
      burstCpuMs,
      steadyCpuMsPerPodMin,
      steadyRssMiB: s1.rssBytes / 2 ** 20,
    };
  } finally {
    watch.close();
    await agent.stop();
    await removeAgentLeftovers(env, agent, turnDir, cgroupRoot, before);
  }
}

const fmt = (n: number): string => n.toFixed(0);

function table(turns: Turn[]): string {
  const lines = [
    `| node agent | round | single p50 ms | single p99 ms | ${BURST} at once p50 ms | p99 ms | last Running ms | burst CPU ms | idle RSS MiB | idle CPU ms/min | steady CPU ms per pod per min | steady RSS MiB |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const t of turns)
    lines.push(
      `| ${t.kind} | ${t.round} | ${fmt(percentile(t.single, 50))} | ${fmt(percentile(t.single, 99))} | ${fmt(percentile(t.burst, 50))} | ${fmt(percentile(t.burst, 99))} | ${fmt(t.burstWallMs)} | ${fmt(t.burstCpuMs)} | ${t.idleRssMiB.toFixed(1)} | ${fmt(t.idleCpuMsPerMin)} | ${t.steadyCpuMsPerPodMin.toFixed(1)} | ${t.steadyRssMiB.toFixed(1)} |`,
    );
  for (const kind of ['capstan', 'kubelet'] as const) {
    const ts = turns.filter((t) => t.kind === kind);
    if (ts.length < 2) continue;
    const all = (f: (t: Turn) => number[]): number[] => ts.flatMap(f);
    const mean = (f: (t: Turn) => number): number => ts.reduce((a, t) => a + f(t), 0) / ts.length;
    lines.push(
      `| ${kind} | all | ${fmt(
        percentile(
          all((t) => t.single),
          50,
        ),
      )} | ${fmt(
        percentile(
          all((t) => t.single),
          99,
        ),
      )} | ${fmt(
        percentile(
          all((t) => t.burst),
          50,
        ),
      )} | ${fmt(
        percentile(
          all((t) => t.burst),
          99,
        ),
      )} | ${fmt(mean((t) => t.burstWallMs))} | ${fmt(mean((t) => t.burstCpuMs))} | ${mean((t) => t.idleRssMiB).toFixed(1)} | ${fmt(mean((t) => t.idleCpuMsPerMin))} | ${mean((t) => t.steadyCpuMsPerPodMin).toFixed(1)} | ${mean((t) => t.steadyRssMiB).toFixed(1)} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (ONLY !== 'capstan' && !existsSync(KUBELET))
    throw new Error(`no kubelet at ${KUBELET} (--kubelet PATH)`);
  const dir = await mkdtemp(join(tmpdir(), `${TAG}-`));
  const opts = {
    dir,
    kubelet: KUBELET,
    bridge: BRIDGE,
    podCIDR: POD_CIDR,
    serviceRange: SERVICE_RANGE,
    controllers: ['namespace-controller', 'serviceaccount-controller'],
    containerdLogLevel: CONTAINERD_LOG_LEVEL,
  };
  await withAgentEnv(opts, async (env) => {
    const client = env.client;
    await client.expect('POST', '/api/v1/namespaces', 201, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }),
      discardBody: true,
    });
    const sa = await client.request('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
      discardBody: true,
    });
    if (sa.status !== 201 && sa.status !== 409)
      throw new Error(`creating the ServiceAccount: HTTP ${sa.status}`);
    const kinds: Kind[] = ONLY === '' ? ['capstan', 'kubelet'] : [ONLY as Kind];
    const turns: Turn[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? kinds : [...kinds].reverse();
      for (const kind of order) turns.push(await turn(kind, round, env));
    }
    // A build without version stamping says `Kubernetes v0.0.0-master+$Format:%H$`: name the path.
    const stamped = spawnSync(KUBELET, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    const version = stamped.includes('$Format') ? `kubelet at ${KUBELET}` : stamped;
    console.log(
      `\ncapstan agent vs ${version || 'kubelet'}; ${SINGLE} single pods (one every 2 s), ${BURST} at once, steady ${STEADY_S} s`,
    );
    console.log(table(turns));
    console.log(
      `load average: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(`logs: ${dir} (removed)`);
  });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
