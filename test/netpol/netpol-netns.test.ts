/**
 * NetworkPolicy enforced with real nftables in network namespaces this test creates: pods are
 * API objects whose status carries the namespaces' addresses, policies are written through the
 * API, and HTTP between the pod namespaces shows what is allowed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, NETWORK_POLICIES, PODS, loadKubeconfig } from '../../src/client/index.js';
import type { Pod } from '../../src/api/types/core-v1.js';
import type { NetworkPolicy } from '../../src/api/types/networking-v1.js';
import { startNetworkPolicies, type NetworkPolicyEnforcer } from '../../src/netpol/enforcer.js';
import { NodeHost, netnsUnavailable, type PodHost } from '../support/netns.js';
import { startTestServer, type TestServer } from '../support/server.js';

const missing = netnsUnavailable();
if (missing !== undefined && process.env.CI === 'true')
  throw new Error(`network policy tests cannot run: ${missing}`);

describe.skipIf(missing !== undefined)('NetworkPolicy on nftables', () => {
  let server: TestServer;
  let client: Client;
  let node: NodeHost;
  let web: PodHost;
  let friend: PodHost;
  let stranger: PodHost;
  let enforcer: NetworkPolicyEnforcer;

  const addPod = async (name: string, ip: string, labels: Record<string, string>): Promise<void> => {
    const pods = client.resource<Pod>(PODS);
    const created = await pods.create({
      metadata: { name, namespace: 'default', labels },
      spec: {
        nodeName: 'node-a',
        containers: [{ name: 'c', image: 'busybox', ports: [{ name: 'http', containerPort: 8080 }] }],
      },
    });
    await pods.updateStatus({ ...created, status: { phase: 'Running', podIP: ip, podIPs: [{ ip }] } });
  };
  const policies = () => client.resource<NetworkPolicy>(NETWORK_POLICIES);
  const get = (from: PodHost, to: PodHost): string => node.fetch(from.ns, `http://${to.ip}:8080/`, 1);

  beforeAll(async () => {
    server = await startTestServer();
    const config = loadKubeconfig(server.kubeconfigPath);
    client = new Client(config);
    node = new NodeHost();
    web = node.addPod(5, 'web');
    friend = node.addPod(6, 'friend');
    stranger = node.addPod(7, 'stranger');
    await addPod('web', web.ip, { app: 'web' });
    await addPod('friend', friend.ip, { role: 'client' });
    await addPod('stranger', stranger.ip, {});
    enforcer = await startNetworkPolicies(config, {
      nodeName: 'node-a',
      nodeIps: [node.gateway],
      nftCommand: node.nftCommand(),
      minSyncPeriodMs: 50,
      log: () => undefined,
    });
  });

  afterAll(async () => {
    await enforcer?.close({ removeRules: true });
    node?.destroy();
    await client?.close();
    await server?.close();
  });

  it('allows everything without policies', () => {
    expect(get(friend, web)).toBe('web');
    expect(get(stranger, web)).toBe('web');
  });

  it('denies ingress to a selected pod, then allows the peers and port a rule names', async () => {
    await policies().create({
      metadata: { name: 'deny', namespace: 'default' },
      spec: { podSelector: { matchLabels: { app: 'web' } }, policyTypes: ['Ingress'] },
    });
    await enforcer.synced();
    await enforcer.synced();
    expect(get(friend, web)).toBe('error 28');
    expect(node.fetch(node.ns, `http://${web.ip}:8080/`, 1)).toBe('web'); // the node itself (probes)
    await policies().create({
      metadata: { name: 'allow-clients', namespace: 'default' },
      spec: {
        podSelector: { matchLabels: { app: 'web' } },
        ingress: [
          { from: [{ podSelector: { matchLabels: { role: 'client' } } }], ports: [{ port: 'http' }] },
        ],
      },
    });
    await enforcer.synced();
    await enforcer.synced();
    expect(get(friend, web)).toBe('web');
    expect(get(stranger, web)).toBe('error 28');
    expect(get(web, stranger)).toBe('stranger'); // egress of web is not isolated
  });

  it('isolates egress, and reports what it cannot enforce as a Warning event', async () => {
    await policies().create({
      metadata: { name: 'no-egress', namespace: 'default' },
      spec: {
        podSelector: { matchLabels: { role: 'client' } },
        policyTypes: ['Egress'],
        egress: [{ to: [{ ipBlock: { cidr: '192.0.2.0/24' } }], ports: [{ port: 'http' }] }],
      },
    });
    await enforcer.synced();
    await enforcer.synced();
    expect(get(friend, web)).toBe('error 28');
    expect(get(stranger, friend)).toBe('friend'); // ingress to friend is not isolated
    await expect
      .poll(async () => {
        const list = await client.request({
          method: 'GET',
          path: '/apis/events.k8s.io/v1/namespaces/default/events',
        });
        const body = JSON.parse(list.body.toString()) as {
          items?: { reason?: string; regarding?: { name?: string } }[];
        };
        const items = body.items ?? [];
        return items.filter((e) => e.reason === 'NetworkPolicyNotEnforced').map((e) => e.regarding?.name);
      })
      .toEqual(['no-egress']);
  });

  it('removes its table, and only its table, on close', async () => {
    await enforcer.close({ removeRules: true });
    expect(node.ruleset()).not.toMatch(/capstan-netpol/);
    expect(get(friend, web)).toBe('web');
    enforcer = await startNetworkPolicies(loadKubeconfig(server.kubeconfigPath), {
      nodeName: 'node-a',
      nftCommand: node.nftCommand(),
      log: () => undefined,
    });
  });
});
