/**
 * What a bare server (no controllers) makes of its own, compared with kube-apiserver v1.33 on a
 * fresh etcd: the legacy token tracking ConfigMap in kube-system (dated today, UTC, and repaired
 * at the next start when its date does not parse), and an APIService for every delegated group
 * version but none for apiregistration.k8s.io itself.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type TestServer } from '../support/server.js';

const TRACKING =
  '/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking';

let server: TestServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 100; i++) {
    const v = await read();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('not there within 10 s');
}

async function since(s: TestServer): Promise<string | undefined> {
  const r = await adminJson(`${s.url}${TRACKING}`, adminTls(s.kubeconfigPath));
  if (r.status !== 200) return undefined;
  return (r.json['data'] as Record<string, string>)['since'];
}

describe("the server's own objects", () => {
  it('the legacy token tracking ConfigMap is dated today and repaired when its date is broken', async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-own-objects-'));
    server = await startTestServer({ store: 'leveldb', dataDir: dir, args: ['--controllers='] });
    const today = new Date().toISOString().slice(0, 10);
    expect(await eventually(() => since(server!))).toBe(today);

    const put = await adminJson(
      `${server.url}${TRACKING}`,
      adminTls(server.kubeconfigPath),
      'PATCH',
      { data: { since: 'not a date' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(put.status).toBe(200);
    await server.close();
    server = await startTestServer({ store: 'leveldb', dataDir: dir, args: ['--controllers='] });
    expect(await eventually(async () => ((await since(server!)) === today ? today : undefined))).toBe(today);
  });

  it('local APIServices: one per delegated group version, none for apiregistration.k8s.io', async () => {
    server = await startTestServer({ args: ['--controllers='] });
    const s = server;
    const names = await eventually(async () => {
      const r = await adminJson(
        `${s.url}/apis/apiregistration.k8s.io/v1/apiservices`,
        adminTls(s.kubeconfigPath),
      );
      const items = ((r.json['items'] ?? []) as { metadata: { name: string } }[]).map((i) => i.metadata.name);
      return items.includes('v1.apps') ? items : undefined;
    });
    expect(names).toContain('v1.');
    expect(names).toContain('v1.apiextensions.k8s.io');
    expect(names).not.toContain('v1.apiregistration.k8s.io');
  });
});
