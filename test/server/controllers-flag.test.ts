/**
 * `capstan server --controllers`: the in-process loops kube runs in kube-controller-manager run
 * only when selected. With none, a fresh namespace stays empty (no `default` ServiceAccount, no
 * `kube-root-ca.crt`) and a deleted namespace stays Terminating, as on a bare kube-apiserver.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function names(s: TestServer, path: string): Promise<string[]> {
  const r = await adminJson(`${s.url}${path}`, adminTls(s.kubeconfigPath));
  expect(r.status).toBe(200);
  return ((r.json['items'] ?? []) as { metadata: { name: string } }[]).map((i) => i.metadata.name);
}

async function createNamespace(s: TestServer, name: string): Promise<void> {
  const r = await adminJson(`${s.url}/api/v1/namespaces`, adminTls(s.kubeconfigPath), 'POST', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name },
  });
  expect(r.status).toBe(201);
}

/** Waits until `check` holds, up to 10 s. */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await sleep(100);
  }
  throw new Error('condition not reached in 10 s');
}

describe('capstan server --controllers', () => {
  it('with none, a new namespace holds nothing and a deleted one stays Terminating', async () => {
    server = await startTestServer({ args: ['--controllers=', '--authorization-mode=RBAC'] });
    const s = server;
    await createNamespace(s, 'bare');
    // With the controllers on, both objects appear within ~100 ms (the third test).
    await sleep(1500);
    expect(await names(s, '/api/v1/namespaces/bare/serviceaccounts')).toEqual([]);
    expect(await names(s, '/api/v1/namespaces/bare/configmaps')).toEqual([]);
    const del = await adminJson(`${s.url}/api/v1/namespaces/bare`, adminTls(s.kubeconfigPath), 'DELETE');
    expect(del.status).toBe(200);
    await sleep(1000);
    const ns = await adminJson(`${s.url}/api/v1/namespaces/bare`, adminTls(s.kubeconfigPath));
    expect(ns.status).toBe(200);
    expect((ns.json['status'] as { phase: string }).phase).toBe('Terminating');
    // kube-apiserver's own start-up work still ran: system namespaces and bootstrap RBAC.
    expect(await names(s, '/api/v1/namespaces')).toEqual(
      expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']),
    );
    expect(await names(s, '/apis/rbac.authorization.k8s.io/v1/clusterroles')).toContain('cluster-admin');
  });

  it('runs only the selected controllers', async () => {
    server = await startTestServer({ args: ['--controllers=namespace,root-ca-cert-publisher'] });
    const s = server;
    await createNamespace(s, 'some');
    await eventually(async () =>
      (await names(s, '/api/v1/namespaces/some/configmaps')).includes('kube-root-ca.crt'),
    );
    expect(await names(s, '/api/v1/namespaces/some/serviceaccounts')).toEqual([]);
    await adminJson(`${s.url}/api/v1/namespaces/some`, adminTls(s.kubeconfigPath), 'DELETE');
    await eventually(
      async () =>
        (await adminJson(`${s.url}/api/v1/namespaces/some`, adminTls(s.kubeconfigPath))).status === 404,
    );
  });

  it('runs every controller by default', async () => {
    server = await startTestServer();
    const s = server;
    await createNamespace(s, 'full');
    await eventually(async () =>
      (await names(s, '/api/v1/namespaces/full/serviceaccounts')).includes('default'),
    );
    await eventually(async () =>
      (await names(s, '/api/v1/namespaces/full/configmaps')).includes('kube-root-ca.crt'),
    );
  });
});
