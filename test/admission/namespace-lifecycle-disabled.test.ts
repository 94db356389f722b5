/**
 * `--disable-admission-plugins=NamespaceLifecycle` on one server, as kube-apiserver v1.33 does
 * with that flag (checked on the reference binary): nothing else guards namespaces, so content
 * is created in a namespace that does not exist or is being terminated, and a system namespace
 * can be deleted. kubectl 1.33 and raw HTTPS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminJson,
  adminTls,
  runKubectl,
  startTestServer,
  type AdminTls,
  type TestServer,
} from '../support/server.js';

type Json = Record<string, unknown>;

let server: TestServer;
let tls: AdminTls;

async function api(method: string, path: string, body?: unknown) {
  return adminJson(`${server.url}${path}`, tls, method, body);
}

beforeAll(async () => {
  // No namespace controller: a deleted namespace stays Terminating, as with a bare kube-apiserver.
  server = await startTestServer({
    args: ['--disable-admission-plugins=NamespaceLifecycle'],
    startControllers: false,
  });
  tls = adminTls(server.kubeconfigPath);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('NamespaceLifecycle disabled', () => {
  it('creates content in a namespace that does not exist (kubectl 1.33)', async () => {
    const r = await runKubectl('1.33', ['create', 'configmap', 'x', '-n', 'nowhere'], server.kubeconfigPath);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('configmap/x created');
    const got = await api('GET', '/api/v1/namespaces/nowhere/configmaps/x');
    expect(got.status).toBe(200);
  });

  it('creates content in a terminating namespace', async () => {
    const ns = await api('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'going' },
    });
    expect(ns.status).toBe(201);
    const del = await api('DELETE', '/api/v1/namespaces/going');
    expect(del.status).toBe(200);
    expect((del.json['status'] as Json)['phase']).toBe('Terminating');
    const cm = await api('POST', '/api/v1/namespaces/going/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'late' },
    });
    expect(cm.status).toBe(201);
  });

  it('deletes a system namespace', async () => {
    // Without controllers the system namespaces are not made at start: make kube-public.
    const made = await api('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'kube-public' },
    });
    expect([201, 409]).toContain(made.status);
    const del = await api('DELETE', '/api/v1/namespaces/kube-public');
    expect(del.status).toBe(200);
    expect((del.json['status'] as Json)['phase']).toBe('Terminating');
  });
});
