/**
 * Namespace lifecycle in the API server (bootstrap, immortal namespaces, terminating namespaces,
 * the finalize subresource) and the event TTL. The deletion of a namespace's content is the
 * namespace controller's: test/controllers/namespace.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deployment, json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';

let s: ResourceApp;
beforeEach(async () => {
  s = await startResourceApp();
});
afterEach(async () => {
  await s.close();
});

async function post(url: string, body: unknown): Promise<KObj> {
  const r = await s.request(json('POST', url, body));
  expect(r.statusCode, r.body).toBe(201);
  return r.json();
}

const status = async (url: string) => (await s.request(json('GET', url))).statusCode;

describe('namespaces', () => {
  it('the four system namespaces exist, Active, with the kubernetes finalizer', async () => {
    const list = (await s.request(json('GET', '/api/v1/namespaces'))).json();
    const items = list['items'] ?? [];
    expect(items.map((n) => n.metadata.name).sort()).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
    for (const ns of items) {
      expect(ns.status).toEqual({ phase: 'Active' });
      expect(ns.spec).toEqual({ finalizers: ['kubernetes'] });
      expect(ns.metadata.labels).toEqual({ 'kubernetes.io/metadata.name': ns.metadata.name });
    }
  });

  it('bootstrapping again (another server on the same store) changes nothing', async () => {
    const before = (await s.request(json('GET', '/api/v1/namespaces'))).json();
    const other = await startResourceApp({ store: s.store });
    const after = (await s.request(json('GET', '/api/v1/namespaces'))).json();
    expect(after['items']).toEqual(before['items']);
    await other.app.close();
  });

  it('a created namespace gets the kubernetes finalizer and phase Active', async () => {
    const ns = await post('/api/v1/namespaces', {
      metadata: { name: 'team' },
      spec: { finalizers: ['example.com/x'] },
      status: { phase: 'Terminating' },
    });
    expect(ns['spec']).toEqual({ finalizers: ['example.com/x', 'kubernetes'] });
    expect(ns['status']).toEqual({ phase: 'Active' });
  });

  it('default, kube-system and kube-public cannot be deleted (403)', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const r = await s.request(json('DELETE', `/api/v1/namespaces/${name}`));
      expect(r.statusCode).toBe(403);
      expect(r.json()).toMatchObject({
        reason: 'Forbidden',
        message: `namespaces "${name}" is forbidden: this namespace may not be deleted`,
      });
    }
    expect(await status('/api/v1/namespaces/default')).toBe(200);
  });

  it('deletion marks the namespace Terminating and refuses new content', async () => {
    await post('/api/v1/namespaces', { metadata: { name: 'doomed' } });
    await post('/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'a' } });
    await post('/api/v1/namespaces/doomed/configmaps', {
      metadata: { name: 'held', finalizers: ['example.com/hold'] },
    });
    await post('/apis/apps/v1/namespaces/doomed/deployments', deployment('d'));
    await post('/api/v1/namespaces/doomed/secrets', { metadata: { name: 's' } });
    await post('/api/v1/namespaces/doomed/events', {
      metadata: { name: 'e' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'doomed' },
    });
    // Content of another namespace whose name extends this one stays.
    await post('/api/v1/namespaces', { metadata: { name: 'doomed2' } });
    await post('/api/v1/namespaces/doomed2/configmaps', { metadata: { name: 'safe' } });

    const del = await s.request(json('DELETE', '/api/v1/namespaces/doomed'));
    expect(del.statusCode).toBe(200);
    const ns = del.json();
    expect(ns['status']).toMatchObject({ phase: 'Terminating' });
    expect(ns['metadata'].deletionTimestamp).toMatch(/Z$/);

    const refused = await s.request(
      json('POST', '/api/v1/namespaces/doomed/configmaps', { metadata: { name: 'late' } }),
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({
      reason: 'Forbidden',
      message:
        'configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated',
      details: { causes: [{ reason: 'NamespaceTerminating', field: 'metadata.namespace' }] },
    });

    // Deleting the content and then the namespace is the namespace controller's (a client of
    // the API): test/controllers/namespace.test.ts.
    expect(await status('/api/v1/namespaces/doomed/configmaps/a')).toBe(200);
    expect(await status('/api/v1/namespaces/doomed2/configmaps/safe')).toBe(200);
  });

  it('spec.finalizers only change through the finalize subresource', async () => {
    const ns = await post('/api/v1/namespaces', { metadata: { name: 'fin' } });
    const put = await s.request(json('PUT', '/api/v1/namespaces/fin', { ...ns, spec: { finalizers: [] } }));
    expect(put.json()['spec']).toEqual({ finalizers: ['kubernetes'] });
    const fin = await s.request(
      json('PUT', '/api/v1/namespaces/fin/finalize', { ...put.json(), spec: { finalizers: [] } }),
    );
    expect(fin.statusCode).toBe(200);
    // An empty list is no list once decoded (kube v1.33.13 answers `spec: {}` too).
    expect(fin.json()['spec']).toEqual({});
  });

  it('a namespace status update sets the phase', async () => {
    const ns = await post('/api/v1/namespaces', { metadata: { name: 'st' } });
    const r = await s.request(
      json('PUT', '/api/v1/namespaces/st/status', { ...ns, status: { phase: 'Active', conditions: [] } }),
    );
    expect(r.statusCode).toBe(200);
    expect(r.json()['status']).toEqual({ phase: 'Active' });
  });
});

describe('event TTL', () => {
  it('events are stored with a shared lease; other objects without one', async () => {
    for (const n of ['e1', 'e2']) {
      await post('/api/v1/namespaces/default/events', {
        metadata: { name: n },
        involvedObject: { kind: 'Pod', name: 'p' },
      });
    }
    await post('/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'e3' },
      eventTime: '2024-01-01T00:00:00.000000Z',
      reportingController: 'c',
      reportingInstance: 'i',
      action: 'A',
      reason: 'R',
      type: 'Normal',
      regarding: { kind: 'Pod', name: 'p' },
    });
    await post('/api/v1/namespaces/default/configmaps', { metadata: { name: 'c' } });
    const leases = await Promise.all(
      ['e1', 'e2', 'e3'].map(async (n) => (await s.store.get(`/events/default/${n}`)).kv?.lease),
    );
    expect(leases[0]).toBeGreaterThan(0n);
    expect(new Set(leases).size).toBe(1);
    expect((await s.store.get('/configmaps/default/c')).kv?.lease).toBe(0n);
  });

  it('events expire after the TTL', async () => {
    const short = await startResourceApp({ eventTtlSeconds: 1 });
    try {
      await short.request(
        json('POST', '/api/v1/namespaces/default/events', {
          metadata: { name: 'gone' },
          involvedObject: { kind: 'Pod', name: 'p' },
        }),
      );
      expect((await short.request(json('GET', '/api/v1/namespaces/default/events/gone'))).statusCode).toBe(
        200,
      );
      const deadline = Date.now() + 15_000;
      while (
        (await short.request(json('GET', '/api/v1/namespaces/default/events/gone'))).statusCode !== 404
      ) {
        if (Date.now() > deadline) throw new Error('event never expired');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await short.close();
    }
  });
});
