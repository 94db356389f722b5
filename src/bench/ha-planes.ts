/**
 * The control planes of `capstan bench --ha-compare`: several API servers over a three-member
 * etcd cluster, all on this machine, each server on its own loopback address (127.0.0.11, .12,
 * ...; the whole of 127/8 is loopback) so that each has an address of its own in the
 * `kubernetes` endpoints and identity leases, as on separate hosts.
 *
 * - Capstan: `capstan server` processes (the build in dist/) sharing one cluster CA and
 *   service-account key (copied from the first server's pki, as an installer shares them), each
 *   with its own data dir and admin kubeconfig. They run as bare API servers (`--controllers=`:
 *   no in-process controller manager or scheduler), as kube-apiserver does, unless a
 *   `--server-arg` names `--controllers`; the API server's own loops run on both sides.
 * - kube: kube-apiserver processes from a directory of binaries built elsewhere, sharing the
 *   token file, client CA and service-account key of the cluster bench's kube stack.
 *
 * etcd is `$CAPSTAN_ETCD_BIN` (default Debian's `/usr/bin/etcd`) on free 127.0.0.1 ports, a fresh
 * cluster per control plane. Everything runs until `stop()`, which also removes the data.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readKubeconfigCredentials } from '../pki/kubeconfig-credentials.js';
import { Children, freePort } from './cluster/children.js';
import {
  apiserverArgs,
  waitApiserverReady,
  writeCredentials,
  writeTokenKubeconfig,
} from './cluster/kube-stack.js';
import { BenchError } from './errors.js';
import { spawnServer, type SpawnedServer } from './server-process.js';

/** etcd members of each control plane. */
const ETCD_MEMBERS = 3;

/** The processes of a control plane on this machine, whose CPU the crud scenario reads. */
export interface PlanePids {
  readonly servers: readonly number[];
  /** The etcd members. */
  readonly store: readonly number[];
}

/** A started control plane. */
export interface ControlPlane {
  /** One admin kubeconfig per API server. */
  readonly kubeconfigs: readonly string[];
  /** What runs, for the report's target. */
  readonly about: string;
  readonly pids: PlanePids;
  /** Stops the servers, then etcd, and removes the data. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The flags of each Capstan server of the plane after its addresses: `--controllers=` (a bare
 * API server, as kube-apiserver is) unless `serverArgs` names `--controllers`, then `serverArgs`.
 */
export function bareServerArgs(serverArgs: readonly string[]): string[] {
  const named = serverArgs.some((a) => a === '--controllers' || a.startsWith('--controllers='));
  return named ? [...serverArgs] : ['--controllers=', ...serverArgs];
}

/** The loopback address of server `i`. */
export function serverAddress(i: number): string {
  return `127.0.0.${11 + i}`;
}

const runFile = promisify(execFile);

/** `etcd <version>` of the binary the clusters run. */
async function etcdVersion(binary: string): Promise<string> {
  try {
    const { stdout } = await runFile(binary, ['--version']);
    return `etcd ${/etcd Version: (\S+)/.exec(stdout)?.[1] ?? 'unknown version'}`;
  } catch {
    return 'etcd';
  }
}

/** A fresh etcd cluster and a description of it. */
async function etcdCluster(): Promise<{
  endpoints: string;
  about: string;
  pids: number[];
  close: () => Promise<void>;
}> {
  const { ETCD_BINARY } = await import('../../tools/etcd-local.js');
  if (!existsSync(ETCD_BINARY)) throw new BenchError('BENCH_USAGE', `no etcd at ${ETCD_BINARY}`);
  const { startEtcdCluster } = await import('../../tools/etcd-local-cluster.js');
  const cluster = await startEtcdCluster(ETCD_MEMBERS);
  return {
    endpoints: cluster.endpoints.join(','),
    pids: cluster.members.map((m) => m.pid),
    about: `a ${ETCD_MEMBERS}-member ${await etcdVersion(ETCD_BINARY)} cluster (${ETCD_BINARY})`,
    close: () => cluster.close(),
  };
}

/**
 * Starts `servers` capstan servers (with `serverArgs`) on a fresh etcd cluster; resolves once
 * every one is ready.
 * @throws BenchError when etcd or a server does not start (what started is stopped).
 */
export async function startCapstanPlane(
  servers: number,
  serverArgs: readonly string[],
  progress: (line: string) => void,
): Promise<ControlPlane> {
  progress(`A: starting ${ETCD_MEMBERS} etcd members`);
  const etcd = await etcdCluster();
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-ha-'));
  const started: SpawnedServer[] = [];
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      for (const s of started.reverse()) await s.stop();
      await etcd.close();
      await rm(dir, { recursive: true, force: true });
    })());
  try {
    const kubeconfigs: string[] = [];
    for (let i = 0; i < servers; i++) {
      const address = serverAddress(i);
      progress(`A: starting capstan server ${i + 1}/${servers} on ${address}`);
      const dataDir = join(dir, `s${i}`);
      const pki = join(dataDir, 'pki');
      await mkdir(pki, { recursive: true });
      if (i > 0)
        for (const f of ['ca.crt', 'ca.key', 'sa.key'])
          await copyFile(join(dir, 's0', 'pki', f), join(pki, f));
      const server = await spawnServer({
        dataDir,
        bindAddress: address,
        timeoutMs: 180_000,
        extraArgs: [
          `--etcd-servers=${etcd.endpoints}`,
          `--advertise-address=${address}`,
          `--cert-dir=${pki}`,
          ...bareServerArgs(serverArgs),
        ],
      });
      started.push(server);
      kubeconfigs.push(server.kubeconfigPath);
    }
    const flags = serverArgs.length === 0 ? '' : ` with ${serverArgs.join(' ')}`;
    return {
      kubeconfigs,
      about: `${servers} capstan servers${flags} on ${etcd.about}`,
      pids: { servers: started.map((s) => s.pid), store: etcd.pids },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Starts `servers` kube-apiservers from `binDir` on a fresh etcd cluster, each once the one before
 * answers `/readyz`; resolves once every one does.
 * @throws BenchError BENCH_USAGE without `binDir/kube-apiserver`, BENCH_SERVER_START when a
 *   process does not come up (what started is stopped).
 */
export async function startKubePlane(
  binDir: string,
  servers: number,
  progress: (line: string) => void,
): Promise<ControlPlane> {
  const binary = join(binDir, 'kube-apiserver');
  if (!existsSync(binary)) throw new BenchError('BENCH_USAGE', `no kube-apiserver in ${binDir}`);
  progress(`B: starting ${ETCD_MEMBERS} etcd members`);
  const etcd = await etcdCluster();
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-ha-kube-'));
  const children = new Children();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      await children.stopAll();
      await etcd.close();
      await rm(dir, { recursive: true, force: true });
    })());
  try {
    const ports: number[] = [];
    for (let i = 0; i < servers; i++) ports.push(await freePort());
    // One token file, keys and CA for the whole control plane (admin.kubeconfig names the first server).
    const credentials = await writeCredentials(dir, `https://${serverAddress(0)}:${ports[0]!}`);
    const kubeconfigs: string[] = [];
    const serverPids: number[] = [];
    // One at a time, as Capstan's: kube-apiservers starting together on an empty etcd race to
    // create the service IP allocator's RangeAllocation, and the loser exits ("another caller
    // has already initialized the resource").
    for (let i = 0; i < servers; i++) {
      const address = serverAddress(i);
      const port = ports[i]!;
      progress(`B: starting kube-apiserver ${i + 1}/${servers} on ${address}`);
      const certDir = join(dir, `s${i}`);
      await mkdir(certDir);
      const kubeconfig = join(dir, `s${i}.kubeconfig`);
      await writeTokenKubeconfig(kubeconfig, `https://${address}:${port}`, credentials.adminToken);
      kubeconfigs.push(kubeconfig);
      const child = children.spawn(
        `kube-apiserver ${i + 1}`,
        binary,
        apiserverArgs({ etcdServers: etcd.endpoints, address, port, credentials, certDir }),
      );
      serverPids.push(child.pid);
      (await waitApiserverReady(child, readKubeconfigCredentials(kubeconfig))).close();
    }
    return {
      kubeconfigs,
      about: `${servers} kube-apiservers (${binary}) on ${etcd.about}`,
      pids: { servers: serverPids, store: etcd.pids },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
