/**
 * Cluster networking against the reference components, on one in-process Capstan server:
 *
 * - proxy: `capstan proxy` and kube-proxy v1.33 (`--proxy-mode=nftables`) in turn, each syncing
 *   N Services with M endpoints each (selectorless, one EndpointSlice per Service); the figures
 *   are each one's own `kubeproxy_sync_full_proxy_rules_duration_seconds` (the first full sync) and
 *   `kubeproxy_sync_partial_proxy_rules_duration_seconds` (the
 *   mean of incremental syncs after single-endpoint changes), and its resident memory;
 * - DNS: the Capstan cluster DNS and CoreDNS (kubernetes plugin, no cache plugin), in alternating rounds,
 *   answering A queries for random Services from one UDP client with a fixed number of queries
 *   outstanding: queries per second, p50 and p99 latency, and resident memory.
 *
 * Everything runs inside a network namespace the script creates (`capbench-<pid>`) and deletes:
 * the server, both proxies (each writes only its own nftables table there), both DNS servers
 * and the client, all on that namespace's loopback. Needs root, `ip`, `nft`, a build (`dist/`),
 * and the reference binaries, which are never part of the repository:
 *
 *   npx tsc -p tsconfig.build.json
 *   node dist/tools/bench-network.js --kube-proxy /work/refbuild/bin/kube-proxy \
 *     --coredns /work/refbuild/bin/coredns [--services 1000] [--endpoints 10] [--queries 20000]
 *     [--changes 5] [--change-timeout 120] [--sync-timeout 300] [--proxy-only | --dns-only]
 *     [--rounds 1] [--outstanding 50] [--dns-cpu-prof <dir>] [--dns-baseline <checkout>]
 *
 * The two DNS servers run side by side and are loaded in turn for --rounds rounds (the first
 * one alternates); the table gives each one's medians. --dns-cpu-prof writes a V8 CPU profile of
 * the Capstan DNS (node --cpu-prof) into the directory when it stops (the baseline's into
 * `<dir>/baseline`). --dns-baseline runs the DNS of another checkout's build as a third server.
 *
 * A proxy's incremental figure is missing when it did not sync within --change-timeout seconds
 * of a change (kube-proxy's partial syncs of 1,000 Services took over 30 s at a load of 40).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemoryStore } from '../storage/mvcc/index.js';
import {
  Client,
  ENDPOINT_SLICES,
  NAMESPACES,
  NODES,
  SERVICES,
  loadKubeconfig,
  type ClientConfig,
} from '../src/client/index.js';
import type { Namespace, Node, Service } from '../src/api/types/core-v1.js';
import type { EndpointSlice } from '../src/api/types/discovery-v1.js';
import { ServerLog } from '../src/server/log.js';
import { parseServerArgs, type ServerOptions } from '../src/server/options.js';
import { startServer } from '../src/server/server.js';
import { queryLoad, type LoadResult } from './bench-network-dns.js';

const arg = (name: string, dflt: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : (process.argv[i + 1] ?? dflt);
};
const SERVICES_N = Number(arg('services', '1000'));
const ENDPOINTS_N = Number(arg('endpoints', '10'));
const QUERIES = Number(arg('queries', '20000'));
const OUTSTANDING = Number(arg('outstanding', '50'));
/** EndpointSlice changes timed per proxy, and how long each proxy may take to sync one (s). */
const CHANGES = Number(arg('changes', '5'));
const CHANGE_TIMEOUT_S = Number(arg('change-timeout', '120'));
/** Run only the proxies (the DNS comparison takes minutes more). */
const PROXY_ONLY = process.argv.includes('--proxy-only');
/** Run only the DNS servers. */
const DNS_ONLY = process.argv.includes('--dns-only');
/** DNS load rounds, the two servers alternating (which goes first alternates too). */
const DNS_ROUNDS = Number(arg('rounds', '1'));
/** A directory for a V8 CPU profile of the Capstan DNS (node --cpu-prof), written when it stops. */
const DNS_CPU_PROF = arg('dns-cpu-prof', '');
/** Another checkout's build (its `dist/`), whose Capstan DNS runs as a third server: before and after a change. */
const DNS_BASELINE = arg('dns-baseline', '');
const KUBE_PROXY = arg('kube-proxy', '/work/refbuild/bin/kube-proxy');
const COREDNS = arg('coredns', '/work/refbuild/bin/coredns');
const NODE = 'bench-node';
const NS = 'bench';
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Whether a reference binary is there; when not, says so, and that part of the run is skipped. */
function haveBinary(what: string, path: string): boolean {
  if (existsSync(path)) return true;
  console.log(`${what} not run: ${path} does not exist`);
  return false;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Re-runs this script inside a fresh network namespace, and removes the namespace after. */
function outside(): number {
  const ns = `capbench-${process.pid}`;
  const ip = (...a: string[]): void => {
    const r = spawnSync('ip', a, { stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`ip ${a.join(' ')} failed`);
  };
  ip('netns', 'add', ns);
  try {
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
    const r = spawnSync('ip', ['netns', 'exec', ns, process.execPath, ...process.argv.slice(1)], {
      stdio: 'inherit',
      env: { ...process.env, CAPSTAN_BENCH_NETNS: ns },
    });
    return r.status ?? 1;
  } finally {
    spawnSync('ip', ['netns', 'del', ns], { stdio: 'inherit' });
  }
}

function rssKiB(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/**
 * The sum of a metric's IPv4 samples: kube-proxy labels its by IP family and also syncs an
 * (empty) IPv6 ruleset, which the Capstan proxy, IPv4 only, does not have.
 */
async function metric(url: string, name: string): Promise<number | undefined> {
  try {
    const text = await (await fetch(url, { signal: AbortSignal.timeout(2000) })).text();
    const re = new RegExp(`^${name}(\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm');
    const values = [...text.matchAll(re)]
      .filter((m) => !(m[1] ?? '').includes('ip_family="IPv6"'))
      .map((m) => Number(m[2]));
    return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
  } catch {
    return undefined;
  }
}

const tails = new WeakMap<ChildProcess, string>();
const stderrTail = (child: ChildProcess): string => tails.get(child) ?? '';

function startChild(cmd: string, args: readonly string[], log: string): ChildProcess {
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let tail = '';
  child.stderr?.on('data', (c: Buffer) => {
    tail = (tail + c.toString()).slice(-4000);
    tails.set(child, tail);
  });
  child.on('exit', (code, sig) => {
    if (code !== 0 && code !== null && sig === null) console.error(`${log} exited ${code}: ${tail}`);
  });
  return child;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const done = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await Promise.race([done, sleep(10_000)]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

async function pool<T>(items: readonly T[], width: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

const endpointIP = (svc: number, ep: number): string => {
  const n = svc * ENDPOINTS_N + ep + 1;
  return `10.250.${Math.floor(n / 250)}.${(n % 250) + 1}`;
};

function sliceOf(i: number, readyUpTo = ENDPOINTS_N): EndpointSlice {
  return {
    metadata: { name: `svc-${i}-1`, namespace: NS, labels: { 'kubernetes.io/service-name': `svc-${i}` } },
    addressType: 'IPv4',
    endpoints: Array.from({ length: ENDPOINTS_N }, (_, e) => ({
      addresses: [endpointIP(i, e)],
      conditions: { ready: e < readyUpTo },
      nodeName: NODE,
    })),
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  };
}

interface ProxyFigures {
  firstSyncMs: number;
  incrementalMs: number;
  rssMiB: number;
  peakMiB: number;
}

/** Runs one proxy: waits for its first sync, then times `changes` single-endpoint updates. */
async function benchProxy(
  name: string,
  child: ChildProcess,
  metricsUrl: string,
  config: ClientConfig,
  changes: number,
): Promise<ProxyFigures> {
  const m = (kind: 'full' | 'partial', what: 'count' | 'sum'): Promise<number | undefined> =>
    metric(metricsUrl, `kubeproxy_sync_${kind}_proxy_rules_duration_seconds_${what}`);
  const count = (): Promise<number | undefined> => m('partial', 'count');
  const sum = (): Promise<number | undefined> => m('partial', 'sum');
  const deadline = Date.now() + Number(arg('sync-timeout', '300')) * 1000;
  while (((await m('full', 'count')) ?? 0) < 1) {
    if (child.exitCode !== null) throw new Error(`${name} exited before its first sync`);
    if (Date.now() > deadline) throw new Error(`${name}: no sync after 300 s: ${stderrTail(child)}`);
    await sleep(200);
  }
  const firstSyncMs = ((await m('full', 'sum')) ?? 0) * 1000;
  await sleep(2000);
  // Its own client, with a request timeout: a run once stalled for good on a get or update of the
  // setup's client, idle while the previous proxy ran (server socket open, nothing queued).
  const changer = new Client({ ...config, timeoutMs: 30_000 });
  const slices = changer.resource<EndpointSlice>(ENDPOINT_SLICES);
  let total = 0;
  for (let k = 0; k < changes; k++) {
    const c0 = (await count()) ?? 0;
    const s0 = (await sum()) ?? 0;
    // Flip the last endpoint's readiness from what it is now: an update that changed nothing
    // would be a no-op (no new resourceVersion, no watch event), as in kube, and no proxy
    // would sync (the runs share the server, so the previous proxy's flips are still there).
    const i = (k * 97) % SERVICES_N;
    const cur = await slices.get(`svc-${i}-1`, { namespace: NS });
    const wasReady = cur.endpoints?.at(-1)?.conditions?.ready !== false;
    const flipped = sliceOf(i, wasReady ? ENDPOINTS_N - 1 : ENDPOINTS_N);
    await slices.update({
      ...flipped,
      metadata: { ...flipped.metadata, resourceVersion: cur.metadata.resourceVersion ?? '' },
    });
    const until = Date.now() + CHANGE_TIMEOUT_S * 1000;
    while (((await count()) ?? 0) <= c0 && Date.now() < until) await sleep(50);
    const c1 = (await count()) ?? 0;
    if (c1 <= c0) {
      console.error(
        `${name}: no sync within ${CHANGE_TIMEOUT_S} s of an EndpointSlice change; incremental figure not measured`,
      );
      total = Number.NaN;
      break;
    }
    total += ((((await sum()) ?? 0) - s0) * 1000) / Math.max(1, c1 - c0);
    await sleep(1100); // past the min sync period
  }
  await changer.close();
  const mem = rssKiB(child.pid ?? 0);
  return { firstSyncMs, incrementalMs: total / changes, rssMiB: mem.rss / 1024, peakMiB: mem.peak / 1024 };
}

/** Waits until the server at `port` answers a query for the last Service, then warms it up. */
async function dnsReady(child: ChildProcess, port: number): Promise<void> {
  const names = Array.from({ length: SERVICES_N }, (_, i) => `svc-${i}.${NS}.svc.cluster.local`);
  const deadline = Date.now() + 120_000;
  for (;;) {
    const probe = await queryLoad('127.0.0.1', port, [`svc-${SERVICES_N - 1}.${NS}.svc.cluster.local`], 1, 1);
    if (probe.answered === 1) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('DNS server never answered');
    await sleep(500);
  }
  await queryLoad('127.0.0.1', port, names, 2000, OUTSTANDING); // warm-up
}

/** One measured round of A queries for random Services. */
function dnsRound(port: number): Promise<LoadResult> {
  const names = Array.from({ length: SERVICES_N }, (_, i) => `svc-${i}.${NS}.svc.cluster.local`);
  return queryLoad('127.0.0.1', port, names, QUERIES, OUTSTANDING);
}

async function inside(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-bench-net-'));
  const parsed = parseServerArgs([
    '--secure-port=0',
    '--bind-address=127.0.0.1',
    `--data-dir=${dir}`,
    '--service-cluster-ip-range=10.96.0.0/20',
    '--controllers=',
  ]) as { options: ServerOptions };
  const server = await startServer(parsed.options, {
    store: await openMemoryStore(),
    log: new ServerLog(() => undefined),
  });
  const client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1, burst: 0 });
  const children: ChildProcess[] = [];
  try {
    await client.resource<Namespace>(NAMESPACES).create({ metadata: { name: NS } });
    await client.resource<Node>(NODES).create({
      metadata: { name: NODE },
      spec: { podCIDR: '10.250.0.0/16' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] },
    });
    const t0 = Date.now();
    await pool(
      Array.from({ length: SERVICES_N }, (_, i) => i),
      20,
      async (i) => {
        await client.resource<Service>(SERVICES).create({
          metadata: { name: `svc-${i}`, namespace: NS },
          spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
        });
        await client.resource<EndpointSlice>(ENDPOINT_SLICES).create(sliceOf(i));
      },
    );
    console.log(
      `created ${SERVICES_N} Services with ${SERVICES_N * ENDPOINTS_N} endpoints in ${Date.now() - t0} ms`,
    );
    const kubeconfig = server.kubeconfigPath;
    if (!DNS_ONLY) await benchProxies(kubeconfig);
    if (!PROXY_ONLY) await benchDnsServers(kubeconfig, dir, children);
  } finally {
    for (const c of children) await stopChild(c);
    await client.close();
    await server.shutdown();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchProxies(kubeconfig: string): Promise<void> {
  const children: ChildProcess[] = [];
  try {
    const nft = (script: string): void => void spawnSync('nft', ['-f', '-'], { input: script });

    const capstanProxy = startChild(
      process.execPath,
      [
        join(ROOT, 'dist/src/cli/main.js'),
        'proxy',
        `--kubeconfig=${kubeconfig}`,
        `--hostname-override=${NODE}`,
        '--metrics-bind-address=127.0.0.1:10349',
        '--healthz-bind-address=127.0.0.1:10356',
        '--cluster-cidr=10.250.0.0/16',
      ],
      'capstan proxy',
    );
    children.push(capstanProxy);
    const capstan = await benchProxy(
      'capstan proxy',
      capstanProxy,
      'http://127.0.0.1:10349/metrics',
      loadKubeconfig(kubeconfig),
      CHANGES,
    );
    await stopChild(capstanProxy);
    nft('add table ip capstan-proxy\ndelete table ip capstan-proxy\n');

    let kube: ProxyFigures | undefined;
    if (haveBinary('kube-proxy', KUBE_PROXY)) {
      const kubeProxy = startChild(
        KUBE_PROXY,
        [
          '--proxy-mode=nftables',
          `--kubeconfig=${kubeconfig}`,
          `--hostname-override=${NODE}`,
          '--metrics-bind-address=127.0.0.1:10249',
          '--healthz-bind-address=127.0.0.1:10256',
          '--conntrack-max-per-core=0',
          '--conntrack-tcp-timeout-established=0',
          '--conntrack-tcp-timeout-close-wait=0',
          '--cluster-cidr=10.250.0.0/16',
        ],
        'kube-proxy',
      );
      children.push(kubeProxy);
      kube = await benchProxy(
        'kube-proxy',
        kubeProxy,
        'http://127.0.0.1:10249/metrics',
        loadKubeconfig(kubeconfig),
        CHANGES,
      );
      await stopChild(kubeProxy);
      nft(
        'add table ip kube-proxy\ndelete table ip kube-proxy\nadd table ip6 kube-proxy\ndelete table ip6 kube-proxy\n',
      );
    }

    const row = (n: string, f: ProxyFigures): string =>
      `| ${n} | ${f.firstSyncMs.toFixed(0)} | ${f.incrementalMs.toFixed(1)} | ${f.rssMiB.toFixed(0)} (peak ${f.peakMiB.toFixed(0)}) |`;
    console.log(`\nproxy, ${SERVICES_N} Services × ${ENDPOINTS_N} endpoints`);
    console.log(`| proxy | first (full) sync ms | incremental sync ms (mean of ${CHANGES}) | RSS MiB |`);
    console.log('| --- | --- | --- | --- |');
    console.log(row('capstan proxy', capstan));
    if (kube !== undefined) console.log(row('kube-proxy v1.33 nftables', kube));
    console.log(
      `load average: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    for (const c of children) await stopChild(c);
  }
}

const loadNow = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/**
 * The Capstan DNS and CoreDNS, both running throughout, loaded in turn for `--rounds` rounds
 * (which one goes first alternates), so both see the same machine; memory is read after the last.
 */
async function benchDnsServers(kubeconfig: string, dir: string, children: ChildProcess[]): Promise<void> {
  const capstanDnsFrom = (root: string, port: number, prof: string, name: string): ChildProcess =>
    startChild(
      process.execPath,
      [
        ...(prof === '' ? [] : ['--cpu-prof', `--cpu-prof-dir=${prof}`]),
        '--input-type=module',
        '-e',
        `import { startClusterDns } from ${JSON.stringify(join(root, 'dist/src/dns/cluster-dns.js'))};
         import { loadKubeconfig } from ${JSON.stringify(join(root, 'dist/src/client/index.js'))};
         const dns = await startClusterDns(loadKubeconfig(${JSON.stringify(kubeconfig)}),
           { host: '127.0.0.1', port: ${port}, upstreams: [] });
         process.on('SIGTERM', () => dns.close().then(() => process.exit(0)));`,
      ],
      name,
    );
  const capstanDns = capstanDnsFrom(ROOT, 10053, DNS_CPU_PROF, 'capstan dns');
  children.push(capstanDns);
  const baseline =
    DNS_BASELINE === ''
      ? undefined
      : capstanDnsFrom(
          resolve(DNS_BASELINE),
          10055,
          DNS_CPU_PROF === '' ? '' : join(DNS_CPU_PROF, 'baseline'),
          'capstan dns (baseline)',
        );
  if (baseline !== undefined) children.push(baseline);
  let coredns: ChildProcess | undefined;
  if (haveBinary('coredns', COREDNS)) {
    const corefile = join(dir, 'Corefile');
    writeFileSync(
      corefile,
      `.:10054 {\n  bind 127.0.0.1\n  errors\n  kubernetes cluster.local in-addr.arpa ip6.arpa {\n    kubeconfig ${kubeconfig}\n  }\n}\n`,
    );
    coredns = startChild(COREDNS, ['-conf', corefile], 'coredns');
    children.push(coredns);
  }
  const servers: { name: string; child: ChildProcess; port: number; rounds: LoadResult[] }[] = [
    { name: 'capstan dns', child: capstanDns, port: 10053, rounds: [] },
    ...(baseline === undefined
      ? []
      : [{ name: `capstan dns (${DNS_BASELINE})`, child: baseline, port: 10055, rounds: [] }]),
    ...(coredns === undefined
      ? []
      : [{ name: 'CoreDNS 1.12.4 (kubernetes plugin)', child: coredns, port: 10054, rounds: [] }]),
  ];
  for (const s of servers) await dnsReady(s.child, s.port);
  for (let r = 0; r < DNS_ROUNDS; r++) {
    const order = r % 2 === 0 ? servers : [...servers].reverse();
    for (const s of order) s.rounds.push(await dnsRound(s.port));
    console.log(
      `round ${r + 1}: ${order.map((s) => `${s.name} ${(s.rounds.at(-1)?.qps ?? 0).toFixed(0)} q/s`).join(', ')}; load average ${loadNow()}`,
    );
  }
  const median = (xs: number[]): number => {
    const v = [...xs].sort((a, b) => a - b);
    return v.length % 2 === 1
      ? (v[(v.length - 1) / 2] ?? 0)
      : ((v[v.length / 2 - 1] ?? 0) + (v[v.length / 2] ?? 0)) / 2;
  };
  console.log(
    `\nDNS, A queries for ${SERVICES_N} Services, ${QUERIES} queries × ${DNS_ROUNDS} rounds, ${OUTSTANDING} outstanding (medians of the rounds)`,
  );
  console.log('| server | queries/s | p50 ms | p99 ms | answered | RSS MiB (peak) |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const s of servers) {
    const mem = rssKiB(s.child.pid ?? 0);
    const answered = s.rounds.reduce((n, x) => n + x.answered, 0);
    const sent = s.rounds.reduce((n, x) => n + x.sent, 0);
    console.log(
      `| ${s.name} | ${median(s.rounds.map((x) => x.qps)).toFixed(0)} | ${median(s.rounds.map((x) => x.p50Ms)).toFixed(2)} | ${median(s.rounds.map((x) => x.p99Ms)).toFixed(2)} | ${answered}/${sent} | ${(mem.rss / 1024).toFixed(0)} (${(mem.peak / 1024).toFixed(0)}) |`,
    );
  }
  console.log(`load average: ${loadNow()}`);
  for (const s of servers) await stopChild(s.child);
}

if (process.env['CAPSTAN_BENCH_NETNS'] === undefined) {
  process.exitCode = outside();
} else {
  inside().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
