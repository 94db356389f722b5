/**
 * The Service proxy on real nftables, in network namespaces this test creates: Services and
 * EndpointSlices written to a real Capstan, the proxy syncing rules into the node namespace,
 * and HTTP through ClusterIPs and node ports from the node and from pods.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Client,
  ENDPOINT_SLICES,
  SERVICES,
  loadKubeconfig,
  type ClientConfig,
} from '../../src/client/index.js';
import type { Service } from '../../src/api/types/core-v1.js';
import type { EndpointSlice } from '../../src/api/types/discovery-v1.js';
import { startProxy, type Proxy } from '../../src/proxy/proxier.js';
import { NodeHost, netnsUnavailable, type PodHost } from '../support/netns.js';
import { startTestServer, type TestServer } from '../support/server.js';

const missing = netnsUnavailable();
if (missing !== undefined && process.env.CI === 'true') throw new Error(`proxy tests cannot run: ${missing}`);

describe.skipIf(missing !== undefined)('service proxy on nftables', () => {
  let server: TestServer;
  let config: ClientConfig;
  let client: Client;
  let node: NodeHost;
  let pod1: PodHost;
  let pod2: PodHost;
  let proxy: Proxy;

  const sliceOf = (svc: string, eps: NonNullable<EndpointSlice['endpoints']>): EndpointSlice => ({
    metadata: { name: `${svc}-1`, namespace: 'default', labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    endpoints: eps,
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  });
  const ready = (ip: string, nodeName = 'node-a'): NonNullable<EndpointSlice['endpoints']>[number] => ({
    addresses: [ip],
    conditions: { ready: true },
    nodeName,
  });
  /** Each chain of the proxy's table → the kernel handles of its rules (new handles: rewritten). */
  const ruleHandles = (): Map<string, string[]> => {
    const text = execFileSync(
      'ip',
      ['netns', 'exec', node.ns, 'nft', '-a', 'list', 'table', 'ip', 'capstan-proxy'],
      {
        encoding: 'utf8',
      },
    );
    const out = new Map<string, string[]>();
    let chain: string[] | undefined;
    for (const line of text.split('\n')) {
      const c = /^\s*chain (\S+) \{/.exec(line);
      if (c !== null) out.set(c[1] ?? '', (chain = []));
      else if (/^\s*\}/.test(line)) chain = undefined;
      else chain?.push(...(/# handle (\d+)$/.exec(line)?.slice(1) ?? []));
    }
    return out;
  };
  const clusterIp = async (name: string): Promise<string> =>
    (await client.resource<Service>(SERVICES).get(name, { namespace: 'default' })).spec?.clusterIP ?? '';

  beforeAll(async () => {
    server = await startTestServer();
    config = loadKubeconfig(server.kubeconfigPath);
    client = new Client(config);
    node = new NodeHost();
    // A table the proxy did not write: it must survive everything the proxy does.
    execFileSync('ip', ['netns', 'exec', node.ns, 'nft', 'add table ip foreign']);
    execFileSync('ip', ['netns', 'exec', node.ns, 'nft', 'add chain ip foreign keep']);
    pod1 = node.addPod(5, 'pod1');
    pod2 = node.addPod(6, 'pod2');
    const services = client.resource<Service>(SERVICES);
    const slices = client.resource<EndpointSlice>(ENDPOINT_SLICES);
    await services.create({
      metadata: { name: 'web', namespace: 'default' },
      spec: { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }] },
    });
    await slices.create(sliceOf('web', [ready(pod1.ip), ready(pod2.ip)]));
    await services.create({
      metadata: { name: 'sticky', namespace: 'default' },
      spec: { sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
    await slices.create(sliceOf('sticky', [ready(pod1.ip), ready(pod2.ip)]));
    await services.create({
      metadata: { name: 'self', namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
    await slices.create(sliceOf('self', [ready(pod1.ip)]));
    await services.create({
      metadata: { name: 'empty', namespace: 'default' },
      spec: { ports: [{ name: 'http', port: 80 }] },
    });
    await services.create({
      metadata: { name: 'headless', namespace: 'default' },
      spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] },
    });
    proxy = await startProxy(config, {
      nodeName: 'node-a',
      nftCommand: node.nftCommand(),
      clusterCidr: '10.244.0.0/16',
      minSyncPeriodMs: 100,
      log: () => undefined,
    });
  });

  afterAll(async () => {
    await proxy?.close({ removeRules: true });
    node?.destroy();
    await client?.close();
    await server?.close();
  });

  it('routes a ClusterIP from the node and from a pod to both endpoints', async () => {
    const ip = await clusterIp('web');
    const seen = new Set<string>();
    for (let i = 0; i < 30 && seen.size < 2; i++)
      seen.add(node.fetch(i % 2 === 0 ? node.ns : pod2.ns, `http://${ip}/`));
    expect([...seen].sort()).toEqual(['pod1', 'pod2']);
  });

  it('routes a node port on the node address', async () => {
    const svc = await client.resource<Service>(SERVICES).get('web', { namespace: 'default' });
    const nodePort = svc.spec?.ports?.[0]?.nodePort;
    expect(node.fetch(node.ns, `http://${node.gateway}:${nodePort}/`)).toMatch(/^pod[12]$/);
  });

  it('lets a pod reach itself through its Service (hairpin)', async () => {
    expect(node.fetch(pod1.ns, `http://${await clusterIp('self')}/`)).toBe('pod1');
  });

  it('keeps a client on one endpoint with ClientIP affinity', async () => {
    const ip = await clusterIp('sticky');
    const seen = new Set(Array.from({ length: 8 }, () => node.fetch(pod2.ns, `http://${ip}/`)));
    expect(seen.size).toBe(1);
  });

  it('rejects a Service without endpoints at once, and writes nothing for a headless one', async () => {
    expect(node.fetch(node.ns, `http://${await clusterIp('empty')}/`)).toBe('error 7');
    expect(node.ruleset()).not.toMatch(/default\/headless/);
  });

  it('takes a not-ready endpoint out of rotation with a small incremental sync', async () => {
    const slices = client.resource<EndpointSlice>(ENDPOINT_SLICES);
    const cur = await slices.get('web-1', { namespace: 'default' });
    await slices.update({
      ...cur,
      endpoints: [ready(pod1.ip), { addresses: [pod2.ip], conditions: { ready: false } }],
    });
    await expect
      .poll(async () => {
        await proxy.synced();
        return node.fetch(node.ns, `http://${await clusterIp('web')}/`);
      })
      .toBe('pod1');
    const ip = await clusterIp('web');
    expect(new Set(Array.from({ length: 10 }, () => node.fetch(node.ns, `http://${ip}/`)))).toEqual(
      new Set(['pod1']),
    );
    expect(proxy.lastSync?.commands).toBeLessThan(10);
  });

  it('rewrites only the changed Service: a port change, a deletion; other chains keep their rule handles', async () => {
    const services = client.resource<Service>(SERVICES);
    const before = ruleHandles();
    const stickyChains = [...before.keys()].filter((c) => c.includes('default/sticky/'));
    expect(stickyChains.length).toBeGreaterThan(0);
    const web = await services.get('web', { namespace: 'default' });
    const webIp = web.spec?.clusterIP ?? '';
    await services.update({
      ...web,
      spec: { ...web.spec, ports: [{ ...web.spec?.ports?.[0], port: 81 }] },
    });
    await expect
      .poll(async () => {
        await proxy.synced();
        return node.fetch(node.ns, `http://${webIp}:81/`, 1);
      })
      .toBe('pod1');
    expect(node.fetch(node.ns, `http://${webIp}:80/`, 1)).toMatch(/^error /);
    expect(proxy.lastSync?.full).toBe(false);
    await services.delete('self', { namespace: 'default' });
    await expect
      .poll(async () => {
        await proxy.synced();
        return node.ruleset();
      })
      .not.toMatch(/default\/self/);
    const after = ruleHandles();
    for (const c of stickyChains) expect(after.get(c)).toEqual(before.get(c));
    expect(node.fetch(pod2.ns, `http://${await clusterIp('sticky')}/`)).toMatch(/^pod[12]$/);
  });

  it('repairs what others changed in its table on a full resync, keeping affinity', async () => {
    const ip = await clusterIp('sticky');
    const first = node.fetch(pod2.ns, `http://${ip}/`);
    const svcChain = [...ruleHandles().keys()].find((c) => /^svc-.*default\/sticky\//.test(c));
    const nft = (cmd: string): void => void execFileSync('ip', ['netns', 'exec', node.ns, 'nft', cmd]);
    nft(`flush chain ip capstan-proxy ${svcChain}`);
    nft('add chain ip capstan-proxy stray');
    expect(node.fetch(pod2.ns, `http://${ip}/`, 1)).toMatch(/^error /);
    await proxy.resync();
    expect(proxy.lastSync?.full).toBe(true);
    expect(node.ruleset()).not.toMatch(/chain stray/);
    expect(new Set(Array.from({ length: 4 }, () => node.fetch(pod2.ns, `http://${ip}/`)))).toEqual(
      new Set([first]),
    );
  });

  it('reconciles on restart instead of duplicating, and leaves foreign tables alone', async () => {
    await proxy.close();
    const before = node.ruleset();
    proxy = await startProxy(config, {
      nodeName: 'node-a',
      nftCommand: node.nftCommand(),
      clusterCidr: '10.244.0.0/16',
      minSyncPeriodMs: 100,
      log: () => undefined,
    });
    const after = node.ruleset();
    expect(after.match(/table ip capstan-proxy/g)?.length).toBe(1);
    // Affinity sets start empty again (their entries are learnt from traffic); the rest is identical.
    const rules = (text: string): string[] =>
      text.split('\n').filter((l) => !/expires|elements = \{ [0-9.]+ /.test(l));
    expect(rules(after)).toEqual(rules(before));
    expect(after).toMatch(/table ip foreign/);
    await proxy.close({ removeRules: true });
    expect(node.ruleset()).not.toMatch(/capstan-proxy/);
    expect(node.ruleset()).toMatch(/table ip foreign/);
    proxy = await startProxy(config, {
      nodeName: 'node-a',
      nftCommand: node.nftCommand(),
      minSyncPeriodMs: 100,
      log: () => undefined,
    });
  });
});
