/**
 * The ABAC authorizer (a JSON-lines policy file) and the Webhook authorizer against a real local
 * HTTPS service (its own CA, a bearer token checked): SubjectAccessReviews sent, allow / deny /
 * no opinion honoured, answers cached for the TTL, and a failing webhook turning an undecided
 * request into kube's 500.
 */
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServerArgs } from '../../src/server/options.js';
import { startServer } from '../../src/server/server.js';
import { startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { clientTls, clusterIssuer } from '../support/users.js';
import { call, startWebhook, type LocalWebhook } from './support.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authz-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ABAC', () => {
  let server: TestServer;
  let alice: AdminTls;
  let olga: AdminTls;
  beforeAll(async () => {
    const policy = join(dir, 'policy.jsonl');
    const line = (spec: object): string =>
      JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });
    await writeFile(
      policy,
      [
        line({ user: 'alice', namespace: 'team', resource: '*', apiGroup: '*', readonly: true }),
        line({ group: 'ops', namespace: '*', resource: '*', apiGroup: '*' }),
        line({ user: '*', nonResourcePath: '/version', readonly: true }),
        '',
      ].join('\n'),
    );
    server = await startTestServer({
      args: ['--authorization-mode=ABAC', `--authorization-policy-file=${policy}`],
    });
    const issuer = await clusterIssuer(server);
    alice = await clientTls(server, issuer, 'alice');
    olga = await clientTls(server, issuer, 'olga', ['ops']);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('allows what a policy line matches and nothing else', async () => {
    expect((await call(server, alice, 'GET', '/api/v1/namespaces/team/pods')).status).toBe(200);
    const write = await call(server, alice, 'POST', '/api/v1/namespaces/team/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'x' },
    });
    expect(write.status).toBe(403);
    expect(write.body['message']).toBe(
      'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "team": No policy matched.',
    );
    expect((await call(server, alice, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(403);
    expect((await call(server, alice, 'GET', '/version')).status).toBe(200);
    expect((await call(server, alice, 'GET', '/healthz')).status).toBe(403);
    expect(
      (
        await call(server, olga, 'POST', '/api/v1/namespaces', {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: 'team' },
        })
      ).status,
    ).toBe(201);
  });

  it("lists a user's policies in a SelfSubjectRulesReview, completely (kube's ABAC rule resolver)", async () => {
    const rules = await call(server, olga, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'team' },
    });
    expect(rules.status).toBe(201);
    const status = rules.body['status'] as Record<string, unknown>;
    expect(status['incomplete']).toBe(false);
    expect(status['resourceRules']).toEqual([
      expect.objectContaining({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }),
    ]);
    // As in kube, a line names the namespaces it lists in: the path line has none, so not in `team`.
    expect(status['nonResourceRules']).toEqual([]);
  });

  it('refuses to start on a malformed policy file', async () => {
    const bad = join(dir, 'bad.jsonl');
    await writeFile(
      bad,
      '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{}}\n{not json\n',
    );
    const { options } = parseServerArgs([
      '--secure-port=0',
      '--bind-address=127.0.0.1',
      `--data-dir=${join(dir, 'bad-server')}`,
      '--authorization-mode=ABAC',
      `--authorization-policy-file=${bad}`,
    ]) as { options: import('../../src/server/options.js').ServerOptions };
    const { openMemoryStore } = await import('../../storage/mvcc/index.js');
    await expect(startServer(options, { store: await openMemoryStore() })).rejects.toThrow(/bad\.jsonl:2/);
  });
});

describe('Webhook', () => {
  let server: TestServer;
  let hook: LocalWebhook;
  let wanda: AdminTls;
  let dan: AdminTls;
  let nobody: AdminTls;

  beforeAll(async () => {
    hook = await startWebhook(dir, 'webhook', (user) =>
      user === 'wanda'
        ? { allowed: true }
        : user === 'dan'
          ? { allowed: false, denied: true, reason: 'dan is banned' }
          : { allowed: false },
    );
    const config = hook.kubeconfigPath;
    server = await startTestServer({
      args: [
        '--authorization-mode=Webhook',
        `--authorization-webhook-config-file=${config}`,
        '--authorization-webhook-version=v1',
        '--authorization-webhook-cache-unauthorized-ttl=0s',
      ],
    });
    const issuer = await clusterIssuer(server);
    wanda = await clientTls(server, issuer, 'wanda');
    dan = await clientTls(server, issuer, 'dan');
    nobody = await clientTls(server, issuer, 'nobody');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await hook?.close();
  });

  it('asks the webhook with a SubjectAccessReview and follows its answer', async () => {
    expect((await call(server, wanda, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
    const review = hook.reviews.at(-1) as { apiVersion: string; spec: Record<string, unknown> };
    expect(review.apiVersion).toBe('authorization.k8s.io/v1');
    expect(review.spec).toMatchObject({
      user: 'wanda',
      groups: ['system:authenticated'],
      resourceAttributes: { namespace: 'default', verb: 'list', version: 'v1', resource: 'pods' },
    });
    const denied = await call(server, dan, 'GET', '/api/v1/namespaces/default/pods');
    expect(denied.status).toBe(403);
    expect(denied.body['message']).toBe(
      'pods is forbidden: User "dan" cannot list resource "pods" in API group "" in the namespace "default": dan is banned',
    );
    expect((await call(server, nobody, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(403);
  });

  it('answers a SelfSubjectRulesReview as incomplete, with kube’s reason', async () => {
    const rules = await call(server, wanda, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'default' },
    });
    expect(rules.status).toBe(201);
    expect(rules.body['status']).toMatchObject({
      incomplete: true,
      evaluationError: 'webhook authorizer does not support user rule resolution',
    });
  });

  it('caches allowed answers and turns a failing webhook into 500 for undecided requests', async () => {
    const before = hook.reviews.length;
    expect((await call(server, wanda, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
    expect(hook.reviews.length).toBe(before);
    hook.failing = true;
    try {
      expect((await call(server, wanda, 'GET', '/api/v1/namespaces/default/pods')).status).toBe(200);
      const r = await call(server, nobody, 'GET', '/api/v1/namespaces/default/secrets');
      expect(r.status).toBe(500);
      expect(r.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    } finally {
      hook.failing = false;
    }
  });
});
