/**
 * Running `capstan agent` and kubelet v1.33 (a reference build, never part of the repository) as
 * processes of their own on one containerd and one `capstan server`, for the tools that compare
 * them (tools/bench-agent.ts, tools/agent-vs-kubelet.ts): the shared environment
 * ({@link startAgentEnv}), one node agent ({@link startAgent}), and the removal of what a node
 * agent leaves on the host ({@link removeAgentLeftovers}): sandboxes, mounts, its cgroup root,
 * the iptables chains kubelet adds and the kernel settings its container manager changes.
 *
 * Both agents get the same CNI network (the agent writes its bridge conflist from the pod CIDR;
 * the same conflist is written for kubelet), the locally built images (pause as the sandbox),
 * the admin kubeconfig, and cgroupfs under a cgroup root of their own. kubelet runs with a
 * KubeletConfiguration: cgroupfs, `failCgroupV1: false`, `failSwapOn: false`, image GC off, its
 * servers on free loopback ports.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { bridgeConflist, CNI_CONF_FILE } from '../src/agent/network/cni.js';
import { CriClient } from '../src/agent/cri/client.js';
import { BenchClient } from '../src/bench/client.js';
import { capstanEntry } from '../src/bench/scheduler/process.js';
import { freePort } from '../src/bench/cluster/children.js';
import { spawnServer } from '../src/bench/server-process.js';
import { ContainerdProcess } from '../src/cluster/containerd.js';
import {
  CleanupErrors,
  removeBridgeIfUnused,
  removeCgroupTree,
  removeWorkloads,
  teardownLeftovers,
  unmountUnder,
} from '../src/cluster/containerd-teardown.js';
import { buildImages } from '../src/cluster/dev-images.js';
import { ensureBlackhole, removeBlackhole } from '../src/cluster/service-route.js';
import { readKubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';

/** The kernel settings kubelet's container manager sets (protectKernelDefaults: false). */
const SYSCTLS = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
];

export { freePort };

/**
 * The hand-run tools' common start: `--help` prints `usage` and exits before anything is set up,
 * and a closed standard output (`| head`) no longer ends the process with an unhandled EPIPE
 * before its clean-up (containerd and its shims, mounts, the bridge, the Service route) ran.
 */
export function toolStart(usage: string): void {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    console.log(usage);
    process.exit(0);
  }
  process.stdout.on('error', () => undefined);
}

/** The value after `--<name>` on the command line, or `dflt` (the hand-run tools' flag syntax). */
export const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : (process.argv[i + 1] ?? dflt);
};

export type Kind = 'capstan' | 'kubelet';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The machine's first non-loopback IPv4 address (kubelet refuses a loopback node IP). */
export function hostIP(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('no non-loopback IPv4 address for the node IP');
}

/** iptables chains per table and family, to find the ones a run added. */
export function iptablesChains(): Set<string> {
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
export function removeNewChains(before: Set<string>, after: Set<string>): string[] {
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

export function readSysctls(): Map<string, string> {
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

export function restoreSysctls(saved: Map<string, string>): string[] {
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

/** A running node agent process. */
export interface NodeAgent {
  readonly kind: Kind;
  readonly node: string;
  readonly pid: number;
  /** Why it exited, once it did. */
  readonly exited: string | undefined;
  stop(): Promise<void>;
}

/** The API server the node agents use: `capstan server`, or one a tool started itself. */
export interface AgentServer {
  /** An administrator's kubeconfig, which the agents use too. */
  readonly kubeconfigPath: string;
  stop(): Promise<void>;
}

/** What the node agents share: a server, containerd with the images, the pods' network. */
export interface AgentEnv {
  readonly dir: string;
  readonly server: AgentServer;
  readonly ctrd: ContainerdProcess;
  readonly client: BenchClient;
  readonly nodeIP: string;
  /** The pods' bridge, and the pod CIDR both agents use. */
  readonly bridge: string;
  readonly podCIDR: string;
  /** kubelet's binary. */
  readonly kubelet: string;
}

/** More than the defaults, for one node agent. */
export interface AgentExtras {
  /** Static pods (`staticPodPath`, read every 20 s and, by Capstan, on change). */
  readonly staticPodPath?: string;
  /** The agent's server address (default 127.0.0.1; the API server reaches it at the node IP). */
  readonly address?: string;
  /** Anonymous requests to the agent's server (default false); authorization is AlwaysAllow. */
  readonly anonymousAuth?: boolean;
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

/**
 * Starts a node agent as a process of its own on `node`, its state under `turnDir`, its log
 * `<env.dir>/<node>.log` (appended to, so a restart keeps one log).
 */
export async function startAgent(
  kind: Kind,
  env: AgentEnv,
  turnDir: string,
  node: string,
  cgroupRoot: string,
  extras: AgentExtras = {},
): Promise<NodeAgent> {
  const kubeconfig = env.server.kubeconfigPath;
  const logPath = join(env.dir, `${node}.log`);
  mkdirSync(turnDir, { recursive: true });
  const staticLines = extras.staticPodPath ? [`staticPodPath: ${extras.staticPodPath}`] : [];
  const address = extras.address ?? '127.0.0.1';
  const authLines = [
    `authentication: {anonymous: {enabled: ${extras.anonymousAuth ?? false}}, webhook: {enabled: false}}`,
    'authorization: {mode: AlwaysAllow}',
  ];
  if (kind === 'capstan') {
    const config = join(turnDir, 'capstan.yaml');
    writeFileSync(
      config,
      [
        'apiVersion: kubelet.config.k8s.io/v1beta1',
        'kind: KubeletConfiguration',
        ...authLines,
        ...staticLines,
        '',
      ].join('\n'),
    );
    return startProcess(
      kind,
      node,
      process.execPath,
      [
        capstanEntry(),
        'agent',
        `--config=${config}`,
        `--kubeconfig=${kubeconfig}`,
        `--hostname-override=${node}`,
        `--container-runtime-endpoint=${env.ctrd.endpoint}`,
        `--root-dir=${join(turnDir, 'root')}`,
        `--pod-logs-dir=${join(turnDir, 'logs')}`,
        `--cni-conf-dir=${env.ctrd.layout.cniConfDir}`,
        `--cni-bridge=${env.bridge}`,
        `--cgroup-root=${cgroupRoot}`,
        `--address=${address}`,
        '--port=0',
        '--healthz-port=0',
        `--node-ip=${env.nodeIP}`,
        `--pod-cidr=${env.podCIDR}`,
      ],
      logPath,
    );
  }
  // The same network as the agent's, its host-local state under this turn's directory.
  writeFileSync(
    join(env.ctrd.layout.cniConfDir, CNI_CONF_FILE),
    bridgeConflist('capstan', env.bridge, env.podCIDR, join(turnDir, 'cni/networks')),
  );
  makeCgroup(cgroupRoot);
  const config = join(turnDir, 'kubelet.yaml');
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
      `address: ${address}`,
      `port: ${await freePort()}`,
      'healthzBindAddress: 127.0.0.1',
      `healthzPort: ${await freePort()}`,
      'readOnlyPort: 0',
      ...authLines,
      'imageGCHighThresholdPercent: 100',
      'imageGCLowThresholdPercent: 99',
      'oomScoreAdj: 0',
      'resolvConf: /etc/resolv.conf',
      ...staticLines,
      '',
    ].join('\n'),
  );
  return startProcess(
    kind,
    node,
    env.kubelet,
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

/** Waits up to 120 s for the agent's Node to be Ready; answers how long that took. */
export async function waitNodeReady(client: BenchClient, agent: NodeAgent): Promise<number> {
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

/** What the host had before a node agent ran (to remove what it added). */
export interface HostState {
  readonly chains: Set<string>;
  readonly sysctls: Map<string, string>;
}

export function hostState(): HostState {
  return { chains: iptablesChains(), sysctls: readSysctls() };
}

/**
 * Removes what a stopped node agent left: its Node, its sandboxes (the next agent would see them
 * as orphans), mounts under `turnDir`, its cgroup root, and the chains and kernel settings it
 * added or changed since `before`.
 */
export async function removeAgentLeftovers(
  env: AgentEnv,
  agent: NodeAgent,
  turnDir: string,
  cgroupRoot: string,
  before: HostState,
): Promise<void> {
  await env.client
    .request('DELETE', `/api/v1/nodes/${agent.node}`, { discardBody: true })
    .catch(() => undefined);
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
    console.error(`cgroups of ${agent.node}: ${String(err)}`),
  );
  const chains = removeNewChains(before.chains, iptablesChains());
  const restored = restoreSysctls(before.sysctls);
  if (chains.length > 0 || restored.length > 0)
    console.error(
      `  ${agent.kind} left (removed): chains ${chains.join(', ') || 'none'}; sysctls ${restored.join(', ') || 'none'}`,
    );
}

/** Options of {@link startAgentEnv}. */
export interface AgentEnvOptions {
  readonly dir: string;
  readonly kubelet: string;
  readonly bridge: string;
  readonly podCIDR: string;
  /** The server's Service range (a blackhole route covers it while pods run). */
  readonly serviceRange: string;
  /** The server's in-process controllers. */
  readonly controllers: readonly string[];
  /** More `capstan server` flags. */
  readonly serverArgs?: readonly string[];
  readonly containerdLogLevel?: string;
  /** The node IP (default: the machine's first non-loopback IPv4 address). */
  readonly nodeIP?: string;
  /**
   * Starts the API server instead of `capstan server` (then `controllers` and `serverArgs` are
   * not used); the environment stops it at the end.
   */
  readonly startServer?: () => Promise<AgentServer>;
}

/**
 * Starts `capstan server` (or `opts.startServer`'s) and containerd under `opts.dir`, imports the locally built images and
 * adds the Service range's blackhole route when missing; `stop` removes everything (throwing
 * when some of it could not be removed). `use` runs with the environment.
 */
export async function withAgentEnv<T>(opts: AgentEnvOptions, use: (env: AgentEnv) => Promise<T>): Promise<T> {
  const errors = new CleanupErrors();
  let server: AgentServer | undefined;
  let ctrd: ContainerdProcess | undefined;
  let client: BenchClient | undefined;
  let addedRoute = false;
  try {
    server = opts.startServer
      ? await opts.startServer()
      : await spawnServer({
          dataDir: join(opts.dir, 'server'),
          extraArgs: [
            `--controllers=${opts.controllers.join(',')}`,
            `--service-cluster-ip-range=${opts.serviceRange}`,
            ...(opts.serverArgs ?? []),
          ],
          main: capstanEntry(),
        });
    ctrd = await ContainerdProcess.start(join(opts.dir, 'containerd'), {
      logLevel: opts.containerdLogLevel ?? 'warn',
    });
    const c = ctrd;
    for (const img of await buildImages(join(opts.dir, 'images')))
      await c.ctr('-n', 'k8s.io', 'images', 'import', img.path);
    addedRoute = await ensureBlackhole(opts.serviceRange);
    client = new BenchClient(readKubeconfigCredentials(server.kubeconfigPath), 2);
    return await use({
      dir: opts.dir,
      server,
      ctrd,
      client,
      nodeIP: opts.nodeIP ?? hostIP(),
      bridge: opts.bridge,
      podCIDR: opts.podCIDR,
      kubelet: opts.kubelet,
    });
  } finally {
    client?.close();
    if (ctrd !== undefined) {
      const socket = ctrd.layout.socket;
      const c = ctrd;
      if (c.running) await removeWorkloads(socket, (...a) => c.ctr(...a), errors);
      await errors.attempt('containerd', () => c.stop());
      await teardownLeftovers({ socket, mountDirs: [opts.dir] }, errors);
    }
    await errors.attempt('server', async () => server?.stop());
    await errors.attempt('bridge', () => removeBridgeIfUnused(opts.bridge));
    if (addedRoute) await errors.attempt('route', () => removeBlackhole(opts.serviceRange));
    if (process.env['CAPSTAN_BENCH_KEEP_LOGS'] === undefined)
      await errors.attempt('directory', () => rm(opts.dir, { recursive: true, force: true, maxRetries: 3 }));
    errors.throwIfAny('node agents clean-up');
  }
}
