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
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { loadavg, networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { bridgeConflist, CNI_CONF_FILE } from '../src/agent/network/cni.js';
import { CriClient } from '../src/agent/cri/client.js';
import { BenchClient } from '../src/bench/client.js';
import { readProc } from '../src/bench/proc.js';
import { capstanEntry } from '../src/bench/scheduler/process.js';
import { spawnServer, type SpawnedServer } from '../src/bench/server-process.js';
import { percentile } from '../src/bench/stats.js';
import { ContainerdProcess } from '../src/cluster/containerd.js';
import {
  CleanupErrors,
  removeBridgeIfUnused,
  removeCgroupTree,
  removeWorkloads,
  teardownLeftovers,
  unmountUnder,
} from '../src/cluster/containerd-teardown.js';
import { BUSYBOX_IMAGE, buildImages } from '../src/cluster/dev-images.js';
import { ensureBlackhole, removeBlackhole } from '../src/cluster/service-route.js';
import { readKubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : (process.argv[i + 1] ?? dflt);
};
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
/** The kernel settings kubelet's container manager sets (protectKernelDefaults: false). */
const SYSCTLS = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
];

type Kind = 'capstan' | 'kubelet';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        typeof addr === 'object' && addr !== null ? resolve(addr.port) : reject(new Error('no port')),
      );
    });
  });
}

/** The machine's first non-loopback IPv4 address (kubelet refuses a loopback node IP). */
function hostIP(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('no non-loopback IPv4 address for the node IP');
}

/** iptables chains per table and family, to find the ones a run added. */
function iptablesChains(): Set<string> {
  const chains = new Set<string>();
  for (const bin of ['iptables', 'ip6tables']) {
    for (const table of ['filter', 'nat', 'mangle']) {
      const r = spawnSync(bin, ['-w', '-t', table, '-S'], { encoding: 'utf8' });
      for (const line of (r.stdout ?? '').split('\n')) {
        const m = /^-N (\S+)/.exec(line);
        if (m?.[1] !== undefined) chains.add(`${bin} ${table} ${m[1]}`);
      }
    }
  }
  return chains;
}

/**
 * Removes the chains of `after` that are not in `before` (all of them a run's own): first the
 * rules elsewhere that jump to them (kubelet's `-A INPUT -j KUBE-FIREWALL`), then their rules,
 * then the chains.
 */
function removeNewChains(before: Set<string>, after: Set<string>): string[] {
  const added = [...after].filter((c) => !before.has(c));
  for (const c of added) {
    const [bin, table, chain] = c.split(' ') as [string, string, string];
    const rules = spawnSync(bin, ['-w', '-t', table, '-S'], { encoding: 'utf8' }).stdout ?? '';
    for (const line of rules.split('\n')) {
      if (!line.startsWith('-A ') || !line.endsWith(` -j ${chain}`)) continue;
      // `-S` prints rules as they are given: the same words after `-D` delete this one.
      spawnSync(bin, ['-w', '-t', table, '-D', ...line.slice(3).split(' ')]);
    }
    spawnSync(bin, ['-w', '-t', table, '-F', chain]);
  }
  for (const c of added) {
    const [bin, table, chain] = c.split(' ') as [string, string, string];
    const r = spawnSync(bin, ['-w', '-t', table, '-X', chain], { encoding: 'utf8' });
    if (r.status !== 0) console.error(`cannot delete ${c}: ${r.stderr}`);
  }
  return added;
}

function readSysctls(): Map<string, string> {
  const m = new Map<string, string>();
  for (const k of SYSCTLS) {
    try {
      m.set(k, readFileSync(`/proc/sys/${k}`, 'utf8').trim());
    } catch {
      // absent on this kernel
    }
  }
  return m;
}

function restoreSysctls(saved: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [k, v] of saved) {
    const now = readFileSync(`/proc/sys/${k}`, 'utf8').trim();
    if (now === v) continue;
    changed.push(`${k} ${now} → ${v}`);
    writeFileSync(`/proc/sys/${k}`, v);
  }
  return changed;
}

/** Creates the cgroup `relative` in every v1 hierarchy (kubelet wants its cgroup root to exist). */
function makeCgroup(relative: string): void {
  for (const h of [
    'cpu',
    'cpuacct',
    'cpuset',
    'memory',
    'pids',
    'hugetlb',
    'blkio',
    'devices',
    'freezer',
    'systemd',
  ]) {
    const base = join('/sys/fs/cgroup', h);
    if (existsSync(base)) mkdirSync(join(base, relative), { recursive: true });
  }
}

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

/** A running node agent process. */
interface NodeAgent {
  readonly kind: Kind;
  readonly node: string;
  readonly pid: number;
  /** Why it exited, once it did. */
  readonly exited: string | undefined;
  stop(): Promise<void>;
}

interface Env {
  readonly dir: string;
  readonly server: SpawnedServer;
  readonly ctrd: ContainerdProcess;
  readonly nodeIP: string;
}

function startProcess(kind: Kind, node: string, file: string, args: string[], logPath: string): NodeAgent {
  const child: ChildProcess = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = createWriteStream(logPath, { flags: 'a' });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let tail = '';
  child.stderr?.on('data', (c: Buffer) => (tail = (tail + c.toString()).slice(-1500)));
  let exited: string | undefined;
  const gone = new Promise<void>((resolve) =>
    child.once('exit', (code, sig) => {
      exited = `status ${code ?? sig}: ${tail.trim().split('\n').slice(-3).join(' | ')}`;
      resolve();
    }),
  );
  const kill = (): void => void child.kill('SIGKILL');
  process.on('exit', kill);
  return {
    kind,
    node,
    pid: child.pid ?? -1,
    get exited() {
      return exited;
    },
    async stop() {
      if (exited === undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await gone;
        clearTimeout(timer);
      }
      process.off('exit', kill);
      log.end();
    },
  };
}

async function startAgent(
  kind: Kind,
  env: Env,
  turnDir: string,
  node: string,
  cgroupRoot: string,
): Promise<NodeAgent> {
  const kubeconfig = env.server.kubeconfigPath;
  const logPath = join(env.dir, `${node}.log`);
  if (kind === 'capstan') {
    return startProcess(
      kind,
      node,
      process.execPath,
      [
        capstanEntry(),
        'agent',
        `--kubeconfig=${kubeconfig}`,
        `--hostname-override=${node}`,
        `--container-runtime-endpoint=${env.ctrd.endpoint}`,
        `--root-dir=${join(turnDir, 'root')}`,
        `--pod-logs-dir=${join(turnDir, 'logs')}`,
        `--cni-conf-dir=${env.ctrd.layout.cniConfDir}`,
        `--cni-bridge=${BRIDGE}`,
        `--cgroup-root=${cgroupRoot}`,
        '--address=127.0.0.1',
        '--port=0',
        '--healthz-port=0',
        `--node-ip=${env.nodeIP}`,
        `--pod-cidr=${POD_CIDR}`,
      ],
      logPath,
    );
  }
  // The same network as the agent's, its host-local state under this turn's directory.
  writeFileSync(
    join(env.ctrd.layout.cniConfDir, CNI_CONF_FILE),
    bridgeConflist('capstan', BRIDGE, POD_CIDR, join(turnDir, 'cni/networks')),
  );
  makeCgroup(cgroupRoot);
  const config = join(turnDir, 'kubelet.yaml');
  mkdirSync(turnDir, { recursive: true });
  writeFileSync(
    config,
    [
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'cgroupDriver: cgroupfs',
      `cgroupRoot: ${cgroupRoot}`,
      'failCgroupV1: false',
      'failSwapOn: false',
      `containerRuntimeEndpoint: ${env.ctrd.endpoint}`,
      `podLogsDir: ${join(turnDir, 'logs')}`,
      'address: 127.0.0.1',
      `port: ${await freePort()}`,
      'healthzBindAddress: 127.0.0.1',
      `healthzPort: ${await freePort()}`,
      'readOnlyPort: 0',
      'authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}',
      'authorization: {mode: AlwaysAllow}',
      'imageGCHighThresholdPercent: 100',
      'imageGCLowThresholdPercent: 99',
      'oomScoreAdj: 0',
      'resolvConf: /etc/resolv.conf',
      '',
    ].join('\n'),
  );
  return startProcess(
    kind,
    node,
    KUBELET,
    [
      `--config=${config}`,
      `--kubeconfig=${kubeconfig}`,
      `--hostname-override=${node}`,
      `--node-ip=${env.nodeIP}`,
      `--root-dir=${join(turnDir, 'root')}`,
      `--cert-dir=${join(turnDir, 'pki')}`,
      '--v=1',
    ],
    logPath,
  );
}

interface NodeStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

async function waitNodeReady(client: BenchClient, agent: NodeAgent): Promise<number> {
  const t0 = performance.now();
  const until = Date.now() + 120_000;
  for (;;) {
    if (agent.exited !== undefined) throw new Error(`${agent.kind} exited: ${agent.exited}`);
    const r = await client.request('GET', `/api/v1/nodes/${agent.node}`);
    if (r.status === 200) {
      const n = JSON.parse(r.body.toString('utf8')) as NodeStatus;
      if (n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        return performance.now() - t0;
    }
    if (Date.now() > until) throw new Error(`${agent.kind}: node ${agent.node} not Ready after 120 s`);
    await sleep(100);
  }
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

async function turn(kind: Kind, round: number, env: Env, client: BenchClient): Promise<Turn> {
  const node = `${TAG}-${kind}-${round}`;
  const turnDir = join(env.dir, node);
  const cgroupRoot = `/${node}`;
  const chainsBefore = iptablesChains();
  const sysctls = readSysctls();
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
    await client.request('DELETE', `/api/v1/nodes/${node}`, { discardBody: true }).catch(() => undefined);
    // What the agent left: sandboxes (the next agent would see them as orphans), mounts, cgroups.
    const cri = new CriClient(env.ctrd.endpoint);
    try {
      for (const sb of await cri.listPodSandbox()) {
        await cri.stopPodSandbox(sb.id);
        await cri.removePodSandbox(sb.id);
      }
    } finally {
      cri.close();
    }
    await unmountUnder(turnDir);
    await removeCgroupTree(cgroupRoot).catch((err: unknown) =>
      console.error(`cgroups of ${node}: ${String(err)}`),
    );
    const chains = removeNewChains(chainsBefore, iptablesChains());
    const restored = restoreSysctls(sysctls);
    if (chains.length > 0 || restored.length > 0)
      console.error(
        `  ${kind} left (removed): chains ${chains.join(', ') || 'none'}; sysctls ${restored.join(', ') || 'none'}`,
      );
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
  const errors = new CleanupErrors();
  let server: SpawnedServer | undefined;
  let ctrd: ContainerdProcess | undefined;
  let client: BenchClient | undefined;
  let addedRoute = false;
  try {
    server = await spawnServer({
      dataDir: join(dir, 'server'),
      extraArgs: [
        '--controllers=namespace-controller,serviceaccount-controller',
        `--service-cluster-ip-range=${SERVICE_RANGE}`,
      ],
      main: capstanEntry(),
    });
    ctrd = await ContainerdProcess.start(join(dir, 'containerd'), { logLevel: CONTAINERD_LOG_LEVEL });
    const c = ctrd;
    for (const img of await buildImages(join(dir, 'images')))
      await c.ctr('-n', 'k8s.io', 'images', 'import', img.path);
    addedRoute = await ensureBlackhole(SERVICE_RANGE);
    client = new BenchClient(readKubeconfigCredentials(server.kubeconfigPath), 2);
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
    const env: Env = { dir, server, ctrd, nodeIP: hostIP() };
    const kinds: Kind[] = ONLY === '' ? ['capstan', 'kubelet'] : [ONLY as Kind];
    const turns: Turn[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 === 1 ? kinds : [...kinds].reverse();
      for (const kind of order) turns.push(await turn(kind, round, env, client));
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
  } finally {
    client?.close();
    if (ctrd !== undefined) {
      const socket = ctrd.layout.socket;
      const c = ctrd;
      if (c.running) await removeWorkloads(socket, (...a) => c.ctr(...a), errors);
      await errors.attempt('containerd', () => c.stop());
      await teardownLeftovers({ socket, mountDirs: [dir] }, errors);
    }
    await errors.attempt('server', async () => server?.stop());
    await errors.attempt('bridge', () => removeBridgeIfUnused(BRIDGE));
    if (addedRoute) await errors.attempt('route', () => removeBlackhole(SERVICE_RANGE));
    if (process.env['CAPSTAN_BENCH_KEEP_LOGS'] === undefined)
      await errors.attempt('directory', () => rm(dir, { recursive: true, force: true, maxRetries: 3 }));
    errors.throwIfAny('bench-agent clean-up');
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
