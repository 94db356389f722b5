/**
 * Routes between nodes' pod CIDRs (src/agent/network/pod-routes.ts) on real routing tables: two
 * nodes as network namespaces this test creates (test/support/netns.ts), each with its pod
 * bridge and a pod serving HTTP, joined by one veth pair (the nodes' shared link, 192.168.77.0/24,
 * inside the namespaces only). Each node runs the route syncer against a real Capstan holding
 * both Nodes; node A also runs the Service proxy. Proves pod-to-pod and pod-to-Service traffic
 * across the nodes, convergence after a hand-deleted route and a Node's deletion, and that a
 * route the syncer did not write survives everything, its own routes none of its close.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  ENDPOINT_SLICES,
  NODES,
  SERVICES,
  loadKubeconfig,
  type ClientConfig,
} from '../../src/client/index.js';
import type { Node, Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import {
  DEFAULT_ROUTE_PROTOCOL,
  startPodRoutes,
  type PodRoutes,
} from '../../src/agent/network/pod-routes.js';
import { startProxy, type Proxy } from '../../src/proxy/proxier.js';
import { NodeHost, linkNamespaces, netnsUnavailable, type PodHost } from '../support/netns.js';
import { startTestServer, type TestServer } from '../support/server.js';

const missing = netnsUnavailable();
if (missing !== undefined && process.env.CI === 'true')
  throw new Error(`pod route tests cannot run: ${missing}`);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(missing !== undefined)('pod routes between nodes (host-gw)', () => {
  let server: TestServer;
  let config: ClientConfig;
  let client: Client;
  let a: NodeHost;
  let b: NodeHost;
  let podA: PodHost;
  let podB: PodHost;
  let routesA: PodRoutes | undefined;
  let routesB: PodRoutes | undefined;
  let proxy: Proxy | undefined;

  /** Node `host`'s IPv4 routes of the main table, one line each (`ip route show`; a filter's own terms are left out). */
  const routes = (host: NodeHost, ...filter: string[]): string[] =>
    execFileSync('ip', ['-n', host.ns, '-4', 'route', 'show', 'table', 'main', ...filter], {
      encoding: 'utf8',
    })
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  const ours = (host: NodeHost): string[] => routes(host, 'proto', String(DEFAULT_ROUTE_PROTOCOL));
  const nodeObject = (name: string, cidr: string, ip: string): Node => ({
    metadata: { name },
    spec: { podCIDR: cidr, podCIDRs: [cidr] },
    status: { addresses: [{ type: 'InternalIP', address: ip }] },
  });
  async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`${what}: not after ${ms} ms`);
      await sleep(200);
    }
  }

  beforeAll(async () => {
    server = await startTestServer();
    config = loadKubeconfig(server.kubeconfigPath);
    client = new Client(config);
    a = new NodeHost('10.244.1');
    b = new NodeHost('10.244.2');
    linkNamespaces(a.ns, 'net5lan0', '192.168.77.1/24', b.ns, 'net5lan1', '192.168.77.2/24');
    // A route the syncer did not write: it must survive everything the syncer does.
    execFileSync('ip', ['-n', a.ns, 'route', 'add', '10.99.0.0/24', 'via', '192.168.77.2']);
    podA = a.addPod(5, 'pod-a');
    podB = b.addPod(5, 'pod-b');
    const nodes = client.resource<Node>(NODES);
    await nodes.create(nodeObject('node-a', '10.244.1.0/24', '192.168.77.1'));
    await nodes.create(nodeObject('node-b', '10.244.2.0/24', '192.168.77.2'));
    // A node without an InternalIP gets no route.
    await nodes.create({ metadata: { name: 'node-c' }, spec: { podCIDR: '10.244.3.0/24' } });
  }, 120_000);

  afterAll(async () => {
    await proxy?.close({ removeRules: true });
    await routesA?.close({ removeRoutes: true });
    await routesB?.close({ removeRoutes: true });
    a?.destroy();
    b?.destroy();
    await client?.close();
    await server?.close();
  });

  it('routes each node to the other nodes’ pod CIDRs, so pods reach pods across nodes', async () => {
    await until('pods served', () => a.fetch(podA.ns, `http://${podA.ip}:8080/`, 1) === 'pod-a');
    // Without the routes node A has no way to node B's pods.
    expect(a.fetch(podA.ns, `http://${podB.ip}:8080/`, 2)).toMatch(/^error/);
    routesA = await startPodRoutes(config, {
      nodeName: 'node-a',
      ipCommand: ['ip', '-n', a.ns],
      resyncPeriodMs: 300,
      log: () => undefined,
    });
    routesB = await startPodRoutes(config, {
      nodeName: 'node-b',
      ipCommand: ['ip', '-n', b.ns],
      resyncPeriodMs: 300,
      log: () => undefined,
    });
    expect(ours(a)).toEqual([`10.244.2.0/24 via 192.168.77.2 dev net5lan0`]);
    expect(ours(b)).toEqual([`10.244.1.0/24 via 192.168.77.1 dev net5lan1`]);
    expect(a.fetch(podA.ns, `http://${podB.ip}:8080/`)).toBe('pod-b');
    expect(b.fetch(podB.ns, `http://${podA.ip}:8080/`)).toBe('pod-a');
  });

  it('routes a pod on node A through a ClusterIP to an endpoint on node B', async () => {
    const svc = await client.resource<Service>(SERVICES).create({
      metadata: { name: 'web', namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    await client.resource<EndpointSlice>(ENDPOINT_SLICES).create({
      metadata: { name: 'web-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [podB.ip], conditions: { ready: true }, nodeName: 'node-b' }],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    });
    proxy = await startProxy(config, {
      nodeName: 'node-a',
      nftCommand: a.nftCommand(),
      clusterCidr: '10.244.0.0/16',
      minSyncPeriodMs: 100,
      log: () => undefined,
    });
    const ip = svc.spec?.clusterIP ?? '';
    await until('the ClusterIP answers from pod A', () => a.fetch(podA.ns, `http://${ip}/`, 2) === 'pod-b');
  });

  it('converges: a route deleted by hand comes back, a deleted Node’s route goes, others stay', async () => {
    execFileSync('ip', ['-n', a.ns, 'route', 'del', '10.244.2.0/24']);
    await until('the route restored', () => ours(a).length === 1);
    expect(a.fetch(podA.ns, `http://${podB.ip}:8080/`)).toBe('pod-b');

    await client.resource<Node>(NODES).delete('node-b');
    await until('node B’s route removed from node A', () => ours(a).length === 0);
    await routesA?.synced();
    expect(routesA?.routes.size).toBe(0);
    expect(routes(a, '10.99.0.0/24')).toEqual(['10.99.0.0/24 via 192.168.77.2 dev net5lan0']);
    // Node B's own CIDR never gets a route from its own syncer.
    expect(ours(b)).toEqual([`10.244.1.0/24 via 192.168.77.1 dev net5lan1`]);
  });

  it('close({ removeRoutes }) removes its routes and only them', async () => {
    await routesB?.close({ removeRoutes: true });
    routesB = undefined;
    expect(ours(b)).toEqual([]);
    expect(routes(b, '10.244.2.0/24')).toHaveLength(1); // node B's own bridge route
    await routesA?.close({ removeRoutes: true });
    routesA = undefined;
    expect(routes(a, '10.99.0.0/24')).toHaveLength(1);
  });
});
