/**
 * The reference stack of the cluster bench, from binaries built outside the repository
 * (`--kube-bin-dir`): etcd, kube-apiserver (an admin token from a token file, service-account
 * keys made with openssl), kube-controller-manager, kube-scheduler and kwok (its default stages:
 * pods turn Running at once, Job pods then Succeeded). Everything on 127.0.0.1, free ports, one
 * temporary directory removed at stop. The Nodes are objects the bench creates with kwok's
 * annotation, as `kwokctl scale node` does.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Node } from '../../api/types/core-v1.js';
import { readKubeconfigCredentials, type KubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';
import { BenchClient } from '../client.js';
import { BenchError } from '../errors.js';
import { closedLoop } from '../load.js';
import { spawnScheduler } from '../scheduler/process.js';
import { Children, freePort, type Child } from './children.js';
import { KWOK_NODE_ANNOTATION, type ClientSettings, type Stack } from './stack.js';

const run = promisify(execFile);
/** The binaries the stack needs in `--kube-bin-dir`. */
export const KUBE_BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'];
const START_TIMEOUT_MS = 120_000;
/** Concurrent Node creations (the bench's own client). */
const NODE_WRITERS = 16;

/** Options of {@link startKubeStack}. */
export interface KubeStackOptions {
  readonly binDir: string;
  /** QPS and burst of kube-controller-manager and kube-scheduler. */
  readonly client: ClientSettings;
  readonly progress: (line: string) => void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A Node kwok manages: Capstan's simulated node's capacity, kwok's annotation and label. */
export function kwokNode(name: string): Node {
  const resources = { cpu: '32', memory: '256Gi', 'ephemeral-storage': '100Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { [KWOK_NODE_ANNOTATION]: 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        type: 'kwok',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
    status: { capacity: resources, allocatable: resources },
  };
}

/** A static-token identity of kube-apiserver's `--token-auth-file`. */
export interface TokenIdentity {
  readonly user: string;
  readonly groups: readonly string[];
}

/** The bench's administrator (`system:masters`); its kubeconfig is `admin.kubeconfig`. */
const ADMIN: TokenIdentity = { user: 'bench-admin', groups: ['system:masters'] };

/** Writes a kubeconfig that presents `token` to `server` (its certificate not verified). */
export async function writeTokenKubeconfig(path: string, server: string, token: string): Promise<void> {
  await writeFile(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: kube',
      '  cluster:',
      `    server: ${server}`,
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: user',
      '  user:',
      `    token: ${token}`,
      'contexts:',
      '- name: kube',
      '  context: {cluster: kube, user: user}',
      'current-context: kube',
      '',
    ].join('\n'),
  );
}

/** What {@link writeCredentials} wrote into its directory. */
export interface Credentials {
  /** The administrator's kubeconfig (`system:masters`). */
  readonly kubeconfig: string;
  /** The administrator's token (for kubeconfigs of further servers sharing the token file). */
  readonly adminToken: string;
  /** `tokens.csv`: the static tokens of the administrator and of every other identity. */
  readonly tokenFile: string;
  /** An RSA key for service-account tokens (`sa.key`), and a self-signed CA (`ca.crt`, `ca.key`). */
  readonly saKey: string;
  readonly caCrt: string;
  readonly caKey: string;
  /** A kubeconfig per further identity, by user name. */
  readonly kubeconfigs: ReadonlyMap<string, string>;
}

/**
 * Writes the keys, the token file (the administrator and `identities`, one random token each) and
 * a kubeconfig per identity into `dir`, for a server at `server`.
 */
export async function writeCredentials(
  dir: string,
  server: string,
  identities: readonly TokenIdentity[] = [],
): Promise<Credentials> {
  const saKey = join(dir, 'sa.key');
  const [caCrt, caKey] = [join(dir, 'ca.crt'), join(dir, 'ca.key')];
  await run('openssl', ['genrsa', '-out', saKey, '2048']);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    caCrt,
    '-subj',
    '/CN=capstan-bench-ca',
    '-days',
    '2',
  ]);
  const lines: string[] = [];
  const kubeconfigs = new Map<string, string>();
  let kubeconfig = '';
  let adminToken = '';
  for (const id of [ADMIN, ...identities]) {
    const token = randomBytes(24).toString('hex');
    if (id === ADMIN) adminToken = token;
    lines.push(`${token},${id.user},${id.user},"${id.groups.join(',')}"`);
    const path = join(dir, `${id === ADMIN ? 'admin' : id.user.replaceAll(':', '-')}.kubeconfig`);
    await writeTokenKubeconfig(path, server, token);
    if (id === ADMIN) kubeconfig = path;
    else kubeconfigs.set(id.user, path);
  }
  const tokenFile = join(dir, 'tokens.csv');
  await writeFile(tokenFile, `${lines.join('\n')}\n`);
  return { kubeconfig, adminToken, tokenFile, saKey, caCrt, caKey, kubeconfigs };
}

/** Resolves once `probe` does, rejects when `child` exits or the timeout passes. */
export async function waitFor(child: Child, what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.gone()) throw new BenchError('BENCH_SERVER_START', await child.exited);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) throw new BenchError('BENCH_SERVER_START', `${what} did not come up in time`);
    await sleep(100);
  }
}

/**
 * kube-apiserver's flags for one server on `etcdServers` (static tokens, Node and RBAC
 * authorization, service-account keys), with `credentials` (shared by every server of a control
 * plane) and its own serving certificate in `certDir`.
 */
export function apiserverArgs(o: {
  readonly etcdServers: string;
  readonly address: string;
  readonly port: number;
  readonly credentials: Pick<Credentials, 'tokenFile' | 'caCrt' | 'saKey'>;
  readonly certDir: string;
}): string[] {
  return [
    `--etcd-servers=${o.etcdServers}`,
    `--secure-port=${o.port}`,
    `--bind-address=${o.address}`,
    `--advertise-address=${o.address}`,
    `--cert-dir=${o.certDir}`,
    `--token-auth-file=${o.credentials.tokenFile}`,
    '--authorization-mode=Node,RBAC',
    `--client-ca-file=${o.credentials.caCrt}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${o.credentials.saKey}`,
    `--service-account-signing-key-file=${o.credentials.saKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
  ];
}

/**
 * Resolves with a client (2 sessions) of the kube-apiserver `child` once its `/readyz` answers
 * 200 with `creds`.
 * @throws BenchError BENCH_SERVER_START when it exits or the start timeout passes.
 */
export async function waitApiserverReady(child: Child, creds: KubeconfigCredentials): Promise<BenchClient> {
  let client: BenchClient | undefined;
  try {
    await waitFor(child, 'kube-apiserver', async () => {
      client ??= new BenchClient(creds, 2);
      try {
        return (await client.request('GET', '/readyz')).status === 200;
      } catch (err) {
        client.close();
        client = undefined;
        throw err;
      }
    });
  } catch (err) {
    client?.close();
    throw err;
  }
  return client as unknown as BenchClient;
}

/** Options of {@link startKubeApiServer}. */
export interface KubeApiServerOptions {
  readonly binDir: string;
  /** Where the keys, tokens, kubeconfigs and etcd's data go (the caller removes it). */
  readonly dir: string;
  /** The processes are started in this set (the caller stops them). */
  readonly children: Children;
  readonly progress: (line: string) => void;
  /** Identities besides the administrator, each with its own token and kubeconfig. */
  readonly identities?: readonly TokenIdentity[];
}

/** A running etcd and kube-apiserver. */
export interface KubeApiServer {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  readonly credentials: Credentials;
  /** An administrator's client (the caller closes it). */
  readonly client: BenchClient;
}

/** The flags of a one-member etcd with its data in `dataDir`, serving `clientUrl` (8 GiB quota). */
export function singleEtcdArgs(dataDir: string, clientUrl: string, peerUrl: string): string[] {
  return [
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${clientUrl}`,
    `--advertise-client-urls=${clientUrl}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=default=${peerUrl}`,
    '--quota-backend-bytes=8589934592',
  ];
}

/**
 * Starts etcd and kube-apiserver (static tokens, Node and RBAC authorization, service-account
 * keys from `sa.key`) and resolves once `/readyz` answers 200.
 * @throws BenchError BENCH_USAGE when a binary is missing, BENCH_SERVER_START when a process
 *   does not come up.
 */
export async function startKubeApiServer(options: KubeApiServerOptions): Promise<KubeApiServer> {
  for (const b of ['etcd', 'kube-apiserver'])
    if (!existsSync(join(options.binDir, b)))
      throw new BenchError('BENCH_USAGE', `no ${b} in --kube-bin-dir ${options.binDir}`);
  const { dir, children } = options;
  const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const url = `https://127.0.0.1:${apiPort}`;
  const credentials = await writeCredentials(dir, url, options.identities);
  options.progress('kube: starting etcd');
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const etcd = children.spawn(
    'etcd',
    join(options.binDir, 'etcd'),
    singleEtcdArgs(join(dir, 'etcd'), etcdUrl, peerUrl),
  );
  await waitFor(etcd, 'etcd', async () => (await fetch(`${etcdUrl}/health`)).ok);
  options.progress('kube: starting kube-apiserver');
  await mkdir(join(dir, 'apiserver'));
  const apiserver = children.spawn(
    'kube-apiserver',
    join(options.binDir, 'kube-apiserver'),
    apiserverArgs({
      etcdServers: etcdUrl,
      address: '127.0.0.1',
      port: apiPort,
      credentials,
      certDir: join(dir, 'apiserver'),
    }),
  );
  const client = await waitApiserverReady(apiserver, readKubeconfigCredentials(credentials.kubeconfig));
  return { url, credentials, client };
}

/** The Service range of both servers the benches start. */
export const SERVICE_CIDR = '10.0.0.0/24';

/**
 * kube-controller-manager's flags as the benches run it: every default controller, node CIDRs
 * from `clusterCidr`, a service account per controller, no leader election or serving port.
 */
export function kubeControllerManagerArgs(
  kubeconfig: string,
  credentials: Pick<Credentials, 'saKey' | 'caCrt' | 'caKey'>,
  clusterCidr: string,
  client: ClientSettings,
): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--controllers=*',
    '--allocate-node-cidrs',
    `--cluster-cidr=${clusterCidr}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--use-service-account-credentials',
    `--service-account-private-key-file=${credentials.saKey}`,
    `--root-ca-file=${credentials.caCrt}`,
    `--cluster-signing-cert-file=${credentials.caCrt}`,
    `--cluster-signing-key-file=${credentials.caKey}`,
    `--kube-api-qps=${client.qps}`,
    `--kube-api-burst=${client.burst}`,
  ];
}

/**
 * Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler; kwok starts with the
 * nodes.
 * @throws BenchError BENCH_USAGE when a binary is missing, BENCH_SERVER_START when a process
 *   does not come up (nothing is left running).
 */
export async function startKubeStack(options: KubeStackOptions): Promise<Stack> {
  for (const b of KUBE_BINARIES)
    if (!existsSync(join(options.binDir, b)))
      throw new BenchError('BENCH_USAGE', `no ${b} in --kube-bin-dir ${options.binDir}`);
  const bin = (b: string): string => join(options.binDir, b);
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-kube-'));
  const children = new Children();
  children.addCleanup(() => rm(dir, { recursive: true, force: true }));
  let client: BenchClient | undefined;
  let stopped = false;
  const stop = async (): Promise<void> => {
    stopped = true;
    client?.close();
    await children.stopAll();
  };
  try {
    const api = await startKubeApiServer({
      binDir: options.binDir,
      dir,
      children,
      progress: options.progress,
    });
    client = api.client;
    const { kubeconfig } = api.credentials;
    const c = api.client;
    options.progress('kube: starting kube-controller-manager and kube-scheduler');
    children.spawn(
      'kube-controller-manager',
      bin('kube-controller-manager'),
      // Room for 16,384 nodes' /24s (10.244.0.0/16 holds only 256).
      kubeControllerManagerArgs(kubeconfig, api.credentials, '10.64.0.0/10', options.client),
    );
    const scheduler = await spawnScheduler(
      { kind: 'binary', binary: bin('kube-scheduler') },
      { kubeconfig, qps: options.client.qps, burst: options.client.burst, dir },
    );
    children.adopt('kube-scheduler', scheduler.pid, scheduler.exited, () => scheduler.stop());
    let lostWhy: ((why: string) => void) | undefined;
    const lost = new Promise<never>((_, reject) => (lostWhy = (why) => reject(new Error(why))));
    lost.catch(() => undefined);
    for (const child of children.running())
      void child.exited.then((why) => {
        if (!stopped) lostWhy?.(why);
      });
    let kwokPid: number | undefined;
    return {
      label: `kube v1.33 stack (etcd + kube-apiserver + kcm + kube-scheduler + kwok)`,
      target: `${options.binDir}: etcd, kube-apiserver, kube-controller-manager and kube-scheduler (--kube-api-qps=${options.client.qps} --kube-api-burst=${options.client.burst}), kwok (default stages)`,
      kubeconfig,
      client: c,
      children,
      nodeSelector: 'type=kwok',
      lost,
      nodesPid: () => kwokPid,
      startNodes: async (n) => {
        await writeFile(join(dir, 'kwok.yaml'), '');
        const kwok = children.spawn('kwok', bin('kwok'), [
          `--kubeconfig=${kubeconfig}`,
          '--manage-all-nodes=false',
          `--manage-nodes-with-annotation-selector=${KWOK_NODE_ANNOTATION}=fake`,
          `--config=${join(dir, 'kwok.yaml')}`,
        ]);
        kwokPid = kwok.pid;
        void kwok.exited.then((why) => {
          if (!stopped) lostWhy?.(why);
        });
        await closedLoop(NODE_WRITERS, { maxOps: n }, async (i) => {
          await c.expect('POST', '/api/v1/nodes', 201, {
            body: JSON.stringify(kwokNode(`kwok-node-${i}`)),
            contentType: 'application/json',
            discardBody: true,
          });
        });
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
