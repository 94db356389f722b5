/**
 * The server's `metrics.k8s.io/v1beta1` against a fake node agent whose `/metrics/resource`
 * answers known counters at known times (each scrape: node +1 core-second, container c +0.2,
 * container d +0.05, 2 s apart), so the rates are exact: NodeMetrics and PodMetrics get and
 * list, label selectors, namespaces, 404s, discovery, kubectl 1.33 `top`, and
 * `--kubelet-preferred-address-types` choosing the node address the scrapes go to.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servingCertificate } from '../../src/agent/serving-cert.js';
import { adminJson, adminTls, type AdminTls } from '../support/https.js';
import { kubectlOutput } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';

const T0 = 1_800_000_000_000;

/** A fake agent: `/metrics/resource` with counters that grow by scrape, `/healthz`. */
async function fakeAgent(dir: string): Promise<{ server: Server; port: number; scrapes: () => number }> {
  const { cert, key } = await servingCertificate({
    certFile: '',
    keyFile: '',
    certDir: dir,
    nodeName: 'fake-a',
    nodeIP: '127.0.0.1',
  });
  let k = 0;
  const server = createServer({ cert, key }, (req, res) => {
    if (req.url === '/metrics/resource') {
      k++;
      const ts = T0 + k * 2000;
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(
        [
          `node_cpu_usage_seconds_total ${k} ${ts}`,
          `node_memory_working_set_bytes 1.073741824e+09 ${ts}`,
          `container_cpu_usage_seconds_total{container="c",namespace="default",pod="web"} ${k * 0.2} ${ts}`,
          `container_memory_working_set_bytes{container="c",namespace="default",pod="web"} 5.24288e+06 ${ts}`,
          `container_start_time_seconds{container="c",namespace="default",pod="web"} 1.7e+09`,
          `container_cpu_usage_seconds_total{container="d",namespace="default",pod="db"} ${k * 0.05} ${ts}`,
          `container_memory_working_set_bytes{container="d",namespace="default",pod="db"} 1.2288e+06 ${ts}`,
          'resource_scrape_error 0',
          '',
        ].join('\n'),
      );
    } else if (req.url === '/healthz') {
      res.end('ok');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : 0, scrapes: () => k };
}

describe('metrics.k8s.io served by the server', () => {
  let server: TestServer;
  let tls: AdminTls;
  let dir: string;
  let agent: Awaited<ReturnType<typeof fakeAgent>>;
  const api = (path: string, method = 'GET', body?: unknown) =>
    adminJson(
      `${server.url}${path}`,
      tls,
      method,
      body,
      method === 'PATCH' ? { 'content-type': 'application/merge-patch+json' } : {},
    );
  const k = (...args: string[]): Promise<string> => kubectlOutput('1.33', args, server.kubeconfigPath);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-metrics-api-'));
    agent = await fakeAgent(dir);
    server = await startTestServer({ args: ['--kubelet-preferred-address-types=Hostname,InternalIP'] });
    tls = adminTls(server.kubeconfigPath);
    const node = await api('/api/v1/nodes', 'POST', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'fake-a', labels: { zone: 'a' } },
    });
    expect(node.status).toBe(201);
    const status = await api('/api/v1/nodes/fake-a/status', 'PATCH', {
      status: {
        // TEST-NET-1: never reachable; only the Hostname address leads to the agent.
        addresses: [
          { type: 'InternalIP', address: '192.0.2.1' },
          { type: 'Hostname', address: '127.0.0.1' },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: agent.port } },
        allocatable: { cpu: '2', memory: '4Gi' },
        capacity: { cpu: '2', memory: '4Gi' },
      },
    });
    expect(status.status).toBe(200);
    for (const [name, app, c] of [
      ['web', 'web', 'c'],
      ['db', 'db', 'd'],
    ] as const) {
      const pod = await api('/api/v1/namespaces/default/pods', 'POST', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app } },
        spec: { nodeName: 'fake-a', containers: [{ name: c, image: 'busybox' }] },
      });
      expect(pod.status).toBe(201);
    }
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    agent?.server.close();
    await rm(dir, { recursive: true, force: true });
  });
  it('lists NodeMetrics with the rate over the sample window', async () => {
    const list = await api('/apis/metrics.k8s.io/v1beta1/nodes');
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ kind: 'NodeMetricsList', apiVersion: 'metrics.k8s.io/v1beta1' });
    const items = list.json['items'] as Record<string, unknown>[];
    expect(items).toHaveLength(1);
    // The first read scrapes twice: 1 core-second over 2 s.
    expect(items[0]).toMatchObject({
      kind: 'NodeMetrics',
      apiVersion: 'metrics.k8s.io/v1beta1',
      metadata: { name: 'fake-a', labels: { zone: 'a' } },
      timestamp: new Date(T0 + 4000).toISOString().replace('.000Z', 'Z'),
      window: '2s',
      usage: { cpu: '500m', memory: '1Gi' },
    });
    expect(agent.scrapes()).toBe(2);
    // A fresh pair is reused.
    const again = await api('/apis/metrics.k8s.io/v1beta1/nodes/fake-a');
    expect(again.json).toMatchObject({ kind: 'NodeMetrics', usage: { cpu: '500m' } });
    expect(agent.scrapes()).toBe(2);
    const none = await api('/apis/metrics.k8s.io/v1beta1/nodes?labelSelector=zone%3Db');
    expect(none.json['items']).toEqual([]);
    const missing = await api('/apis/metrics.k8s.io/v1beta1/nodes/nope');
    expect(missing.status).toBe(404);
  });

  it('gets and lists PodMetrics by namespace and label selector', async () => {
    const web = await api('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/web');
    expect(web.status).toBe(200);
    expect(web.json).toMatchObject({
      kind: 'PodMetrics',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      window: '2s',
      containers: [{ name: 'c', usage: { cpu: '100m', memory: '5Mi' } }],
    });
    const db = await api('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Ddb');
    expect(
      (db.json['items'] as { metadata: { name: string }; containers: unknown[] }[]).map((i) => [
        i.metadata.name,
        i.containers,
      ]),
    ).toEqual([['db', [{ name: 'd', usage: { cpu: '25m', memory: '1200Ki' } }]]]);
    const all = await api('/apis/metrics.k8s.io/v1beta1/pods');
    expect(
      (all.json['items'] as { metadata: { name: string } }[]).map((i) => i.metadata.name).sort(),
    ).toEqual(['db', 'web']);
    const other = await api('/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods');
    expect(other.json['items']).toEqual([]);
    expect((await api('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope')).status).toBe(404);
    expect((await api('/apis/metrics.k8s.io/v1beta1/pods?watch=true')).status).toBe(405);
    expect((await api('/apis/metrics.k8s.io/v1beta1/namespaces/default/pods', 'POST', {})).status).toBe(405);
  });

  it('shows the group in discovery and answers kubectl 1.33 top', async () => {
    const group = await api('/apis/metrics.k8s.io');
    expect(group.json).toMatchObject({
      kind: 'APIGroup',
      preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1' },
    });
    const list = await api('/apis/metrics.k8s.io/v1beta1');
    expect((list.json['resources'] as { name: string; kind: string }[]).map((r) => [r.name, r.kind])).toEqual(
      [
        ['nodes', 'NodeMetrics'],
        ['pods', 'PodMetrics'],
      ],
    );
    expect((await k('api-versions')).split('\n')).toContain('metrics.k8s.io/v1beta1');
    const nodes = await k('top', 'node');
    expect(nodes).toMatch(/^fake-a\s+500m\s+25%\s+1024Mi\s+25%\s*$/m);
    const pods = await k('top', 'pod', '-l', 'app=web');
    expect(pods).toMatch(/^web\s+100m\s+5Mi\s*$/m);
    expect(pods).not.toContain('db');
  });

  it('refuses an unknown --kubelet-preferred-address-types entry at start', async () => {
    await expect(
      startTestServer({ args: ['--kubelet-preferred-address-types=InternalIP,Bogus'] }),
    ).rejects.toThrow(/NodeAddressType "Bogus"/);
  });
});
