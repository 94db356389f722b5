/**
 * The HA fault test's cluster and workload: three etcd members (Debian's etcd) and three
 * `capstan server` processes (a copy of the bundled build in dist/, taken at the start, on
 * `--etcd-servers` naming all members), each a host in its own network namespace on one bridge
 * ({@link HostNet}); clients in the test process write through every server and watch through
 * them, resuming on another server from the last resourceVersion they saw. Used by
 * `faults.test.ts` (a short run in the suite, a long one with CAPSTAN_FAULT_LONG=1),
 * `quorum.test.ts`, `partition-watch.test.ts` and `failover-compare.ts` (beside kube's).
 */
import { copyFileSync, cpSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join, resolve } from 'node:path';
import { adminTls, type AdminTls } from '../support/https.js';
import { ETCD_BINARY } from '../../tools/etcd-local.js';
import { HostNet, type Host, type HostProcess } from '../support/ha-hosts.js';

/** The bundled build, as the `capstan` command runs it (`npm run build` makes it). */
export const ENTRY = resolve('dist/bundle/capstan.js');
export const PORT = 6443;

/**
 * What a server of the bundled build reads: the bundle (with its code cache), and the data files
 * it finds from the package root (package.json, the generated schemas, the OpenAPI protos and
 * descriptions).
 */
const BUILD_PARTS = [
  'package.json',
  'dist/bundle',
  'proto',
  'src/registry/generated/schemas.json',
  'src/openapi/gnostic',
];

/**
 * Copies the bundled build into `dir` (with node_modules linked) and returns the copy's entry.
 * The servers run the copy, so a rebuild of dist/ during a long run cannot change, or break
 * half-written, what a restarted server loads.
 */
export function copyBuild(dir: string): string {
  for (const part of BUILD_PARTS) cpSync(resolve(part), join(dir, part), { recursive: true });
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  return join(dir, 'dist/bundle/capstan.js');
}

/** An answer, or why there was none. */
export interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
  /** Set when no HTTP answer came: `refused` (the connection was never made) or another failure. */
  readonly failure?: 'refused' | 'lost';
  readonly error?: string;
  readonly ms: number;
}

/** One Capstan server host. */
export class ServerHost {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  /** When the test killed each incarnation (ms), in order. */
  readonly kills: number[] = [];
  constructor(
    readonly host: Host,
    readonly proc: HostProcess,
    readonly dataDir: string,
    /** The client's TLS settings (kube's self-signed serving certificate is not verified). */
    public tls: AdminTls | { readonly rejectUnauthorized: false },
    /** A bearer token to present (kube-apiserver's static tokens), else the client certificate only. */
    readonly token?: string,
  ) {}

  get url(): string {
    return `https://${this.host.ip}:${PORT}`;
  }

  /** One request; never throws. `timeoutMs` bounds the whole exchange. */
  call(method: string, path: string, body?: unknown, timeoutMs = 60_000): Promise<Answer> {
    const started = Date.now();
    return new Promise((done) => {
      let settled = false;
      const finish = (a: Omit<Answer, 'ms'>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        done({ ...a, ms: Date.now() - started });
      };
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        `${this.url}${path}`,
        {
          method,
          ...this.tls,
          agent: this.agent,
          headers: {
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
            ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => {
            let json: Record<string, unknown> = {};
            try {
              json = JSON.parse(text) as Record<string, unknown>;
            } catch {
              json = { text };
            }
            finish({ status: res.statusCode ?? 0, json });
          });
          res.on('error', (err) => finish({ status: 0, json: {}, failure: 'lost', error: String(err) }));
        },
      );
      const timer = setTimeout(() => {
        req.destroy(new Error(`no answer in ${timeoutMs} ms`));
      }, timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => {
        const refused = err.code === 'ECONNREFUSED' || err.code === 'EHOSTUNREACH';
        finish({ status: 0, json: {}, failure: refused ? 'refused' : 'lost', error: String(err) });
      });
      req.end(payload);
    });
  }

  /** kill -9, recording the time. */
  async kill(): Promise<void> {
    this.kills.push(Date.now());
    await this.proc.kill('SIGKILL');
  }

  /** Starts the server again on its data and waits until ready. */
  async restart(): Promise<void> {
    this.proc.start();
    await this.waitReady();
  }

  /** Resolves once `/readyz` answers 200. */
  async waitReady(timeoutMs = 120_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const a = await this.call('GET', '/readyz', undefined, 5_000);
      if (a.status === 200) return;
      if (!this.proc.running) throw new Error(`${this.host.name} exited:\n${this.proc.tail()}`);
      if (Date.now() > until)
        throw new Error(`${this.host.name} not ready after ${timeoutMs} ms:\n${this.proc.tail()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** One etcd member host. */
export class EtcdHost {
  constructor(
    readonly host: Host,
    readonly proc: HostProcess,
  ) {}

  get endpoint(): string {
    return `http://${this.host.ip}:2379`;
  }

  /** The member's status through the JSON gateway, or undefined when it does not answer. */
  async status(): Promise<{ member: string; leader: string; revision: number } | undefined> {
    try {
      const res = await fetch(`${this.endpoint}/v3/maintenance/status`, {
        method: 'POST',
        body: '{}',
        signal: AbortSignal.timeout(2_000),
      });
      const s = (await res.json()) as {
        header?: { member_id?: string; revision?: string };
        leader?: string;
      };
      return {
        member: s.header?.member_id ?? '',
        leader: s.leader ?? '',
        revision: Number(s.header?.revision ?? 0),
      };
    } catch {
      return undefined;
    }
  }

  /** Resolves once `/health` is true (the member has a leader). */
  async waitHealthy(timeoutMs = 60_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        const res = await fetch(`${this.endpoint}/health`, { signal: AbortSignal.timeout(2_000) });
        if (res.ok && (await res.text()).includes('"true"')) return;
      } catch {
        // not up yet
      }
      if (Date.now() > until)
        throw new Error(`${this.host.name} not healthy after ${timeoutMs} ms:\n${this.proc.tail()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Three etcd members, hosts e0..e2 on `net`, one cluster; resolves once all are healthy. */
export async function startEtcdHosts(net: HostNet): Promise<EtcdHost[]> {
  const hosts = [0, 1, 2].map((i) => net.addHost(`e${i}`, 11 + i));
  const cluster = hosts.map((h) => `${h.name}=http://${h.ip}:2380`).join(',');
  const members = hosts.map((h) => {
    const proc = net.process(h, [
      ETCD_BINARY,
      `--name=${h.name}`,
      `--data-dir=${join(net.dir, h.name)}`,
      `--listen-client-urls=http://${h.ip}:2379`,
      `--advertise-client-urls=http://${h.ip}:2379`,
      `--listen-peer-urls=http://${h.ip}:2380`,
      `--initial-advertise-peer-urls=http://${h.ip}:2380`,
      `--initial-cluster=${cluster}`,
      '--initial-cluster-token=capstan-ha',
      '--logger=zap',
      '--log-outputs=stderr',
      '--log-level=warn',
    ]);
    proc.start();
    return new EtcdHost(h, proc);
  });
  await Promise.all(members.map((e) => e.waitHealthy()));
  return members;
}

/** The whole cluster. */
export class FaultCluster {
  readonly net = new HostNet();
  readonly etcd: EtcdHost[] = [];
  readonly servers: ServerHost[] = [];

  /** Starts the members, then `servers` servers (the first one makes the CA the others share). */
  static async start(serverArgs: readonly string[] = [], servers = 3): Promise<FaultCluster> {
    if (!existsSync(ENTRY)) throw new Error(`${ENTRY} missing: build first (npm run build)`);
    const c = new FaultCluster();
    try {
      await c.#start(serverArgs, servers);
      return c;
    } catch (err) {
      await c.destroy();
      throw err;
    }
  }

  async #start(serverArgs: readonly string[], servers: number): Promise<void> {
    this.etcd.push(...(await startEtcdHosts(this.net)));
    const entry = copyBuild(join(this.net.dir, 'build'));
    const endpoints = this.etcd.map((e) => e.endpoint).join(',');
    for (let i = 0; i < servers; i++) {
      const h = this.net.addHost(`s${i}`, 21 + i);
      const dataDir = join(this.net.dir, h.name);
      const certDir = join(dataDir, 'pki');
      mkdirSync(certDir, { recursive: true });
      if (i > 0) {
        // One cluster CA and one service-account key for all servers, as an installer shares them.
        const first = join(this.servers[0]!.dataDir, 'pki');
        for (const f of ['ca.crt', 'ca.key', 'sa.key']) copyFileSync(join(first, f), join(certDir, f));
      }
      const proc = this.net.process(
        h,
        [
          process.execPath,
          entry,
          'server',
          `--etcd-servers=${endpoints}`,
          '--storage-backend=etcd3',
          `--advertise-address=${h.ip}`,
          '--bind-address=0.0.0.0',
          `--secure-port=${PORT}`,
          `--data-dir=${dataDir}`,
          `--cert-dir=${certDir}`,
          ...serverArgs,
        ],
        // The in-process controller manager logs when it gains and loses its lease (the
        // scheduler always does); the start-up phases are logged, for where a restart's time goes.
        { CAPSTAN_CM_VERBOSE: '1', CAPSTAN_STARTUP_TRACE: '1' },
      );
      proc.start();
      const server = new ServerHost(h, proc, dataDir, { ca: '' });
      this.servers.push(server);
      if (i === 0) await this.#ready(server);
    }
    await Promise.all(this.servers.slice(1).map((s) => this.#ready(s)));
  }

  async #ready(s: ServerHost): Promise<void> {
    const kubeconfig = join(s.dataDir, 'admin.kubeconfig');
    const until = Date.now() + 120_000;
    while (!existsSync(kubeconfig)) {
      if (!s.proc.running) throw new Error(`${s.host.name} exited:\n${s.proc.tail()}`);
      if (Date.now() > until) throw new Error(`${s.host.name}: no kubeconfig:\n${s.proc.tail()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    s.tls = adminTls(kubeconfig);
    await s.waitReady();
  }

  /** The server whose in-process controller manager last logged that it acquired its lease, if running. */
  controllerLeader(): ServerHost | undefined {
    let best: { at: number; s: ServerHost } | undefined;
    for (const t of leaderTerms(this.servers)) if (t.end === undefined) best = { at: t.start, s: t.server };
    return best?.s;
  }

  /** The etcd member that reports itself leader. */
  async etcdLeader(): Promise<EtcdHost | undefined> {
    for (const e of this.etcd) {
      const s = await e.status();
      if (s !== undefined && s.leader !== '' && s.leader === s.member) return e;
    }
    return undefined;
  }

  async destroy(): Promise<void> {
    for (const s of this.servers) s.agent.destroy();
    await this.net.destroy();
  }
}

/** One leadership term (controller manager or scheduler), from the servers' logs and kill times. */
export interface LeaderTerm {
  readonly server: ServerHost;
  readonly start: number;
  /** When the term ended: a "lost lease" line, or the process's kill; undefined while it lasts. */
  end: number | undefined;
}

/** The Leases of the in-process loops that are leader-elected. */
export type LeaderLease = 'kube-controller-manager' | 'kube-scheduler';

/**
 * The terms of every server as holder of `kube-system/<lease>` (default: the controller
 * manager's), in start order: from its "acquired lease" log line to its "lost lease" line or
 * the kill of its process.
 */
export function leaderTerms(
  servers: readonly ServerHost[],
  lease: LeaderLease = 'kube-controller-manager',
): LeaderTerm[] {
  const acquired = new RegExp(`acquired lease kube-system/${lease}\\b`);
  const lost = new RegExp(`lost lease kube-system/${lease}\\b`);
  const terms: LeaderTerm[] = [];
  for (const s of servers) {
    const kills = s.kills;
    let open: LeaderTerm | undefined;
    let incarnation = 1;
    for (const line of s.proc.lines) {
      const inc = Number(/^\[(\d+)\]/.exec(line.text)?.[1] ?? 0);
      if (inc !== incarnation) {
        // a new process: the old one was killed
        if (open !== undefined) open.end = kills[incarnation - 1] ?? line.at;
        open = undefined;
        incarnation = inc;
      }
      if (acquired.test(line.text)) {
        open = { server: s, start: line.at, end: undefined };
        terms.push(open);
      } else if (lost.test(line.text) && open !== undefined) {
        open.end = line.at;
        open = undefined;
      }
    }
    if (open !== undefined && !s.proc.running) open.end = kills[incarnation - 1] ?? Date.now();
  }
  return terms.sort((a, b) => a.start - b.start);
}

/** Overlaps between terms of different servers (should be none). */
export function overlappingTerms(terms: readonly LeaderTerm[]): string[] {
  const bad: string[] = [];
  for (let i = 0; i < terms.length; i++) {
    for (let j = i + 1; j < terms.length; j++) {
      const [a, b] = [terms[i]!, terms[j]!];
      if (a.server === b.server) continue;
      if (b.start < (a.end ?? Infinity))
        bad.push(
          `${a.server.host.name} led ${a.start}..${a.end ?? 'now'} while ${b.server.host.name} acquired at ${b.start}`,
        );
    }
  }
  return bad;
}

/** Sleeps `ms` (the fault schedule's hold times, not a stand-in for a condition). */
export function hold(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it is true, or throws after `timeoutMs`. */
export async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export { ETCD_BINARY };
