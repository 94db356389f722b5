/**
 * The server's in-process loopback identities: a client certificate minted from the cluster CA
 * for a component's user and groups. The server must authenticate it as that identity
 * (SelfSubjectReview, what `kubectl auth whoami` asks) and authorize it by RBAC's bootstrap policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SelfSubjectReview } from '../../src/api/types/authentication-v1.js';
import type { Lease } from '../../src/api/types/coordination-v1.js';
import type { ConfigMap } from '../../src/api/types/core-v1.js';
import {
  CONFIG_MAPS,
  Client,
  LEASES,
  PODS,
  SELF_SUBJECT_REVIEWS,
  isForbidden,
  type ApiStatusError,
} from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  // kube-apiserver's default is AlwaysAllow; a cluster runs Node,RBAC.
  // Bare: the in-process controller manager would hold the Lease this test takes.
  server = await startTestServer({ args: ['--authorization-mode=Node,RBAC', '--controllers='] });
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await server?.close();
});

async function clientAs(user: string, groups: string[]): Promise<Client> {
  const c = new Client(await server.server.loopbackConfig(user, groups));
  clients.push(c);
  return c;
}

async function whoami(c: Client): Promise<{ username?: string; groups?: string[] }> {
  const review = await c.resource<SelfSubjectReview>(SELF_SUBJECT_REVIEWS).create({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
    metadata: {},
  });
  return review.status?.userInfo ?? {};
}

describe('loopback identities', () => {
  it('authenticates as the minted user and groups, against 127.0.0.1', async () => {
    const cfg = await server.server.loopbackConfig('system:node:n1', ['system:nodes']);
    expect(new URL(cfg.server).hostname).toBe('127.0.0.1');
    const node = await clientAs('system:node:n1', ['system:nodes']);
    const info = await whoami(node);
    expect(info.username).toBe('system:node:n1');
    expect(info.groups).toEqual(expect.arrayContaining(['system:nodes', 'system:authenticated']));
    const kcm = await clientAs('system:kube-controller-manager', []);
    expect((await whoami(kcm)).username).toBe('system:kube-controller-manager');
  });

  it('is authorized by RBAC: the controller manager may list everything and hold its Lease, nothing more', async () => {
    const kcm = await clientAs('system:kube-controller-manager', []);
    const pods = await kcm.resource(PODS).list();
    expect(Array.isArray(pods.items)).toBe(true);
    const lease = await kcm.resource<Lease>(LEASES).create({
      metadata: { name: 'kube-controller-manager', namespace: 'kube-system' },
      spec: { holderIdentity: 'me' },
    });
    await kcm.resource<Lease>(LEASES).update({ ...lease, spec: { holderIdentity: 'me-again' } });
    const denied = await kcm
      .resource<ConfigMap>(CONFIG_MAPS)
      .create({ metadata: { name: 'nope', namespace: 'default' } })
      .catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Error);
    expect(isForbidden(denied)).toBe(true);
    expect((denied as ApiStatusError).code).toBe(403);
    // A user without any binding gets nothing.
    const nobody = await clientAs('nobody', []);
    expect(
      isForbidden(
        await nobody
          .resource(PODS)
          .list()
          .catch((e: unknown) => e),
      ),
    ).toBe(true);
  });
});
