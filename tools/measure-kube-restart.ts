/**
 * The reference for issue 31, item 5: the restart of kube's single node (etcd, kube-apiserver and
 * kubelet v1.33, reference builds never part of the repository) with a pod running, measured as
 * tools/measure-cluster-restart.ts measures Capstan's second run.
 *
 *   node dist/tools/measure-kube-restart.js [--kube-bin-dir DIR] [--runs N] [--pod-cidr CIDR]
 *
 * It starts containerd with the locally built images (tools/node-agents.ts's environment, which
 * containerd stays up through: kubelet does not start it), etcd and kube-apiserver (static
 * tokens, as `capstan bench cluster` runs them) and kubelet on cgroupfs, and runs one busybox pod
 * on the node. Then, `runs` times: kubelet, kube-apiserver and etcd are stopped (SIGTERM), and all
 * three are spawned again at once; the figure is the wall time from that spawn to the node
 * Lease's `renewTime` (kubelet's clock is this machine's). The pod's container ID and restart
 * count are checked to be unchanged at the end.
 *
 * Needs root, containerd, runc, the CNI plugins and busybox-static. The bridge, the pod CIDR and
 * everything kubelet adds to the host (chains, kernel settings, cgroups, mounts) are removed at
 * the end, as tools/agent-vs-kubelet.ts does.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchClient } from '../src/bench/client.js';
import { Children, type Child } from '../src/bench/cluster/children.js';
import {
  apiserverArgs,
  SERVICE_CIDR,
  singleEtcdArgs,
  waitApiserverReady,
  writeCredentials,
} from '../src/bench/cluster/kube-stack.js';
import { BUSYBOX_IMAGE } from '../src/cluster/dev-images.js';
import { readKubeconfigCredentials, type KubeconfigCredentials } from '../src/pki/kubeconfig-credentials.js';
import {
  arg,
  freePort,
  hostState,
  removeAgentLeftovers,
  sleep,
  startAgent,
  toolStart,
  waitNodeReady,
  withAgentEnv,
  type AgentEnv,
  type NodeAgent,
} from './node-agents.js';

toolStart('usage: node dist/tools/measure-kube-restart.js [--kube-bin-dir DIR] [--runs N] [--pod-cidr CIDR]');
const BIN_DIR = arg('kube-bin-dir', '/work/refbuild/bin');
const RUNS = Number(arg('runs', '4'));
const POD_CIDR = arg('pod-cidr', `10.244.${randomInt(152, 216)}.0/24`);
const BRIDGE = `cstk-${randomBytes(4).toString('hex')}`;
const NODE = 'kube-node-0';
const POD_PATH = '/api/v1/namespaces/default/pods/web';

/** etcd and kube-apiserver on fixed ports, so that a restart keeps every kubeconfig valid. */
class ControlPlane {
  #etcd: Child | undefined;
  #apiserver: Child | undefined;

  private constructor(
    private readonly children: Children,
    private readonly etcdArgs: readonly string[],
    private readonly apiArgs: readonly string[],
    readonly kubeconfigPath: string,
    readonly admin: KubeconfigCredentials,
  ) {}

  static async create(dir: string, children: Children): Promise<ControlPlane> {
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const credentials = await writeCredentials(dir, `https://127.0.0.1:${apiPort}`);
    await mkdir(join(dir, 'apiserver'));
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    const etcdArgs = singleEtcdArgs(join(dir, 'etcd'), etcdUrl, peerUrl);
    const apiArgs = apiserverArgs({
      etcdServers: etcdUrl,
      address: '127.0.0.1',
      port: apiPort,
      credentials,
      certDir: join(dir, 'apiserver'),
    });
    return new ControlPlane(
      children,
      etcdArgs,
      apiArgs,
      credentials.kubeconfig,
      readKubeconfigCredentials(credentials.kubeconfig),
    );
  }

  /** Spawns etcd and kube-apiserver, without waiting for either. */
  spawn(): Child {
    this.#etcd = this.children.spawn('etcd', join(BIN_DIR, 'etcd'), this.etcdArgs);
    this.#apiserver = this.children.spawn('kube-apiserver', join(BIN_DIR, 'kube-apiserver'), this.apiArgs);
    return this.#apiserver;
  }

  async stop(): Promise<void> {
    await this.#apiserver?.stop();
    await this.#etcd?.stop();
  }
}

/** The node Lease's `renewTime` once it is after `after` (epoch ms), polled every 50 ms for 60 s. */
async function leaseRenewedAfter(admin: KubeconfigCredentials, after: number): Promise<number> {
  const until = Date.now() + 60_000;
  let client: BenchClient | undefined;
  try {
    while (Date.now() < until) {
      try {
        client ??= new BenchClient(admin, 1);
        const r = await client.request(
          'GET',
          `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${NODE}`,
        );
        if (r.status === 200) {
          const lease = JSON.parse(r.body.toString('utf8')) as { spec?: { renewTime?: string } };
          const renew = Date.parse(lease.spec?.renewTime ?? '');
          if (renew > after) return renew;
        }
      } catch {
        // Not serving yet: a new connection next time.
        client?.close();
        client = undefined;
      }
      await sleep(50);
    }
  } finally {
    client?.close();
  }
  throw new Error(`the node Lease was not renewed within 60 s of the restart`);
}

interface PodStatus {
  status?: { phase?: string; containerStatuses?: { containerID?: string; restartCount?: number }[] };
}

async function podState(client: BenchClient): Promise<{ phase: string; container: string }> {
  const r = await client.request('GET', POD_PATH);
  const pod = JSON.parse(r.body.toString('utf8')) as PodStatus;
  const c = pod.status?.containerStatuses?.[0];
  return { phase: pod.status?.phase ?? '', container: `${c?.containerID} ${c?.restartCount}` };
}

async function measure(env: AgentEnv, plane: ControlPlane): Promise<number[]> {
  const before = hostState();
  const turnDir = join(env.dir, 'kubelet');
  const cgroupRoot = `/${NODE}`;
  let agent: NodeAgent = await startAgent('kubelet', env, turnDir, NODE, cgroupRoot);
  let client = new BenchClient(plane.admin, 1);
  const figures: number[] = [];
  try {
    await waitNodeReady(client, agent);
    // No controller manager: the namespace's ServiceAccount by hand, and no token mounted.
    await client.request('POST', '/api/v1/namespaces/default/serviceaccounts', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }),
    });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web' },
      spec: {
        nodeName: NODE,
        automountServiceAccountToken: false,
        containers: [{ name: 'web', image: BUSYBOX_IMAGE, command: ['sleep', '1000000'] }],
      },
    };
    const created = await client.request('POST', '/api/v1/namespaces/default/pods', {
      body: JSON.stringify(pod),
    });
    if (created.status !== 201)
      throw new Error(`pod create: ${created.status} ${created.body.toString('utf8')}`);
    const until = Date.now() + 120_000;
    while ((await podState(client)).phase !== 'Running') {
      if (Date.now() > until) throw new Error('the pod is not Running after 120 s');
      await sleep(200);
    }
    const first = (await podState(client)).container;
    console.log(`pod Running: container and restarts ${first}`);
    client.close();
    for (let i = 0; i < RUNS; i++) {
      await agent.stop();
      await plane.stop();
      const spawnedAt = Date.now();
      plane.spawn();
      agent = await startAgent('kubelet', env, turnDir, NODE, cgroupRoot);
      const renew = await leaseRenewedAfter(plane.admin, spawnedAt);
      figures.push(renew - spawnedAt);
      console.log(`restart ${i + 1}: ${renew - spawnedAt} ms from the spawn to the Lease's renewTime`);
      await sleep(2_000);
    }
    client = new BenchClient(plane.admin, 1);
    const last = (await podState(client)).container;
    console.log(
      `pod container and restarts: before ${first}, after ${last} (${first === last ? 'unchanged' : 'CHANGED'})`,
    );
    if (first !== last) process.exitCode = 1;
  } finally {
    client.close();
    await agent.stop();
    await removeAgentLeftovers(env, agent, turnDir, cgroupRoot, before);
  }
  return figures;
}

async function main(): Promise<void> {
  for (const b of ['etcd', 'kube-apiserver', 'kubelet'])
    if (!existsSync(join(BIN_DIR, b))) throw new Error(`no ${b} in --kube-bin-dir ${BIN_DIR}`);
  console.log(`bridge ${BRIDGE}, pod CIDR ${POD_CIDR}`);
  const dir = await mkdtemp(join(tmpdir(), 'kube-restart-'));
  const children = new Children({ logDir: dir });
  try {
    const plane = await ControlPlane.create(dir, children);
    const figures = await withAgentEnv(
      {
        dir,
        kubelet: join(BIN_DIR, 'kubelet'),
        bridge: BRIDGE,
        podCIDR: POD_CIDR,
        serviceRange: SERVICE_CIDR,
        controllers: [],
        startServer: async () => {
          (await waitApiserverReady(plane.spawn(), plane.admin)).close();
          return plane;
        },
      },
      (env) => measure(env, plane),
    );
    figures.sort((a, b) => a - b);
    console.log(
      `median ${figures[Math.floor(figures.length / 2)]} ms, min ${figures[0]} ms, max ${figures.at(-1)} ms; ` +
        `load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
  } finally {
    await children.stopAll();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
