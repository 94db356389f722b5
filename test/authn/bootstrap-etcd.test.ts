/**
 * Bootstrap tokens on the etcd backend: Secrets written through the API into etcd authenticate
 * their tokens, expired ones do not, and the token cleaner (a controller of the in-process
 * controller manager) deletes exactly the expired Secrets.
 */
import { existsSync } from 'node:fs';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, clientFailure, startTestServer, type TestServer } from '../support/server.js';

const ETCD_AVAILABLE = existsSync(process.env['CAPSTAN_ETCD_BIN'] ?? '/usr/bin/etcd');
if (!ETCD_AVAILABLE && process.env['CI'] === 'true') throw new Error('etcd is not installed (CI=true)');

let server: TestServer | undefined;

beforeAll(async () => {
  if (!ETCD_AVAILABLE) return;
  server = await startTestServer({
    store: 'etcd',
    args: ['--enable-bootstrap-token-auth'],
    // The token cleaner (off by default, as in kube) in the in-process controller manager.
    controllers: ['tokencleaner'],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
});

const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe.skipIf(!ETCD_AVAILABLE)('bootstrap tokens on etcd', () => {
  it('authenticate until expired; the cleaner deletes the expired Secrets only', async () => {
    const s = server as TestServer;
    const core = s.kubeConfig.makeApiClient(CoreV1Api);
    const create = (id: string, expiration: Date): Promise<unknown> =>
      core.createNamespacedSecret({
        namespace: 'kube-system',
        body: {
          metadata: { name: `bootstrap-token-${id}` },
          type: 'bootstrap.kubernetes.io/token',
          data: {
            'token-id': b64(id),
            'token-secret': b64('aaaaaaaaaaaaaaaa'),
            'usage-bootstrap-authentication': b64('true'),
            expiration: b64(expiration.toISOString()),
          },
        },
      });
    await create('live01', new Date(Date.now() + 3_600_000));
    await create('dead01', new Date(Date.now() - 1_000));
    const whoami = async (token: string): Promise<number> =>
      (
        await adminFetch(
          `${s.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
          { ca: adminTls(s.kubeconfigPath).ca },
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
          },
        )
      ).status;
    expect(await whoami('live01.aaaaaaaaaaaaaaaa')).toBe(201);
    expect(await whoami('dead01.aaaaaaaaaaaaaaaa')).toBe(401);

    const deadline = Date.now() + 20_000;
    for (;;) {
      const gone = await clientFailure(
        core.readNamespacedSecret({ namespace: 'kube-system', name: 'bootstrap-token-dead01' }),
      ).catch(() => undefined);
      if (gone?.code === 404) break;
      if (Date.now() > deadline) throw new Error('the token cleaner never deleted the expired Secret');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(
      (await core.readNamespacedSecret({ namespace: 'kube-system', name: 'bootstrap-token-live01' })).type,
    ).toBe('bootstrap.kubernetes.io/token');
  }, 30_000);
});
