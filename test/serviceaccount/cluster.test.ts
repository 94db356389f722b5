/**
 * Service accounts in the cluster, on one server (memory store): the controllers that give every
 * namespace its `default` ServiceAccount and `kube-root-ca.crt` ConfigMap (and put them back);
 * the ServiceAccount admission step of pod creates (defaulting, the account must exist, the
 * projected `kube-api-access-*` volume and its mounts, opting out); legacy token Secrets filled
 * by the token controller and usable as bearer tokens until the Secret goes; the extended expiry
 * of pod-bound tokens asked for 3607 s.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTls, startTestServer, type TestServer } from '../support/server.js';
import { admin, eventually, requestToken, tokenFetch, tokenOf } from './support.js';

let server: TestServer;
let caPem: string;

beforeAll(async () => {
  server = await startTestServer({ args: ['--anonymous-auth=false'] });
  caPem = adminTls(server.kubeconfigPath).ca;
  const ns = await admin(server, '/api/v1/namespaces', {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } },
  });
  expect(ns.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

async function get(path: string): Promise<Record<string, unknown> | undefined> {
  const r = await admin(server, path);
  return r.status === 200 ? r.json : undefined;
}

describe('controllers', () => {
  it('give a new namespace its default ServiceAccount and kube-root-ca.crt, and put them back', async () => {
    const sa = await eventually(() => get('/api/v1/namespaces/apps/serviceaccounts/default'));
    expect((sa['metadata'] as { uid?: string }).uid).toBeTruthy();
    const cm = await eventually(() => get('/api/v1/namespaces/apps/configmaps/kube-root-ca.crt'));
    expect(cm['data']).toEqual({ 'ca.crt': caPem });
    // System namespaces get them too.
    await eventually(() => get('/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt'));

    expect(
      (await admin(server, '/api/v1/namespaces/apps/configmaps/kube-root-ca.crt', { method: 'DELETE' }))
        .status,
    ).toBe(200);
    await eventually(() => get('/api/v1/namespaces/apps/configmaps/kube-root-ca.crt'));
    const patched = await admin(server, '/api/v1/namespaces/apps/configmaps/kube-root-ca.crt', {
      method: 'PATCH',
      contentType: 'application/merge-patch+json',
      body: { data: { 'ca.crt': 'tampered' } },
    });
    expect(patched.status).toBe(200);
    await eventually(async () => {
      const now = await get('/api/v1/namespaces/apps/configmaps/kube-root-ca.crt');
      return (now?.['data'] as Record<string, string> | undefined)?.['ca.crt'] === caPem ? true : undefined;
    });
    const oldUid = (sa['metadata'] as { uid: string }).uid;
    expect(
      (await admin(server, '/api/v1/namespaces/apps/serviceaccounts/default', { method: 'DELETE' })).status,
    ).toBe(200);
    const again = await eventually(async () => {
      const s = await get('/api/v1/namespaces/apps/serviceaccounts/default');
      return s !== undefined && (s['metadata'] as { uid: string }).uid !== oldUid ? s : undefined;
    });
    expect(again).toBeDefined();
  });

  it('fill legacy token Secrets, whose tokens authenticate until the Secret is deleted', async () => {
    await eventually(() => get('/api/v1/namespaces/apps/serviceaccounts/default'));
    const created = await admin(server, '/api/v1/namespaces/apps/secrets', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'legacy', annotations: { 'kubernetes.io/service-account.name': 'default' } },
        type: 'kubernetes.io/service-account-token',
      },
    });
    expect(created.status).toBe(201);
    const secret = await eventually(async () => {
      const s = await get('/api/v1/namespaces/apps/secrets/legacy');
      return (s?.['data'] as Record<string, string> | undefined)?.['token'] !== undefined ? s : undefined;
    });
    const data = secret['data'] as Record<string, string>;
    const sa = (await get('/api/v1/namespaces/apps/serviceaccounts/default'))!;
    const uid = (sa['metadata'] as { uid: string }).uid;
    expect(
      (secret['metadata'] as { annotations: Record<string, string> }).annotations[
        'kubernetes.io/service-account.uid'
      ],
    ).toBe(uid);
    expect(Buffer.from(data['ca.crt']!, 'base64').toString()).toBe(caPem);
    expect(Buffer.from(data['namespace']!, 'base64').toString()).toBe('apps');
    const token = Buffer.from(data['token']!, 'base64').toString();
    expect(decodeJwt(token)).toMatchObject({
      iss: 'kubernetes/serviceaccount',
      sub: 'system:serviceaccount:apps:default',
      'kubernetes.io/serviceaccount/namespace': 'apps',
      'kubernetes.io/serviceaccount/secret.name': 'legacy',
      'kubernetes.io/serviceaccount/service-account.name': 'default',
      'kubernetes.io/serviceaccount/service-account.uid': uid,
    });
    expect((await tokenFetch(server, '/api/v1/namespaces/apps/pods', token)).status).toBe(200);
    expect((await admin(server, '/api/v1/namespaces/apps/secrets/legacy', { method: 'DELETE' })).status).toBe(
      200,
    );
    await eventually(async () =>
      (await tokenFetch(server, '/api/v1/namespaces/apps/pods', token)).status === 401 ? true : undefined,
    );
  });

  it("delete an account's token Secrets with the account", async () => {
    const sa = await admin(server, '/api/v1/namespaces/apps/serviceaccounts', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'shortlived' } },
    });
    expect(sa.status).toBe(201);
    const created = await admin(server, '/api/v1/namespaces/apps/secrets', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'shortlived-token',
          annotations: { 'kubernetes.io/service-account.name': 'shortlived' },
        },
        type: 'kubernetes.io/service-account-token',
      },
    });
    expect(created.status).toBe(201);
    await eventually(async () => {
      const s = await get('/api/v1/namespaces/apps/secrets/shortlived-token');
      return (s?.['data'] as Record<string, string> | undefined)?.['token'] !== undefined ? true : undefined;
    });
    expect(
      (await admin(server, '/api/v1/namespaces/apps/serviceaccounts/shortlived', { method: 'DELETE' }))
        .status,
    ).toBe(200);
    await eventually(async () =>
      (await admin(server, '/api/v1/namespaces/apps/secrets/shortlived-token')).status === 404
        ? true
        : undefined,
    );
  });

  it('delete token Secrets of accounts that do not exist', async () => {
    const created = await admin(server, '/api/v1/namespaces/apps/secrets', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'orphan', annotations: { 'kubernetes.io/service-account.name': 'nobody' } },
        type: 'kubernetes.io/service-account-token',
      },
    });
    expect(created.status).toBe(201);
    await eventually(async () =>
      (await admin(server, '/api/v1/namespaces/apps/secrets/orphan')).status === 404 ? true : undefined,
    );
  });
});

describe('pod admission', () => {
  const pod = (name: string, spec: Record<string, unknown> = {}): unknown => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'app', image: 'busybox' }], ...spec },
  });

  it('defaults the account and mounts the kube-api-access volume in every container', async () => {
    await eventually(() => get('/api/v1/namespaces/apps/serviceaccounts/default'));
    const r = await admin(server, '/api/v1/namespaces/apps/pods', {
      method: 'POST',
      body: pod('web', { initContainers: [{ name: 'init', image: 'busybox' }] }),
    });
    expect(r.status).toBe(201);
    const spec = r.json['spec'] as Record<string, unknown>;
    expect(spec['serviceAccountName']).toBe('default');
    expect(spec['serviceAccount']).toBe('default');
    const volumes = spec['volumes'] as { name: string; projected: unknown }[];
    expect(volumes).toHaveLength(1);
    expect(volumes[0]!.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volumes[0]!.projected).toEqual({
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        {
          downwardAPI: {
            items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
          },
        },
      ],
      defaultMode: 420,
    });
    for (const field of ['containers', 'initContainers']) {
      const c = (spec[field] as { volumeMounts: unknown[] }[])[0]!;
      expect(c.volumeMounts).toEqual([
        {
          name: volumes[0]!.name,
          readOnly: true,
          mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
        },
      ]);
    }
  });

  it('admits a pod created right after its namespace (waits for the default account)', async () => {
    const ns = await admin(server, '/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fresh' } },
    });
    expect(ns.status).toBe(201);
    const r = await admin(server, '/api/v1/namespaces/fresh/pods', { method: 'POST', body: pod('first') });
    expect(r.status).toBe(201);
    expect((r.json['spec'] as Record<string, unknown>)['serviceAccountName']).toBe('default');
  });

  it("refuses a pod whose account does not exist, with kube's message", async () => {
    const r = await admin(server, '/api/v1/namespaces/apps/pods', {
      method: 'POST',
      body: pod('lost', { serviceAccountName: 'missing' }),
    });
    expect(r.status).toBe(403);
    expect(r.json['reason']).toBe('Forbidden');
    expect(r.json['message']).toBe(
      'pods "lost" is forbidden: error looking up service account apps/missing: serviceaccount "missing" not found',
    );
  });

  it('mounts nothing when the pod or its account opts out', async () => {
    const byPod = await admin(server, '/api/v1/namespaces/apps/pods', {
      method: 'POST',
      body: pod('quiet', { automountServiceAccountToken: false }),
    });
    expect(byPod.status).toBe(201);
    expect((byPod.json['spec'] as Record<string, unknown>)['volumes']).toBeUndefined();
    const sa = await admin(server, '/api/v1/namespaces/apps/serviceaccounts', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'silent' },
        automountServiceAccountToken: false,
      },
    });
    expect(sa.status).toBe(201);
    const bySa = await admin(server, '/api/v1/namespaces/apps/pods', {
      method: 'POST',
      body: pod('quiet2', { serviceAccountName: 'silent' }),
    });
    expect(bySa.status).toBe(201);
    const spec = bySa.json['spec'] as Record<string, unknown>;
    expect(spec['volumes']).toBeUndefined();
    expect((spec['containers'] as { volumeMounts?: unknown }[])[0]!.volumeMounts).toBeUndefined();
  });

  it('gives pod-bound tokens asked for 3607 s a year, with warnafter (extend-token-expiration)', async () => {
    const p = await eventually(() => get('/api/v1/namespaces/apps/pods/web'));
    const uid = (p['metadata'] as { uid: string }).uid;
    const answer = await requestToken(server, 'apps', 'default', {
      expirationSeconds: 3607,
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'web', uid },
    });
    expect(answer.status).toBe(201);
    const claims = decodeJwt(tokenOf(answer));
    expect(claims.exp! - claims.iat!).toBe(365 * 24 * 3600);
    expect((claims['kubernetes.io'] as { warnafter: number }).warnafter).toBe(claims.iat! + 3607);
    const expiry =
      Date.parse((answer.json['status'] as { expirationTimestamp: string }).expirationTimestamp) / 1000;
    expect(Math.abs(expiry - (claims.iat! + 3607))).toBeLessThanOrEqual(1);
    expect((await tokenFetch(server, '/api/v1/namespaces/apps/pods', tokenOf(answer))).status).toBe(200);
  });
});
