/**
 * NodeRestriction on `serviceaccounts/token` (kube's admitServiceAccount): a node identity may
 * only request tokens bound to a pod, by name and uid, that is scheduled on itself; other users
 * are not restricted. Authorization allows everything here, so each refusal is admission's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, type AdminTls } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientTls, clusterIssuer } from '../support/users.js';

describe('NodeRestriction on serviceaccounts/token', () => {
  let server: TestServer;
  let admin: AdminTls;
  let node: AdminTls;
  const uids = new Map<string, string>();
  const token = (tls: AdminTls, boundObjectRef?: Record<string, unknown>) =>
    adminJson(`${server.url}/api/v1/namespaces/default/serviceaccounts/default/token`, tls, 'POST', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: [], ...(boundObjectRef ? { boundObjectRef } : {}) },
    });

  beforeAll(async () => {
    server = await startTestServer({
      args: ['--enable-admission-plugins=NodeRestriction', '--authorization-mode=AlwaysAllow'],
    });
    admin = adminTls(server.kubeconfigPath);
    node = await clientTls(server, await clusterIssuer(server), 'system:node:n1', ['system:nodes']);
    const deadline = Date.now() + 20_000;
    while (
      (await adminJson(`${server.url}/api/v1/namespaces/default/serviceaccounts/default`, admin)).status !==
      200
    ) {
      if (Date.now() > deadline) throw new Error('no default ServiceAccount');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const [name, nodeName] of [
      ['on-n1', 'n1'],
      ['on-n2', 'n2'],
    ]) {
      const pod = await adminJson(`${server.url}/api/v1/namespaces/default/pods`, admin, 'POST', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: { nodeName, containers: [{ name: 'c', image: 'busybox' }] },
      });
      expect(pod.status).toBe(201);
      uids.set(name ?? '', String((pod.json['metadata'] as { uid: string }).uid));
    }
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  const ref = (name: string, uid = uids.get(name)) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    name,
    ...(uid ? { uid } : {}),
  });

  it('lets a node request a token bound to a pod on itself', async () => {
    const r = await token(node, ref('on-n1'));
    expect(r.status).toBe(201);
    expect((r.json['status'] as { token: string }).token).not.toBe('');
  });

  it("refuses tokens bound to another node's pod, unbound, without uid or with a stale uid", async () => {
    const cases: [Record<string, unknown> | undefined, string][] = [
      [ref('on-n2'), 'node requested token bound to a pod scheduled on a different node'],
      [undefined, 'node requested token not bound to a pod'],
      [{ apiVersion: 'v1', kind: 'Secret', name: 's', uid: 'x' }, 'node requested token not bound to a pod'],
      [ref('on-n1', ''), 'node requested token with a pod binding without a uid'],
      [ref('on-n1', 'not-the-uid'), 'does not match the UID in record'],
    ];
    for (const [bound, message] of cases) {
      const r = await token(node, bound);
      expect(r.status, message).toBe(403);
      expect(r.json['reason']).toBe('Forbidden');
      expect(String(r.json['message'])).toContain(message);
    }
    const gone = await token(node, ref('nope', 'u'));
    expect(gone.status).toBe(404);
  });

  it('does not restrict other users', async () => {
    expect((await token(admin)).status).toBe(201);
    expect((await token(admin, ref('on-n2'))).status).toBe(201);
  });
});
