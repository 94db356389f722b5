/**
 * ResourceQuota end to end: a new quota's status is computed by the controller; 50 concurrent
 * creates never take a namespace past the hard limit and `status.used` matches what was stored;
 * refusals carry kube's messages (`exceeded quota: ...`, `failed quota: ...: must specify ...`);
 * pod compute resources are charged; deletes are given back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let tls: ReturnType<typeof adminTls>;

interface Reply {
  status: number;
  json: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown): Promise<Reply> {
  const res = await adminFetch(`${server.url}${path}`, tls, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: JSON.parse(res.body) as Record<string, unknown> };
}

async function quotaStatus(ns: string, name: string): Promise<Record<string, string> | undefined> {
  const q = await call('GET', `/api/v1/namespaces/${ns}/resourcequotas/${name}`);
  return (q.json['status'] as { used?: Record<string, string> } | undefined)?.used;
}

async function until<T>(f: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  // Quota usage is recounted by the client-side resourcequota controller (in-process here).
  server = await startTestServer({ controllers: ['resourcequota-controller'] });
  tls = adminTls(server.kubeconfigPath);
  for (const ns of ['q', 'pods']) {
    expect((await call('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status).toBe(201);
  }
}, 60_000);
afterAll(async () => server?.close());

describe('ResourceQuota', () => {
  it('computes a new quota’s status, and admits no more than the hard limit under 50 concurrent creates', async () => {
    const created = await call('POST', '/api/v1/namespaces/q/resourcequotas', {
      metadata: { name: 'cm' },
      spec: { hard: { 'count/configmaps': '10', secrets: '3' } },
    });
    expect(created.status).toBe(201);
    // The namespace gets its kube-root-ca.crt from the root CA publisher (it runs too): wait for
    // it, then for a status that counts every ConfigMap stored.
    await until(async () =>
      (await call('GET', '/api/v1/namespaces/q/configmaps/kube-root-ca.crt')).status === 200
        ? true
        : undefined,
    );
    const before = await until(async () => {
      const used = await quotaStatus('q', 'cm');
      const stored = (await call('GET', '/api/v1/namespaces/q/configmaps')).json['items'] as unknown[];
      return used?.['count/configmaps'] === String(stored.length) ? used : undefined;
    });
    expect(before['secrets']).toBe('0');
    const already = Number(before['count/configmaps']);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call('POST', '/api/v1/namespaces/q/configmaps', {
          metadata: { name: `cm-${i}` },
          data: { i: String(i) },
        }),
      ),
    );
    const ok = results.filter((r) => r.status === 201).length;
    const refused = results.filter((r) => r.status === 403);
    expect(ok).toBe(10 - already);
    expect(refused.length).toBe(50 - ok);
    const list = await call('GET', '/api/v1/namespaces/q/configmaps');
    expect((list.json['items'] as unknown[]).length).toBe(10);
    expect((await quotaStatus('q', 'cm'))?.['count/configmaps']).toBe('10');
    const message = (refused[0]?.json['message'] as string) ?? '';
    expect(message).toMatch(
      /^configmaps "cm-\d+" is forbidden: exceeded quota: cm, requested: count\/configmaps=1, used: count\/configmaps=10, limited: count\/configmaps=10$/,
    );
    expect(refused[0]?.json['reason']).toBe('Forbidden');
  });

  it('gives usage back after a delete', async () => {
    expect((await call('DELETE', '/api/v1/namespaces/q/configmaps/cm-0')).status).toBeLessThan(300);
    await until(async () =>
      (await quotaStatus('q', 'cm'))?.['count/configmaps'] === '9' ? true : undefined,
    );
    expect(
      (await call('POST', '/api/v1/namespaces/q/configmaps', { metadata: { name: 'again' } })).status,
    ).toBe(201);
  });

  it('charges pod compute resources and requires them to be stated', async () => {
    expect(
      (
        await call('POST', '/api/v1/namespaces/pods/resourcequotas', {
          metadata: { name: 'compute' },
          spec: { hard: { 'requests.cpu': '1', 'limits.memory': '1Gi', pods: '5' } },
        })
      ).status,
    ).toBe(201);
    const pod = (name: string, cpu?: string): unknown => ({
      metadata: { name },
      spec: {
        containers: [
          {
            name: 'c',
            image: 'nginx',
            resources: cpu === undefined ? {} : { requests: { cpu }, limits: { memory: '256Mi' } },
          },
        ],
      },
    });
    const bare = await call('POST', '/api/v1/namespaces/pods/pods', pod('bare'));
    expect(bare.status).toBe(403);
    expect(bare.json['message']).toBe(
      'pods "bare" is forbidden: failed quota: compute: must specify limits.memory for: c; requests.cpu for: c',
    );
    expect((await call('POST', '/api/v1/namespaces/pods/pods', pod('p1', '600m'))).status).toBe(201);
    const over = await call('POST', '/api/v1/namespaces/pods/pods', pod('p2', '500m'));
    expect(over.status).toBe(403);
    expect(over.json['message']).toBe(
      'pods "p2" is forbidden: exceeded quota: compute, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1',
    );
    const used = await quotaStatus('pods', 'compute');
    expect(used).toEqual({ 'limits.memory': '256Mi', pods: '1', 'requests.cpu': '600m' });
  });

  it('counts sidecars beside the app containers, and an init container beside the sidecars before it', async () => {
    expect((await call('POST', '/api/v1/namespaces', { metadata: { name: 'sc' } })).status).toBe(201);
    expect(
      (
        await call('POST', '/api/v1/namespaces/sc/resourcequotas', {
          metadata: { name: 'cpu' },
          spec: { hard: { 'requests.cpu': '2' } },
        })
      ).status,
    ).toBe(201);
    const cpu = (name: string, m: number, sidecar = false): unknown => ({
      name,
      image: 'nginx',
      resources: { requests: { cpu: `${m}m` } },
      ...(sidecar ? { restartPolicy: 'Always' } : {}),
    });
    const created = await call('POST', '/api/v1/namespaces/sc/pods', {
      metadata: { name: 'p' },
      spec: {
        initContainers: [cpu('s', 200, true), cpu('i', 400)],
        containers: [cpu('c', 300)],
      },
    });
    expect(created.status).toBe(201);
    // The init container i runs beside s (600m), more than c and s together (500m).
    const used = await until(async () => {
      const u = await quotaStatus('sc', 'cpu');
      return u?.['requests.cpu'] === undefined || u['requests.cpu'] === '0' ? undefined : u;
    });
    expect(used['requests.cpu']).toBe('600m');
  });

  it('checks dry-run creates without charging them', async () => {
    const r = await call('POST', '/api/v1/namespaces/pods/pods?dryRun=All', {
      metadata: { name: 'dry' },
      spec: {
        containers: [
          { name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' }, limits: { memory: '1Mi' } } },
        ],
      },
    });
    expect(r.status).toBe(201);
    expect((await quotaStatus('pods', 'compute'))?.['requests.cpu']).toBe('600m');
  });
});
