/**
 * RBAC through the whole server (raw HTTPS with minted client certificates): kube's 403 Status,
 * the bootstrap policy and readyz, bindings taking effect through the watch-fed index, reviews,
 * impersonation and anonymous access.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Issuer } from '../../src/pki/certificate.js';
import { adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { clientTls, clusterIssuer, waitReady } from '../support/users.js';
import { call } from './support.js';

let server: TestServer;
let admin: AdminTls;
let issuer: Issuer;
let alice: AdminTls;

async function until(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  server = await startTestServer({ args: ['--authorization-mode=Node,RBAC'] });
  admin = adminTls(server.kubeconfigPath);
  issuer = await clusterIssuer(server);
  alice = await clientTls(server, issuer, 'alice', ['devs']);
  await waitReady(server);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe('RBAC', () => {
  it("denies a user without bindings with kube's 403 Status and message", async () => {
    const r = await call(server, alice, 'GET', '/api/v1/namespaces/default/secrets');
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({
      kind: 'Status',
      reason: 'Forbidden',
      code: 403,
      message:
        'secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "default"',
      details: { kind: 'secrets' },
    });
    const del = await call(server, alice, 'DELETE', '/api/v1/namespaces/default');
    expect(del.status).toBe(403);
    expect(del.body['message']).toBe(
      'namespaces "default" is forbidden: User "alice" cannot delete resource "namespaces" in API group "" in the namespace "default"',
    );
    const path = await call(server, alice, 'GET', '/metrics');
    expect(path.body['message']).toBe('forbidden: User "alice" cannot get path "/metrics"');
  });

  it("bootstraps kube's policy and reports the hook truthfully", async () => {
    for (const name of [
      'cluster-admin',
      'admin',
      'edit',
      'view',
      'system:basic-user',
      'system:discovery',
      'system:public-info-viewer',
      'system:monitoring',
      'system:node',
      'system:kube-scheduler',
      'system:controller:deployment-controller',
    ]) {
      const r = await call(server, admin, 'GET', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`);
      expect(r.status, name).toBe(200);
      expect(
        (r.body['metadata'] as { labels: Record<string, string> }).labels['kubernetes.io/bootstrapping'],
      ).toBe('rbac-defaults');
    }
    const crb = await call(
      server,
      admin,
      'GET',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-admin',
    );
    expect(crb.body['subjects']).toEqual([
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' },
    ]);
    const ready = await call(server, admin, 'GET', '/readyz/poststarthook/rbac/bootstrap-roles');
    expect(ready.status).toBe(200);
    // aggregation filled view from system:aggregate-to-view
    await until(async () => {
      const v = await call(server, admin, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view');
      return ((v.body['rules'] as unknown[] | undefined) ?? []).length > 0;
    });
  });

  it('grants through a RoleBinding once the index sees it, in its namespace only', async () => {
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'secret-reader', namespace: 'default' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] }],
    };
    expect(
      (await call(server, admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', role))
        .status,
    ).toBe(201);
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'devs-read', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }],
    };
    expect(
      (
        await call(
          server,
          admin,
          'POST',
          '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings',
          binding,
        )
      ).status,
    ).toBe(201);
    await until(
      async () => (await call(server, alice, 'GET', '/api/v1/namespaces/default/secrets')).status === 200,
    );
    expect((await call(server, alice, 'GET', '/api/v1/namespaces/kube-system/secrets')).status).toBe(403);
    expect((await call(server, alice, 'GET', '/api/v1/secrets')).status).toBe(403);
    expect((await call(server, alice, 'DELETE', '/api/v1/namespaces/default/secrets/x')).status).toBe(403);
  });

  it('lets anonymous users reach health, version and discovery only', async () => {
    const anon = { ca: admin.ca };
    expect((await call(server, anon, 'GET', '/version')).status).toBe(200);
    expect((await call(server, anon, 'GET', '/healthz')).status).toBe(200);
    const api = await call(server, anon, 'GET', '/api');
    expect(api.status).toBe(403);
    expect((await call(server, alice, 'GET', '/api')).status).toBe(200);
    const pods = await call(server, anon, 'GET', '/api/v1/pods');
    expect(pods.status).toBe(403);
    expect(pods.body['message']).toContain('User "system:anonymous" cannot list resource "pods"');
  });

  it('answers access reviews', async () => {
    const ssar = await call(server, alice, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'default', verb: 'list', resource: 'secrets' } },
    });
    expect(ssar.status).toBe(201);
    expect(ssar.body['status']).toMatchObject({ allowed: true });
    const sar = await call(server, admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'bob', resourceAttributes: { namespace: 'default', verb: 'list', resource: 'secrets' } },
    });
    expect(sar.body['status']).toMatchObject({ allowed: false });
    expect(
      (await call(server, alice, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', sar.body))
        .status,
    ).toBe(403);
    const bad = await call(server, admin, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: 'bob' },
    });
    expect(bad.status).toBe(422);
    const rules = await call(server, alice, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'default' },
    });
    expect(rules.status).toBe(201);
    const status = rules.body['status'] as { resourceRules: { resources: string[] }[] };
    expect(status.resourceRules.some((r) => r.resources.includes('secrets'))).toBe(true);
    // As kube-apiserver v1.33.13 answers under Node,RBAC: complete for anyone but a node, and
    // system:masters holds cluster-admin's rules once (its privilege lists no rules of its own).
    expect(rules.body['status']).toMatchObject({ incomplete: false });
    const masters = await call(
      server,
      admin,
      'POST',
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectRulesReview',
        spec: { namespace: 'default' },
      },
    );
    const all = masters.body['status'] as {
      incomplete: boolean;
      nonResourceRules: { nonResourceURLs: string[] }[];
    };
    expect(all.incomplete).toBe(false);
    expect(all.nonResourceRules.filter((r) => r.nonResourceURLs.includes('*'))).toHaveLength(1);
  });

  it('checks impersonation with the impersonate verb', async () => {
    const denied = await call(server, alice, 'GET', '/api/v1/namespaces/default/pods', undefined, {
      'Impersonate-User': 'bob',
    });
    expect(denied.status).toBe(403);
    expect(denied.body['message']).toBe(
      'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const asAlice = await call(server, admin, 'GET', '/api/v1/namespaces/default/secrets', undefined, {
      'Impersonate-User': 'alice',
      'Impersonate-Group': 'devs',
    });
    expect(asAlice.status).toBe(200);
    const asBob = await call(server, admin, 'GET', '/api/v1/namespaces/default/secrets', undefined, {
      'Impersonate-User': 'bob',
    });
    expect(asBob.status).toBe(403);
    expect(asBob.body['message']).toContain('User "bob" cannot list');
    const groupOnly = await call(server, admin, 'GET', '/api/v1/namespaces/default/secrets', undefined, {
      'Impersonate-Group': 'devs',
    });
    expect(groupOnly.status).toBe(400);
  });
});

const R = '/apis/rbac.authorization.k8s.io/v1/namespaces/esc';
const role = (name: string, rules: object[]): object => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'Role',
  metadata: { name, namespace: 'esc' },
  rules,
});
const binding = (name: string, roleName: string, user: string): object => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name, namespace: 'esc' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
});

describe('escalation prevention', () => {
  let erin: AdminTls;
  beforeAll(async () => {
    erin = await clientTls(server, issuer, 'erin');
    await call(server, admin, 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'esc' },
    });
    // erin may manage roles and bindings in esc and read pods, nothing more.
    await call(
      server,
      admin,
      'POST',
      `${R}/roles`,
      role('rbac-manager', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings'],
          verbs: ['create', 'update', 'patch', 'get'],
        },
        { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
      ]),
    );
    await call(server, admin, 'POST', `${R}/rolebindings`, binding('erin-manager', 'rbac-manager', 'erin'));
    await call(
      server,
      admin,
      'POST',
      `${R}/roles`,
      role('secret-reader', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]),
    );
    await until(async () => (await call(server, erin, 'GET', '/api/v1/namespaces/esc/pods')).status === 200);
  });

  it('lets a user grant what they hold, and refuses more', async () => {
    const ok = await call(
      server,
      erin,
      'POST',
      `${R}/roles`,
      role('pod-reader', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]),
    );
    expect(ok.status).toBe(201);
    const more = await call(
      server,
      erin,
      'POST',
      `${R}/roles`,
      role('secret-getter', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]),
    );
    expect(more.status).toBe(403);
    expect(more.body['message']).toContain(
      'roles.rbac.authorization.k8s.io "secret-getter" is forbidden: user "erin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    const patched = await call(
      server,
      erin,
      'PATCH',
      `${R}/roles/pod-reader`,
      { rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(403);
    const bindOwn = await call(
      server,
      erin,
      'POST',
      `${R}/rolebindings`,
      binding('erin-pods', 'pod-reader', 'frank'),
    );
    expect(bindOwn.status).toBe(201);
    const bindMore = await call(
      server,
      erin,
      'POST',
      `${R}/rolebindings`,
      binding('frank-secrets', 'secret-reader', 'frank'),
    );
    expect(bindMore.status).toBe(403);
    expect(bindMore.body['message']).toContain('is attempting to grant RBAC permissions not currently held');
  });

  it('allows with the bind and escalate verbs', async () => {
    await call(
      server,
      admin,
      'POST',
      `${R}/roles`,
      role('binder', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles'],
          verbs: ['bind'],
          resourceNames: ['secret-reader'],
        },
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] },
      ]),
    );
    await call(server, admin, 'POST', `${R}/rolebindings`, binding('erin-binder', 'binder', 'erin'));
    await until(
      async () =>
        (
          await call(
            server,
            erin,
            'POST',
            `${R}/rolebindings`,
            binding('frank-secrets', 'secret-reader', 'frank'),
          )
        ).status === 201,
    );
    const escalated = await call(
      server,
      erin,
      'POST',
      `${R}/roles`,
      role('secret-getter', [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }]),
    );
    expect(escalated.status).toBe(201);
  });
});

describe('Node authorizer', () => {
  let kubelet: AdminTls;
  const pod = (name: string, node: string, secret: string, cm: string): object => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: node,
      serviceAccountName: 'default',
      containers: [
        {
          name: 'c',
          image: 'busybox',
          env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: cm, key: 'k' } } }],
        },
      ],
      volumes: [{ name: 's', secret: { secretName: secret } }],
    },
  });
  beforeAll(async () => {
    kubelet = await clientTls(server, issuer, 'system:node:n1', ['system:nodes']);
    for (const name of ['s-n1', 's-n2']) {
      await call(server, admin, 'POST', '/api/v1/namespaces/default/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name },
      });
    }
    await call(server, admin, 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm-n1' },
    });
    await call(server, admin, 'POST', '/api/v1/namespaces/default/pods', pod('p1', 'n1', 's-n1', 'cm-n1'));
    await call(server, admin, 'POST', '/api/v1/namespaces/default/pods', pod('p2', 'n2', 's-n2', 'cm-n2'));
    for (const n of ['n1', 'n2']) {
      await call(server, admin, 'POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: n },
      });
    }
  });

  it('reads only what pods bound to the node reference', async () => {
    await until(
      async () =>
        (await call(server, kubelet, 'GET', '/api/v1/namespaces/default/secrets/s-n1')).status === 200,
    );
    expect((await call(server, kubelet, 'GET', '/api/v1/namespaces/default/configmaps/cm-n1')).status).toBe(
      200,
    );
    const other = await call(server, kubelet, 'GET', '/api/v1/namespaces/default/secrets/s-n2');
    expect(other.status).toBe(403);
    expect(other.body['message']).toBe(
      `secrets "s-n2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`,
    );
    expect((await call(server, kubelet, 'GET', '/api/v1/namespaces/default/secrets')).status).toBe(403);
    expect((await call(server, kubelet, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
    const token = {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: ['x'] },
    };
    expect(
      (
        await call(
          server,
          kubelet,
          'POST',
          '/api/v1/namespaces/kube-system/serviceaccounts/default/token',
          token,
        )
      ).status,
    ).toBe(403);
  });

  it('writes only its own Node and Lease', async () => {
    const patch = { 'content-type': 'application/merge-patch+json' };
    expect(
      (await call(server, kubelet, 'PATCH', '/api/v1/nodes/n1', { metadata: { labels: { a: 'b' } } }, patch))
        .status,
    ).toBe(200);
    expect(
      (await call(server, kubelet, 'PATCH', '/api/v1/nodes/n2', { metadata: { labels: { a: 'b' } } }, patch))
        .status,
    ).toBe(403);
    const lease = (name: string): object => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'kube-node-lease' },
    });
    expect(
      (
        await call(
          server,
          kubelet,
          'POST',
          '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
          lease('n1'),
        )
      ).status,
    ).toBe(201);
    expect(
      (
        await call(
          server,
          kubelet,
          'PUT',
          '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n2',
          lease('n2'),
        )
      ).status,
    ).toBe(403);
    expect(
      (await call(server, kubelet, 'GET', '/apis/coordination.k8s.io/v1/namespaces/default/leases/n1'))
        .status,
    ).toBe(403);
  });
});
