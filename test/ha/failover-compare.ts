/**
 * Failover times of three Capstan servers against three kube-apiservers (issue 34's "failover
 * times no worse than kube's"), the same faults on both, measured in one run with the rounds
 * interleaved (Capstan first in odd rounds, kube first in even ones).
 *
 * Each control plane is three etcd members and three control-plane hosts, every one a network
 * namespace on its own bridge ({@link HostNet}), as in the fault test:
 * - Capstan: `capstan server` per host (its in-process controller manager and scheduler are
 *   leader-elected on the Leases `kube-system/kube-controller-manager` and `kube-scheduler`);
 * - kube: kube-apiserver, kube-controller-manager and kube-scheduler per host (the latter two
 *   with `--leader-elect=true` and kube's lease timings, on the host's own kube-apiserver), as a
 *   kubeadm control-plane node runs them. A kube-controller-manager or kube-scheduler that exits
 *   (kube's exit on a lost lease) is started again after 1 s, as the kubelet restarts a static
 *   pod (with a shorter back-off than the kubelet's 10 s).
 *
 * Per round and plane, while six writers create through the plane's servers in turn:
 * 1. kill -9 the host of the controller manager's leader (all its processes), restart it after
 *    1 s: the next acknowledged write after the kill, the restarted API server's time to `/readyz`
 *    200, and the controller-manager and scheduler failover (the kill to the next "acquired
 *    lease" line of any host; the scheduler's when its leader was on the killed host, else
 *    from a kill of the scheduler leader's host after this one);
 * 2. kill -9 the etcd leader, restart it after 1 s: the next acknowledged write, the member's
 *    time to healthy;
 * 3. the same for an etcd follower.
 *
 * Run (after `npm run build`, as root):
 *   npx esbuild test/ha/failover-compare.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=dist/ha/failover-compare.mjs
 *   node dist/ha/failover-compare.mjs /work/refbuild/bin 3
 * (the directory of the kube binaries, the rounds). It prints each measurement as it goes and
 * a JSON report at the end, with the load average at every measurement. A third argument
 * `etcd-leader` runs only step 2 of each round (no host kills), and prints every write attempt
 * that was in flight during the 8 s after each kill.
 */
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  apiserverArgs,
  kubeControllerManagerArgs,
  writeCredentials,
  writeTokenKubeconfig,
} from '../../src/bench/cluster/kube-stack.js';
import { HostNet, type HostProcess } from '../support/ha-hosts.js';
import {
  FaultCluster,
  PORT,
  ServerHost,
  hold,
  startEtcdHosts,
  until,
  type EtcdHost,
} from './fault-cluster.js';
import { NS, Writers } from './fault-workload.js';

type Lease = 'kube-controller-manager' | 'kube-scheduler';

/** One control plane under test. */
interface Plane {
  readonly name: 'capstan' | 'kube';
  readonly etcd: readonly EtcdHost[];
  readonly servers: readonly ServerHost[];
  /** The processes of host `i` that log when they acquire or lose `lease`. */
  leaseProcs(i: number, lease: Lease): readonly HostProcess[];
  /** kill -9 every process of host `i`. */
  killHost(i: number): Promise<void>;
  /** Starts host `i`'s processes again. */
  startHost(i: number): void;
  destroy(): Promise<void>;
}

const acquiredRe = (lease: Lease): RegExp => new RegExp(`acquired lease kube-system/${lease}\\b`);
const lostRe = (lease: Lease): RegExp => new RegExp(`lost lease kube-system/${lease}\\b`);

/** Whether `proc`'s running incarnation holds `lease` by its own log. */
function holds(proc: HostProcess, lease: Lease): boolean {
  if (!proc.running) return false;
  const prefix = `[${proc.starts}] `;
  let held = false;
  for (const l of proc.lines) {
    if (!l.text.startsWith(prefix)) continue;
    if (acquiredRe(lease).test(l.text)) held = true;
    else if (lostRe(lease).test(l.text)) held = false;
  }
  return held;
}

/** The time of the first "acquired lease" line after `after` on any of `procs`. */
function nextAcquired(procs: readonly HostProcess[], lease: Lease, after: number): number | undefined {
  let first: number | undefined;
  for (const p of procs)
    for (const l of p.lines)
      if (l.at > after && acquiredRe(lease).test(l.text) && (first === undefined || l.at < first))
        first = l.at;
  return first;
}

function leaderHost(plane: Plane, lease: Lease): number | undefined {
  for (let i = 0; i < plane.servers.length; i++)
    if (plane.leaseProcs(i, lease).some((p) => holds(p, lease))) return i;
  return undefined;
}

async function capstanPlane(): Promise<Plane> {
  const c = await FaultCluster.start(['--request-timeout=20s']);
  return {
    name: 'capstan',
    etcd: c.etcd,
    servers: c.servers,
    leaseProcs: (i) => [c.servers[i]!.proc],
    killHost: (i) => c.servers[i]!.kill(),
    startHost: (i) => c.servers[i]!.proc.start(),
    destroy: () => c.destroy(),
  };
}

/** A kube control-plane host's processes. */
interface KubeHost {
  readonly server: ServerHost;
  readonly kcm: HostProcess;
  readonly scheduler: HostProcess;
  /** False while the test has the host down (so its exited loops are not restarted). */
  up: boolean;
}

async function kubePlane(binDir: string): Promise<Plane> {
  const net = new HostNet();
  const hosts: KubeHost[] = [];
  let supervising = true;
  let supervisor: Promise<void> = Promise.resolve();
  const destroy = async (): Promise<void> => {
    supervising = false;
    await supervisor;
    for (const h of hosts) h.server.agent.destroy();
    await net.destroy();
  };
  try {
    const etcd = await startEtcdHosts(net);
    const endpoints = etcd.map((e) => e.endpoint).join(',');
    const dir = join(net.dir, 'kube');
    mkdirSync(dir);
    const ips = [0, 1, 2].map((i) => `${net.subnet}.${31 + i}`);
    const credentials = await writeCredentials(dir, `https://${ips[0]!}:${PORT}`);
    for (let i = 0; i < 3; i++) {
      const h = net.addHost(`k${i}`, 31 + i);
      const certDir = join(dir, h.name);
      mkdirSync(certDir);
      const kubeconfig = join(dir, `${h.name}.kubeconfig`);
      await writeTokenKubeconfig(kubeconfig, `https://${h.ip}:${PORT}`, credentials.adminToken);
      const apiserver = net.process(h, [
        join(binDir, 'kube-apiserver'),
        ...apiserverArgs({ etcdServers: endpoints, address: h.ip, port: PORT, credentials, certDir }),
      ]);
      const kcm = net.process(h, [
        join(binDir, 'kube-controller-manager'),
        ...kubeControllerManagerArgs(kubeconfig, credentials, '10.244.0.0/16', { qps: 20, burst: 30 }),
        '--leader-elect=true',
      ]);
      const scheduler = net.process(h, [
        join(binDir, 'kube-scheduler'),
        `--kubeconfig=${kubeconfig}`,
        `--authentication-kubeconfig=${kubeconfig}`,
        `--authorization-kubeconfig=${kubeconfig}`,
        '--leader-elect=true',
      ]);
      const server = new ServerHost(
        h,
        apiserver,
        certDir,
        { rejectUnauthorized: false },
        credentials.adminToken,
      );
      hosts.push({ server, kcm, scheduler, up: true });
      apiserver.start();
    }
    await Promise.all(hosts.map((h) => h.server.waitReady(180_000)));
    for (const h of hosts) {
      h.kcm.start();
      h.scheduler.start();
    }
    supervisor = (async () => {
      while (supervising) {
        await new Promise((r) => setTimeout(r, 1_000));
        for (const h of hosts)
          for (const p of [h.kcm, h.scheduler]) if (h.up && supervising && !p.running) p.start();
      }
    })();
    return {
      name: 'kube',
      etcd,
      servers: hosts.map((h) => h.server),
      leaseProcs: (i, lease) => [lease === 'kube-scheduler' ? hosts[i]!.scheduler : hosts[i]!.kcm],
      killHost: async (i) => {
        const h = hosts[i]!;
        h.up = false;
        await Promise.all([h.server.kill(), h.kcm.kill('SIGKILL'), h.scheduler.kill('SIGKILL')]);
      },
      startHost: (i) => {
        const h = hosts[i]!;
        h.server.proc.start();
        h.kcm.start();
        h.scheduler.start();
        h.up = true;
      },
      destroy,
    };
  } catch (err) {
    await destroy();
    throw err;
  }
}

/** One measurement. */
interface Sample {
  readonly plane: string;
  readonly round: number;
  readonly figure: string;
  readonly ms: number | undefined;
  readonly load: number;
}

async function etcdLeader(plane: Plane): Promise<number | undefined> {
  for (let i = 0; i < plane.etcd.length; i++) {
    const s = await plane.etcd[i]!.status();
    if (s !== undefined && s.leader !== '' && s.leader === s.member) return i;
  }
  return undefined;
}

async function round(plane: Plane, r: number, samples: Sample[], etcdLeaderOnly: boolean): Promise<void> {
  const record = (figure: string, ms: number | undefined): void => {
    const s = { plane: plane.name, round: r, figure, ms, load: Number(loadavg()[0]!.toFixed(1)) };
    samples.push(s);
    console.log(JSON.stringify(s));
  };
  // Names of their own per round: names of an earlier round would be refused (409, no ack).
  const writers = new Writers(plane.servers, 6, 4, `r${r}-`);
  const acked = (n: number): Promise<void> => {
    const base = writers.log.ackTimes.length;
    return until(`${n} writes on ${plane.name}`, () => writers.log.ackTimes.length >= base + n, 120_000);
  };
  const nextAck = (t: number): number | undefined => {
    const a = writers.log.ackTimes.find((x) => x > t);
    return a === undefined ? undefined : a - t;
  };
  const recorded = new Set<string>();
  const all = (lease: Lease): HostProcess[] =>
    plane.servers.flatMap((_, i) => [...plane.leaseProcs(i, lease)]);
  const failover = async (lease: Lease, figure: string, t: number): Promise<void> => {
    await until(`${plane.name}: ${figure}`, () => nextAcquired(all(lease), lease, t) !== undefined, 120_000);
    record(figure, nextAcquired(all(lease), lease, t)! - t);
    recorded.add(figure);
  };
  /**
   * kill -9 the host leading `lease`, start it again after 1 s. The controller manager's kill
   * records every figure of a server kill; the scheduler's (only when its leader is on another
   * host) records the scheduler's failover alone.
   */
  const hostKill = async (lease: Lease): Promise<void> => {
    await until(`${plane.name}: a ${lease} leader`, () => leaderHost(plane, lease) !== undefined);
    const victim = leaderHost(plane, lease)!;
    const schedulerWasThere = leaderHost(plane, 'kube-scheduler') === victim;
    const t = Date.now();
    await plane.killHost(victim);
    await hold(1_000);
    const started = Date.now();
    plane.startHost(victim);
    await plane.servers[victim]!.waitReady(180_000);
    if (lease === 'kube-controller-manager') {
      record('server ready again', Date.now() - started);
      if (plane.name === 'capstan') {
        // Where the restart's time went: the new incarnation's start-up phases.
        const proc = plane.servers[victim]!.proc;
        const phases = proc.lines.filter((l) => l.text.startsWith(`[${proc.starts}] startup `));
        console.log(phases.map((l) => `  ${l.at - started} ms: ${l.text}`).join('\n'));
      }
      await acked(5);
      record('next write after server kill', nextAck(t));
      await failover('kube-controller-manager', 'controller-manager failover', t);
    }
    if (schedulerWasThere) await failover('kube-scheduler', 'scheduler failover', t);
    await acked(5);
  };
  try {
    await acked(20);
    if (!etcdLeaderOnly) {
      // The controller manager's leader host, then (when elsewhere) the scheduler's.
      await hostKill('kube-controller-manager');
      if (!recorded.has('scheduler failover')) await hostKill('kube-scheduler');
    }

    for (const which of etcdLeaderOnly ? (['leader'] as const) : (['leader', 'follower'] as const)) {
      const leader = await etcdLeader(plane);
      if (leader === undefined) throw new Error(`${plane.name}: no etcd leader`);
      const member =
        plane.etcd[which === 'leader' ? leader : (leader + 1 + Math.floor(Math.random() * 2)) % 3]!;
      const k = Date.now();
      await member.proc.kill('SIGKILL');
      await acked(5);
      record(`next write after etcd ${which} kill`, nextAck(k));
      if (etcdLeaderOnly) {
        await hold(8_000);
        // The longest a write begun in the 2 s after the kill waited for its answer (a write
        // a follower forwards to the dead leader waits for etcd's 7 s request timeout).
        const begun = writers.log.attempts.filter((a) => a.start >= k && a.start < k + 2_000);
        record(
          'slowest write begun within 2 s of the etcd leader kill',
          Math.max(0, ...begun.map((a) => a.end - a.start)),
        );
        const around = writers.log.attempts.filter((a) => a.end > k - 100 && a.start < k + 8_000);
        for (const a of around)
          console.log(
            `  w${a.writer} ${a.server} ${a.start - k}..${a.end - k} ms ${a.status}${a.error === undefined ? '' : ` ${a.error}`}`,
          );
      }
      await hold(1_000);
      const s = Date.now();
      member.proc.start();
      await member.waitHealthy();
      record(`etcd ${which} healthy again`, Date.now() - s);
      await acked(10);
    }
  } finally {
    await writers.stop();
  }
  const uncertain = writers.log.uncertain.size;
  if (uncertain > 0) console.log(`${plane.name} round ${r}: ${uncertain} uncertain writes`);
}

function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main(): Promise<void> {
  const binDir = process.argv[2] ?? '/work/refbuild/bin';
  const rounds = Number(process.argv[3] ?? 3);
  const etcdLeaderOnly = process.argv[4] === 'etcd-leader';
  const planes: Plane[] = [];
  const samples: Sample[] = [];
  const loadStart = loadavg()[0]!;
  try {
    planes.push(await capstanPlane());
    planes.push(await kubePlane(binDir));
    for (const p of planes) {
      const a = await p.servers[0]!.call('POST', '/api/v1/namespaces', { metadata: { name: NS } });
      if (a.status !== 201) throw new Error(`${p.name}: namespace: ${a.status} ${JSON.stringify(a.json)}`);
    }
    for (let r = 1; r <= rounds; r++) {
      const order = r % 2 === 1 ? planes : [...planes].reverse();
      for (const p of order) await round(p, r, samples, etcdLeaderOnly);
    }
  } finally {
    for (const p of planes) await p.destroy();
  }
  const figures = [...new Set(samples.map((s) => s.figure))];
  const table = figures.map((figure) => {
    const of = (plane: string): number[] =>
      samples.filter((s) => s.plane === plane && s.figure === figure && s.ms !== undefined).map((s) => s.ms!);
    return {
      figure,
      capstan: of('capstan'),
      kube: of('kube'),
      capstanMedian: median(of('capstan')),
      kubeMedian: median(of('kube')),
    };
  });
  const loads = samples.map((s) => s.load);
  console.log(
    `failover compare: ${JSON.stringify({ rounds, loadStart, loadMin: Math.min(...loads), loadMax: Math.max(...loads), table }, null, 2)}`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
