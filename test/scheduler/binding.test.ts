import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { adminJson, adminTls, type AdminTls } from '../support/https.js';

/** pods/binding, served by the API server for the scheduler (kube's BindingREST). */
describe('pods/binding', () => {
  let s: TestServer;
  let tls: AdminTls;
  beforeAll(async () => {
    s = await startTestServer();
    tls = adminTls(s.kubeconfigPath);
  });
  afterAll(async () => s.close());

  const pod = (name: string): unknown => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  });
  const binding = (name: string, node: string): unknown => ({
    apiVersion: 'v1',
    kind: 'Binding',
    metadata: { name, annotations: { 'example.com/a': 'b' } },
    target: { kind: 'Node', name: node },
  });

  it('assigns the pod, sets PodScheduled=True, refuses a second binding with 409', async () => {
    expect((await adminJson(`${s.url}/api/v1/namespaces/default/pods`, tls, 'POST', pod('p1'))).status).toBe(
      201,
    );
    const r = await adminJson(
      `${s.url}/api/v1/namespaces/default/pods/p1/binding`,
      tls,
      'POST',
      binding('p1', 'n1'),
    );
    expect(r.status).toBe(201);
    const got = await adminJson(`${s.url}/api/v1/namespaces/default/pods/p1`, tls);
    const spec = got.json['spec'] as { nodeName?: string };
    const status = got.json['status'] as { conditions?: { type: string; status: string }[] };
    const meta = got.json['metadata'] as { annotations?: Record<string, string> };
    expect(spec.nodeName).toBe('n1');
    expect(meta.annotations?.['example.com/a']).toBe('b');
    expect(status.conditions?.find((c) => c.type === 'PodScheduled')?.status).toBe('True');
    const again = await adminJson(
      `${s.url}/api/v1/namespaces/default/pods/p1/binding`,
      tls,
      'POST',
      binding('p1', 'n2'),
    );
    expect(again.status).toBe(409);
    expect(again.json['message']).toContain('is already assigned to node "n1"');
  });

  it('serves the legacy bindings collection and 404s a missing pod', async () => {
    expect((await adminJson(`${s.url}/api/v1/namespaces/default/pods`, tls, 'POST', pod('p2'))).status).toBe(
      201,
    );
    const r = await adminJson(
      `${s.url}/api/v1/namespaces/default/bindings`,
      tls,
      'POST',
      binding('p2', 'n2'),
    );
    expect(r.status).toBe(201);
    const got = await adminJson(`${s.url}/api/v1/namespaces/default/pods/p2`, tls);
    expect((got.json['spec'] as { nodeName?: string }).nodeName).toBe('n2');
    const missing = await adminJson(
      `${s.url}/api/v1/namespaces/default/pods/nope/binding`,
      tls,
      'POST',
      binding('nope', 'n1'),
    );
    expect(missing.status).toBe(404);
  });

  it('refuses a binding whose UID or resourceVersion precondition fails, leaving the pod as it was', async () => {
    const created = await adminJson(`${s.url}/api/v1/namespaces/default/pods`, tls, 'POST', pod('p3'));
    expect(created.status).toBe(201);
    const meta = created.json['metadata'] as { uid: string; resourceVersion: string };
    const url = `${s.url}/api/v1/namespaces/default/pods/p3/binding`;
    const withMeta = (extra: Record<string, string>): unknown => ({
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name: 'p3', ...extra },
      target: { kind: 'Node', name: 'n3' },
    });
    const wrongUid = await adminJson(url, tls, 'POST', withMeta({ uid: 'not-the-uid' }));
    expect(wrongUid.status).toBe(409);
    expect(wrongUid.json['message']).toContain(
      `Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${meta.uid}`,
    );
    const staleRv = await adminJson(url, tls, 'POST', withMeta({ resourceVersion: '1' }));
    expect(staleRv.status).toBe(409);
    expect(staleRv.json['message']).toContain(
      `Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${meta.resourceVersion}`,
    );
    const unchanged = await adminJson(`${s.url}/api/v1/namespaces/default/pods/p3`, tls);
    expect((unchanged.json['metadata'] as { resourceVersion: string }).resourceVersion).toBe(
      meta.resourceVersion,
    );
    expect((unchanged.json['spec'] as { nodeName?: string }).nodeName).toBeUndefined();
    const ok = await adminJson(
      url,
      tls,
      'POST',
      withMeta({ uid: meta.uid, resourceVersion: meta.resourceVersion }),
    );
    expect(ok.status).toBe(201);
    const bound = await adminJson(`${s.url}/api/v1/namespaces/default/pods/p3`, tls);
    expect((bound.json['spec'] as { nodeName?: string }).nodeName).toBe('n3');
  });
});
