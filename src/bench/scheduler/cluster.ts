/**
 * The cluster a scheduler bench runs on: a `capstan server` without an in-process scheduler
 * (only the namespace and service-account loops run), and N simulated nodes in their own
 * `capstan agent --simulate` process (unlimited client QPS, so that the nodes are never what
 * waits), each node labelled with one of the zones.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readKubeconfigCredentials } from '../../pki/kubeconfig-credentials.js';
import { BenchClient } from '../client.js';
import { BenchError } from '../errors.js';
import { closedLoop } from '../load.js';
import { spawnServer, type SpawnedServer } from '../server-process.js';
import type { Teardown } from '../teardown.js';
import { ZONE_LABEL } from './pods.js';
import { capstanEntry } from './process.js';

/**
 * The server's loops the bench keeps: namespaces are deleted and get their `default`
 * ServiceAccount; the node lifecycle controller lifts the `node.kubernetes.io/not-ready` taint
 * that admission puts on every new Node, once it reports Ready (as in kube).
 */
export const SERVER_CONTROLLERS =
  '--controllers=namespace-controller,serviceaccount-controller,node-lifecycle-controller';
const SIMULATED = 'node.capstan.dev/simulated=true';
/** How long the nodes may take to register and report their capacity. */
const NODES_TIMEOUT_MS = 300_000;

/** A running cluster. */
export interface BenchCluster {
  readonly server: SpawnedServer;
  readonly kubeconfig: string;
  /** A directory for the run's files (scheduler configurations); removed at teardown. */
  readonly dir: string;
  /** Node names, in registration slot order. */
  readonly nodes: readonly string[];
}

/** `zone-<i mod zones>`: the zone of the node in slot `i`. */
export function zoneOf(i: number, zones: number): string {
  return `zone-${i % zones}`;
}

/** Starts the simulated nodes' process; it is stopped by `teardown`. */
function startAgent(kubeconfig: string, nodes: number, teardown: Teardown): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      capstanEntry(),
      'agent',
      '--simulate',
      `--kubeconfig=${kubeconfig}`,
      `--nodes=${nodes}`,
      '--kube-api-qps=-1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-2048)));
  const exited = new Promise<string>((resolve) => {
    child.once('exit', () => resolve(stderr.trim().split('\n').slice(-2).join(' | ')));
    child.once('error', (err) => resolve(err.message));
  });
  let gone = false;
  void exited.then(() => (gone = true));
  teardown.add(async () => {
    if (gone) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  });
  return exited;
}

interface NodeList {
  items: {
    metadata: { name: string };
    spec?: { taints?: { effect?: string }[] };
    status?: { allocatable?: Record<string, string> };
  }[];
}

/**
 * Waits until `n` simulated nodes exist, each reported its allocatable resources, and none has a
 * NoSchedule taint left (the not-ready one, until the node lifecycle controller lifts it).
 */
async function waitForNodes(client: BenchClient, n: number, agentExited: Promise<string>): Promise<string[]> {
  let lost: string | undefined;
  void agentExited.then((why) => (lost = why));
  const deadline = Date.now() + NODES_TIMEOUT_MS;
  for (;;) {
    if (lost !== undefined) throw new BenchError('BENCH_SERVER_START', `simulated nodes exited: ${lost}`);
    const r = await client.expect('GET', `/api/v1/nodes?labelSelector=${encodeURIComponent(SIMULATED)}`, 200);
    const list = JSON.parse(r.body.toString('utf8')) as NodeList;
    const ready = list.items.filter(
      (i) =>
        i.status?.allocatable?.pods !== undefined &&
        !(i.spec?.taints ?? []).some((t) => t.effect === 'NoSchedule'),
    );
    if (ready.length >= n) return ready.map((i) => i.metadata.name);
    if (Date.now() > deadline)
      throw new BenchError(
        'BENCH_SERVER_START',
        `only ${ready.length} of ${n} simulated nodes registered and untainted`,
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Labels each node with its zone (kube's well-known label), as a cloud provider would. */
async function labelZones(client: BenchClient, nodes: readonly string[], zones: number): Promise<void> {
  await closedLoop(16, { maxOps: nodes.length }, async (i) => {
    const name = nodes[i] as string;
    const slot = Number(/(\d+)$/.exec(name)?.[1] ?? i);
    await client.expect('PATCH', `/api/v1/nodes/${name}`, 200, {
      body: JSON.stringify({ metadata: { labels: { [ZONE_LABEL]: zoneOf(slot, zones) } } }),
      contentType: 'application/merge-patch+json',
      discardBody: true,
    });
  });
}

/**
 * Starts the server and the nodes (everything is stopped by `teardown`).
 * @throws BenchError BENCH_SERVER_START when either does not come up.
 */
export async function startBenchCluster(
  options: { readonly nodes: number; readonly zones: number; readonly serverArgs: readonly string[] },
  teardown: Teardown,
  progress: (line: string) => void,
): Promise<BenchCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-bench-scheduler-'));
  teardown.add(() => rm(dir, { recursive: true, force: true }));
  const server = await spawnServer({
    dataDir: join(dir, 'data'),
    extraArgs: [SERVER_CONTROLLERS, ...options.serverArgs],
    main: capstanEntry(),
  });
  teardown.add(() => server.stop());
  const kubeconfig = server.kubeconfigPath;
  progress(`scheduler: capstan server on port ${server.port}; starting ${options.nodes} simulated nodes`);
  const agentExited = startAgent(kubeconfig, options.nodes, teardown);
  const client = new BenchClient(readKubeconfigCredentials(kubeconfig), 2);
  try {
    const nodes = await waitForNodes(client, options.nodes, agentExited);
    await labelZones(client, nodes, options.zones);
    return { server, kubeconfig, dir, nodes };
  } finally {
    client.close();
  }
}
