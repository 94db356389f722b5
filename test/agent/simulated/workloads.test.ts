/**
 * Workload controllers driving pods on simulated nodes, in one in-process Capstan with its
 * controller manager: a Deployment becomes available, scales down (its pods deleted through the
 * agent's grace-period path) and is deleted with its pods. Pods are pinned to a node by the
 * template's nodeName, so no scheduler is needed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment } from '../../../src/api/types/apps-v1.js';
import type { Pod } from '../../../src/api/types/core-v1.js';
import { Client, DEPLOYMENTS, loadKubeconfig, NAMESPACES, PODS } from '../../../src/client/index.js';
import { startSimulatedNodes, type SimulatedNodes } from '../../../src/agent/simulated/simulator.js';
import { startTestServer, type TestServer } from '../../support/server.js';

const NS = 'sim-workloads';

let server: TestServer;
let client: Client;
let sim: SimulatedNodes;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

beforeAll(async () => {
  server = await startTestServer({
    controllers: ['deployment-controller', 'replicaset-controller', 'garbage-collector-controller'],
  });
  const config = { ...loadKubeconfig(server.kubeconfigPath), qps: -1 };
  client = new Client(config);
  await client.resource(NAMESPACES).create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  sim = await startSimulatedNodes(config, { nodes: 2, nodeNamePrefix: 'wl-' }, undefined, { log: () => {} });
  await sim.registered;
}, 60_000);

afterAll(async () => {
  await sim?.stop();
  await client?.close();
  await server?.close();
});

describe('a Deployment on simulated nodes', () => {
  it('becomes available, scales down and goes away with its pods', async () => {
    const deployments = client.resource<Deployment>(DEPLOYMENTS);
    await deployments.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { nodeName: 'wl-1', containers: [{ name: 'nginx', image: 'nginx:1.27' }] },
        },
      },
    });
    const available = await until('3 available replicas', async () => {
      const d = await deployments.get('web', { namespace: NS });
      return d.status?.availableReplicas === 3 ? d : undefined;
    });
    expect(available.status?.readyReplicas).toBe(3);
    const pods = await client.resource<Pod>(PODS).list({ namespace: NS, labelSelector: 'app=web' });
    expect(new Set(pods.items.map((p) => p.status?.podIP)).size).toBe(3);

    await deployments.patch('web', { spec: { replicas: 1 } }, { type: 'merge', namespace: NS });
    await until('one pod left', async () => {
      const list = await client.resource<Pod>(PODS).list({ namespace: NS, labelSelector: 'app=web' });
      return list.items.length === 1 ? true : undefined;
    });

    await deployments.delete('web', { namespace: NS, propagationPolicy: 'Foreground' });
    await until('no pods', async () => {
      const list = await client.resource<Pod>(PODS).list({ namespace: NS, labelSelector: 'app=web' });
      return list.items.length === 0 ? true : undefined;
    });
  }, 90_000);
});
