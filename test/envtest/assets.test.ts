/**
 * `capstan envtest-assets` writes a KUBEBUILDER_ASSETS directory; this drives it the way
 * controller-runtime v0.21's envtest does, from node: start `etcd` with envtest's flags and poll its
 * /health, write envtest's serving pair, client CA and service-account signer into --cert-dir,
 * start `kube-apiserver` with envtest's flags, poll /healthz trusting only envtest's CA, use a client
 * certificate from envtest's client CA (--client-ca-file) for ConfigMap CRUD, then SIGTERM both.
 * Also prints the median time from spawning the shim to the first 200 on /healthz (no assertion:
 * timings live in benchmarks).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { writeEnvtestAssets } from '../../src/envtest/assets.js';

const MAIN = resolve(import.meta.dirname, '../../dist/src/cli/main.js');

let root: string;
let assets: string;
let certDir: string;
let shimTmp: string;
const pem: Record<string, string> = {};

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => res(typeof addr === 'object' && addr !== null ? addr.port : 0));
    });
  });
}

/** A CA and, signed by it, a leaf: what envtest's TinyCA does. */
function issue(dir: string, name: string, ca: string, subject: string, ext: string): void {
  const k = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  execFileSync('sh', ['-c', `printf '%s\\n' '${ext}' > '${extFile}'`]);
  openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', k, '-subj', subject, '-out', csr);
  openssl(
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    join(dir, `${ca}.crt`),
    '-CAkey',
    join(dir, `${ca}.key`),
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    extFile,
    '-out',
    join(dir, `${name}.crt`),
  );
}

function selfSigned(dir: string, name: string, cn: string): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${cn}`,
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.crt`),
  );
}

beforeAll(async () => {
  expect(existsSync(MAIN), `${MAIN} missing: run npm run build`).toBe(true);
  root = await mkdtemp(join(tmpdir(), 'capstan-envtest-'));
  assets = join(root, 'assets');
  certDir = join(root, 'certs');
  shimTmp = join(root, 'tmp');
  await mkdir(certDir);
  await mkdir(shimTmp);
  await writeEnvtestAssets(assets, { mainJs: MAIN });
  const work = join(root, 'ca-work');
  await mkdir(work);
  // envtest: a serving CA + apiserver.crt/key in --cert-dir, a client CA passed as --client-ca-file,
  // and a service-account signer (sa-signer.crt/key) as --service-account-key-file / -signing-key-file.
  selfSigned(work, 'serving-ca', 'envtest-environment');
  issue(work, 'apiserver', 'serving-ca', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  selfSigned(work, 'client-ca', 'envtest-environment');
  issue(work, 'admin', 'client-ca', '/O=system:masters/CN=admin', 'extendedKeyUsage=clientAuth');
  selfSigned(certDir, 'sa-signer', 'envtest-environment');
  for (const [from, to] of [
    ['apiserver.crt', 'apiserver.crt'],
    ['apiserver.key', 'apiserver.key'],
    ['client-ca.crt', 'client-cert-auth-ca.crt'],
  ] as const) {
    await writeFile(join(certDir, to), await readFile(join(work, from)));
  }
  for (const name of ['serving-ca.crt', 'admin.crt', 'admin.key'])
    pem[name] = await readFile(join(work, name), 'utf8');
});

afterAll(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
});

interface Proc {
  readonly proc: ChildProcess;
  readonly exited: Promise<number | null>;
  output(): string;
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const proc = spawn(join(assets, bin), args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((res) =>
    proc.on('exit', (code, signal) => res(signal === null ? code : -1)),
  );
  return { proc, exited, output: () => out };
}

/** envtest's client: trusts envtest's serving CA, authenticates with a cert from its client CA. */
async function configMapCrud(port: number, api: Proc, name: string): Promise<void> {
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'envtest', server: `https://127.0.0.1:${port}`, caData: b64(pem['serving-ca.crt']) }],
    users: [{ name: 'envtest', certData: b64(pem['admin.crt']), keyData: b64(pem['admin.key']) }],
    contexts: [{ name: 'envtest', cluster: 'envtest', user: 'envtest' }],
    currentContext: 'envtest',
  });
  const core = kc.makeApiClient(k8s.CoreV1Api);
  // envtest waits for the default namespace before Start() returns.
  await poll(
    async () => {
      try {
        await core.readNamespace({ name: 'default' });
        return true;
      } catch {
        return false;
      }
    },
    api,
    10_000,
  );
  await core.createNamespacedConfigMap({
    namespace: 'default',
    body: { metadata: { name }, data: { k: 'v' } },
  });
  const list = await core.listNamespacedConfigMap({ namespace: 'default' });
  expect(list.items.find((c) => c.metadata?.name === name)?.data).toEqual({ k: 'v' });
}

async function stop(p: Proc, ms = 10_000): Promise<number | null> {
  p.proc.kill('SIGTERM');
  const timeout = new Promise<'timeout'>((res) => setTimeout(() => res('timeout'), ms).unref());
  const result = await Promise.race([p.exited, timeout]);
  if (result === 'timeout') {
    p.proc.kill('SIGKILL');
    throw new Error(`${p.proc.spawnfile} did not exit within ${ms} ms of SIGTERM:\n${p.output()}`);
  }
  return result;
}

function httpsGet(port: number, path: string): Promise<number> {
  return new Promise((res) => {
    const req = request(
      { host: '127.0.0.1', port, path, ca: pem['serving-ca.crt'], servername: 'localhost', timeout: 1_000 },
      (r) => {
        r.resume();
        res(r.statusCode ?? 0);
      },
    );
    req.on('error', () => res(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Polls until `probe` is true, as envtest does (here every 10 ms). */
async function poll(probe: () => Promise<boolean>, p: Proc, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (p.proc.exitCode !== null) throw new Error(`exited early:\n${p.output()}`);
    if (Date.now() > deadline) throw new Error(`not ready within ${ms} ms:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function apiserverArgs(securePort: number, etcdUrl: string): string[] {
  // controller-runtime v0.21 APIServer.defaultArgs plus the cert authn's --client-ca-file.
  return [
    '--advertise-address=127.0.0.1',
    `--etcd-servers=${etcdUrl}`,
    `--cert-dir=${certDir}`,
    `--secure-port=${securePort}`,
    '--bind-address=127.0.0.1',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--disable-admission-plugins=ServiceAccount',
    '--authorization-mode=RBAC',
    `--service-account-issuer=https://127.0.0.1:${securePort}/`,
    `--service-account-key-file=${join(certDir, 'sa-signer.crt')}`,
    `--service-account-signing-key-file=${join(certDir, 'sa-signer.key')}`,
    `--client-ca-file=${join(certDir, 'client-cert-auth-ca.crt')}`,
  ];
}

it('the etcd stand-in and the kube-apiserver shim pass envtest’s start, CRUD and stop; start time is printed', async () => {
  // envtest's `kube-apiserver --help` probe (it looks for --insecure-port) must not start a server.
  const help = execFileSync(join(assets, 'kube-apiserver'), ['--help'], { encoding: 'utf8' });
  expect(help).toContain('--cert-dir');
  expect(help).not.toContain('--insecure-port');
  // It is answered by the shell (envtest asks before every start) with what the server prints.
  expect(help).toBe(execFileSync(process.execPath, [MAIN, 'server', '--help'], { encoding: 'utf8' }));
  // Nor its `etcd --help` probe (for --unsafe-no-fsync) start a stand-in that never exits.
  const etcdHelp = execFileSync(join(assets, 'etcd'), ['--help'], { encoding: 'utf8', timeout: 10_000 });
  expect(etcdHelp).toContain('--unsafe-no-fsync');

  const clientPort = await freePort();
  const peerPort = await freePort();
  const etcdUrl = `http://127.0.0.1:${clientPort}`;
  const etcd = run('etcd', [
    `--advertise-client-urls=${etcdUrl}`,
    `--data-dir=${join(root, 'etcd-data')}`,
    `--listen-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    '--unsafe-no-fsync=true',
  ]);
  let health: unknown;
  await poll(
    async () => {
      try {
        const r = await fetch(`${etcdUrl}/health`);
        health = await r.json();
        return r.status === 200;
      } catch {
        return false;
      }
    },
    etcd,
    10_000,
  );
  expect(health).toMatchObject({ health: 'true' });

  const startMs: number[] = [];
  const stopMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const port = await freePort();
    const t0 = performance.now();
    const api = run('kube-apiserver', apiserverArgs(port, etcdUrl), { TMPDIR: shimTmp });
    await poll(async () => (await httpsGet(port, '/healthz')) === 200, api, 30_000);
    startMs.push(performance.now() - t0);
    // The first start runs the server the stand-in parked; a restart finds none and starts cold.
    expect(api.output().includes('running the server the etcd stand-in parked'), api.output()).toBe(i === 0);
    if (i === 0) {
      // The pair envtest wrote is served unchanged: the request above trusted only envtest's CA.
      await configMapCrud(port, api, 'envtest-cm');
    }
    const t1 = performance.now();
    expect(await stop(api), api.output()).toBe(0);
    stopMs.push(performance.now() - t1);
    // The server's own lines reach the shim's output, and it is stopped: its port is closed.
    expect(api.output()).toContain('serving on https://127.0.0.1:');
    expect(await httpsGet(port, '/healthz')).toBe(0);
    // The shim's temporary data directory is gone once it exits.
    expect(await readdir(shimTmp)).toEqual([]);
  }
  expect(await stop(etcd)).toBe(0);

  const median = (xs: number[]): string => ([...xs].sort((a, b) => a - b)[2] ?? NaN).toFixed(0);
  const all = (xs: number[]): string => xs.map((t) => t.toFixed(0)).join(', ');
  console.log(
    `envtest kube-apiserver shim, median of 5: spawn to first 200 on /healthz ${median(startMs)} ms ` +
      `(${all(startMs)}); SIGTERM to exit ${median(stopMs)} ms (${all(stopMs)})`,
  );
}, 180_000);

it('the etcd stand-in exits when the process that started it dies without stopping it', async () => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // A parent that starts the stand-in in the background, prints its pid and lingers: killing it
  // is a test binary dying before envtest's Stop.
  const parent = spawn(
    'sh',
    ['-c', `"$0" --listen-client-urls=${url} & echo $!; exec sleep 60`, join(assets, 'etcd')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const pid = await new Promise<number>((res) =>
    parent.stdout?.once('data', (d: Buffer) => res(Number(String(d).trim()))),
  );
  const alive = (): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  try {
    const deadline = Date.now() + 20_000;
    let healthy = false;
    while (!healthy && Date.now() < deadline) {
      healthy = await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (!healthy) await new Promise((r) => setTimeout(r, 100));
    }
    expect(healthy, 'the stand-in answered /health').toBe(true);
    parent.kill('SIGKILL');
    const gone = Date.now() + 10_000;
    while (alive() && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    expect(alive(), 'the orphaned stand-in exited').toBe(false);
  } finally {
    parent.kill('SIGKILL');
    if (alive()) process.kill(pid, 'SIGKILL');
  }
}, 60_000);

/** Whether process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function gone(pid: number, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return !alive(pid);
}

/** The stand-in at a fresh port, healthy. */
async function startStandin(): Promise<{ etcd: Proc; url: string }> {
  const url = `http://127.0.0.1:${await freePort()}`;
  const etcd = run('etcd', [`--listen-client-urls=${url}`, `--data-dir=${join(root, 'etcd-data')}`]);
  await poll(
    async () =>
      fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      ),
    etcd,
    20_000,
  );
  return { etcd, url };
}

it('a parked server is stopped when its kube-apiserver shim is killed, and when the stand-in stops first', async () => {
  for (const killed of ['shim', 'stand-in'] as const) {
    const { etcd, url } = await startStandin();
    const port = await freePort();
    const api = run('kube-apiserver', apiserverArgs(port, url), { TMPDIR: shimTmp });
    try {
      await poll(async () => (await httpsGet(port, '/healthz')) === 200, api, 60_000);
      const pid = Number(/stand-in parked \(pid (\d+)\)/.exec(api.output())?.[1]);
      expect(pid, api.output()).toBeGreaterThan(0);
      if (killed === 'shim') {
        api.proc.kill('SIGKILL');
        expect(await gone(pid), 'the server of a killed shim stops').toBe(true);
        expect(await httpsGet(port, '/healthz')).toBe(0);
        expect(await stop(etcd)).toBe(0);
        // A killed shim cannot remove its data directory (as before the stand-in parked servers).
        await rm(shimTmp, { recursive: true, force: true });
        await mkdir(shimTmp);
      } else {
        // envtest stops kube-apiserver before etcd; a stand-in stopped first stops the server, and
        // the shim then exits with the server's status.
        expect(await stop(etcd)).toBe(0);
        expect(await gone(pid)).toBe(true);
        expect(await api.exited).toBe(0);
        expect(await readdir(shimTmp)).toEqual([]);
      }
    } finally {
      api.proc.kill('SIGKILL');
      etcd.proc.kill('SIGKILL');
    }
  }
}, 180_000);

it('the parked server exits with its stand-in, even one killed, and a bad request gets no server', async () => {
  const { etcd, url } = await startStandin();
  try {
    const parked = Number(execFileSync('pgrep', ['-P', String(etcd.proc.pid)], { encoding: 'utf8' }).trim());
    expect(parked).toBeGreaterThan(0);
    expect(await fetch(`${url}/capstan-envtest/apiserver`)).toHaveProperty('status', 404); // GET
    etcd.proc.kill('SIGKILL');
    expect(await gone(parked), 'the parked server of a killed stand-in exits').toBe(true);
  } finally {
    etcd.proc.kill('SIGKILL');
  }
}, 60_000);

function b64(s: string | undefined): string {
  return Buffer.from(s ?? '').toString('base64');
}

it('with CAPSTAN_ENVTEST_ETCD=1 the etcd script runs a real etcd and the shim stores there', async () => {
  const clientPort = await freePort();
  const peerPort = await freePort();
  const etcdUrl = `http://127.0.0.1:${clientPort}`;
  const env = { CAPSTAN_ENVTEST_ETCD: '1', TMPDIR: shimTmp };
  // envtest adds --unsafe-no-fsync only when `etcd --help` lists it; Debian's etcd 3.4 does not.
  const etcd = run(
    'etcd',
    [
      `--advertise-client-urls=${etcdUrl}`,
      `--data-dir=${join(root, 'real-etcd-data')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
    ],
    env,
  );
  await poll(
    async () => {
      try {
        const r = await fetch(`${etcdUrl}/health`);
        return r.status === 200 && ((await r.json()) as { health?: string }).health === 'true';
      } catch {
        return false;
      }
    },
    etcd,
    20_000,
  );
  const port = await freePort();
  const api = run('kube-apiserver', apiserverArgs(port, etcdUrl), env);
  await poll(async () => (await httpsGet(port, '/healthz')) === 200, api, 30_000);
  await configMapCrud(port, api, 'in-real-etcd');
  expect(await stop(api), api.output()).toBe(0);
  // The object is in envtest's etcd under kube's key layout.
  const client = new Etcd3({ hosts: etcdUrl });
  try {
    expect(await client.get('/registry/configmaps/default/in-real-etcd').string()).not.toBeNull();
  } finally {
    client.close();
  }
  // Real etcd re-raises SIGTERM after its shutdown (exit by signal, -1 here); stop() fails on a hang.
  expect([0, -1]).toContain(await stop(etcd));
}, 120_000);
