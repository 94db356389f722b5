/**
 * Pod routes between nodes made by the agent itself: two `capstan agent`s (in-process, their
 * configuration parsed from the agent's flags with `--run-pod-routes`, `--node-ip` and
 * `--pod-cidr`) register their Nodes with a real Capstan, and the agent's own network wiring
 * (Agent → startNodeNetwork → the route syncer, with the agent's identity) routes each node to
 * the other's pod CIDR. The nodes are network namespaces this test creates (test/support/netns.ts)
 * joined by one veth pair (their shared link, 192.168.78.0/24); each agent's `ip` runs in its
 * node's namespace (the `ipCommand` of the agent's network tuning, as a node's agent would run in
 * its host's namespace). The pods are network namespaces on each node's bridge serving HTTP with
 * busybox, not containerd pods: no container runtime is reachable (the agents report it), which
 * the route syncer does not use. Proves pod-to-pod traffic across the nodes both ways, and that
 * stopping a test agent (removeRulesOnStop) removes its routes and only them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/agent/agent.js';
import { agentFlagSet, resolveConfig } from '../../src/agent/config.js';
import { DEFAULT_ROUTE_PROTOCOL } from '../../src/agent/network/pod-routes.js';
import { Client, NODES, loadKubeconfig } from '../../src/client/index.js';
import type { Node } from '../../src/api/types/core-v1.js';
import { NodeHost, linkNamespaces, netnsUnavailable, type PodHost } from '../support/netns.js';
import { startTestServer, type TestServer } from '../support/server.js';

const missing = netnsUnavailable();
if (missing !== undefined && process.env.CI === 'true')
  throw new Error(`agent pod route tests cannot run: ${missing}`);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing !== undefined)('the agent’s --run-pod-routes between two nodes', () => {
  let server: TestServer;
  let client: Client;
  let dir: string;
  let a: NodeHost;
  let b: NodeHost;
  let podA: PodHost;
  let podB: PodHost;
  const agents = new Map<string, Agent>();

  /** Node `host`'s routes of the route syncer's protocol, one line each. */
  const ours = (host: NodeHost): string[] =>
    execFileSync(
      'ip',
      ['-n', host.ns, '-4', 'route', 'show', 'table', 'main', 'proto', String(DEFAULT_ROUTE_PROTOCOL)],
      { encoding: 'utf8' },
    )
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`${what}: not after ${ms} ms`);
      await sleep(250);
    }
  }
  /** A `capstan agent` for node `name` in namespace `host`, configured by its flags. */
  async function startAgent(name: string, host: NodeHost, nodeIP: string, podCIDR: string): Promise<Agent> {
    const root = join(dir, name);
    const config = resolveConfig(
      agentFlagSet().parse([
        `--kubeconfig=${server.kubeconfigPath}`,
        `--hostname-override=${name}`,
        `--node-ip=${nodeIP}`,
        `--pod-cidr=${podCIDR}`,
        '--run-pod-routes',
        // No runtime: the agent logs it and runs on; the routes do not need one.
        `--container-runtime-endpoint=unix://${join(root, 'no-runtime.sock')}`,
        `--root-dir=${join(root, 'root')}`,
        `--pod-logs-dir=${join(root, 'logs')}`,
        `--cni-conf-dir=${join(root, 'cni')}`,
        '--enable-server=false',
        '--healthz-port=0',
      ]),
    );
    expect(config.runPodRoutes).toBe(true);
    const agent = new Agent(config, {
      network: { ipCommand: ['ip', '-n', host.ns], removeRulesOnStop: true },
    });
    agents.set(name, agent);
    await agent.start();
    return agent;
  }

  beforeAll(async () => {
    server = await startTestServer();
    client = new Client(loadKubeconfig(server.kubeconfigPath));
    dir = await mkdtemp(join(tmpdir(), 'capstan-agent-routes-'));
    a = new NodeHost('10.244.11');
    b = new NodeHost('10.244.12');
    linkNamespaces(a.ns, 'net6lan0', '192.168.78.1/24', b.ns, 'net6lan1', '192.168.78.2/24');
    podA = a.addPod(5, 'pod-a');
    podB = b.addPod(6, 'pod-b');
  }, 120_000);

  afterAll(async () => {
    for (const agent of agents.values()) await agent.stop().catch(() => undefined);
    a?.destroy();
    b?.destroy();
    await client?.close();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('each agent registers its Node and routes the other node’s pod CIDR, so pods reach pods across nodes', async () => {
    await until('pods served', () => a.fetch(podA.ns, `http://${podA.ip}:8080/`, 1) === 'pod-a');
    // Without the agents node A has no route to node B's pods.
    expect(a.fetch(podA.ns, `http://${podB.ip}:8080/`, 2)).toMatch(/^error/);

    await startAgent('node-a', a, '192.168.78.1', '10.244.11.0/24');
    await startAgent('node-b', b, '192.168.78.2', '10.244.12.0/24');
    const nodes = await client.resource<Node>(NODES).list();
    const registered = new Map(nodes.items.map((n) => [n.metadata.name, n]));
    expect(registered.get('node-b')?.spec?.podCIDR).toBe('10.244.12.0/24');
    expect(registered.get('node-b')?.status?.addresses).toContainEqual({
      type: 'InternalIP',
      address: '192.168.78.2',
    });

    // Node A's agent may have synced before node B registered: the Node's arrival brings the route.
    await until('node A routes node B’s pods', () => ours(a).length === 1);
    await until('node B routes node A’s pods', () => ours(b).length === 1);
    expect(ours(a)).toEqual(['10.244.12.0/24 via 192.168.78.2 dev net6lan0']);
    expect(ours(b)).toEqual(['10.244.11.0/24 via 192.168.78.1 dev net6lan1']);
    expect(a.fetch(podA.ns, `http://${podB.ip}:8080/`)).toBe('pod-b');
    expect(b.fetch(podB.ns, `http://${podA.ip}:8080/`)).toBe('pod-a');
  }, 120_000);

  it('stopping a test agent removes its routes; the other node keeps its own', async () => {
    await agents.get('node-b')?.stop();
    agents.delete('node-b');
    expect(ours(b)).toEqual([]);
    expect(b.fetch(podB.ns, `http://${podA.ip}:8080/`, 2)).toMatch(/^error/);
    // Node B's Node object stays (a stopped kubelet does not delete its Node), so node A keeps its route.
    expect(ours(a)).toEqual(['10.244.12.0/24 via 192.168.78.2 dev net6lan0']);
    await agents.get('node-a')?.stop();
    agents.delete('node-a');
    expect(ours(a)).toEqual([]);
  }, 60_000);
});
