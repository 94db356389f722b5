/**
 * Bearer tokens end to end on one server: the static token file, bootstrap-token Secrets (read
 * through the protobuf storage encoding), a real HTTPS TokenReview webhook with its cache; the
 * TokenReview and SelfSubjectReview APIs; raw HTTPS, client-node with a bearer token, and
 * kubectl 1.27 and 1.33 with `--token` and an exec credential plugin.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuthenticationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminFetch,
  adminTls,
  kubectlPath,
  runKubectl,
  startTestServer,
  type AdminTls,
  type TestServer,
} from '../support/server.js';
import {
  issue,
  makeCa,
  sendJson,
  startLocalHttps,
  writeExecPlugin,
  writeUserKubeconfig,
  type LocalHttps,
} from './support.js';

const KUBE_401 = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'Unauthorized',
  reason: 'Unauthorized',
  code: 401,
};

let dir: string;
let server: TestServer;
let webhook: LocalHttps;
let admin: Required<AdminTls>;
const webhookReviews: { apiVersion: string; token: string }[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authn-tokens-'));
  const ca = await makeCa('webhook-ca');
  const serving = await issue(ca, { commonName: 'webhook' }, 'server', { ipAddresses: ['127.0.0.1'] });
  webhook = await startLocalHttps(serving, (_req, body, res) => {
    const review = JSON.parse(body) as { apiVersion: string; spec: { token: string } };
    webhookReviews.push({ apiVersion: review.apiVersion, token: review.spec.token });
    if (review.spec.token === 'webhook-good') {
      sendJson(res, 200, {
        apiVersion: review.apiVersion,
        kind: 'TokenReview',
        status: {
          authenticated: true,
          user: { username: 'wh-user', uid: 'wh-1', groups: ['wh-group'], extra: { scopes: ['a', 'b'] } },
        },
      });
    } else if (review.spec.token === 'webhook-revoked') {
      sendJson(res, 200, {
        apiVersion: review.apiVersion,
        kind: 'TokenReview',
        status: { authenticated: false, error: 'revoked' },
      });
    } else if (review.spec.token === 'webhook-500') {
      sendJson(res, 500, { message: 'boom' });
    } else {
      sendJson(res, 200, {
        apiVersion: review.apiVersion,
        kind: 'TokenReview',
        status: { authenticated: false },
      });
    }
  });
  const webhookConfig = join(dir, 'webhook.kubeconfig');
  await writeFile(
    webhookConfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: wh',
      '  cluster:',
      `    server: ${webhook.url}/authenticate`,
      `    certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}`,
      'users:',
      '- name: apiserver',
      '  user: {}',
      'contexts:',
      '- name: wh',
      '  context: {cluster: wh, user: apiserver}',
      'current-context: wh',
      '',
    ].join('\n'),
  );
  const tokenFile = join(dir, 'tokens.csv');
  await writeFile(tokenFile, 'alice-token,alice,uid-1,"dev,ops"\n\nbob-token,bob,uid-2\n');
  server = await startTestServer({
    args: [
      `--token-auth-file=${tokenFile}`,
      '--enable-bootstrap-token-auth',
      `--authentication-token-webhook-config-file=${webhookConfig}`,
      '--authentication-token-webhook-version=v1',
    ],
  });
  admin = adminTls(server.kubeconfigPath);
  const core = server.kubeConfig.makeApiClient(CoreV1Api);
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const secret = (id: string, secretPart: string, extra: Record<string, string>): Promise<unknown> =>
    core.createNamespacedSecret({
      namespace: 'kube-system',
      body: {
        metadata: { name: `bootstrap-token-${id}` },
        type: 'bootstrap.kubernetes.io/token',
        data: {
          'token-id': b64(id),
          'token-secret': b64(secretPart),
          'usage-bootstrap-authentication': b64('true'),
          ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, b64(v)])),
        },
      },
    });
  await secret('abcdef', '0123456789abcdef', {
    'auth-extra-groups': 'system:bootstrappers:worker',
    expiration: new Date(Date.now() + 3_600_000).toISOString(),
  });
  await secret('expird', '0123456789abcdef', { expiration: new Date(Date.now() - 1000).toISOString() });
  await secret('nouse0', '0123456789abcdef', { 'usage-bootstrap-authentication': 'false' });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await webhook?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Review {
  status: {
    userInfo?: { username: string; uid?: string; groups: string[]; extra?: Record<string, string[]> };
  };
}

async function whoami(headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const res = await adminFetch(
    `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
    { ca: admin.ca },
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    },
  );
  return { status: res.status, body: JSON.parse(res.body) as unknown };
}

async function userOf(token: string): Promise<Review['status']['userInfo']> {
  const res = await whoami({ authorization: `Bearer ${token}` });
  expect(res.status, token).toBe(201);
  return (res.body as Review).status.userInfo;
}

describe('static token file', () => {
  it('authenticates its users with uid and groups, plus system:authenticated', async () => {
    expect(await userOf('alice-token')).toEqual({
      username: 'alice',
      uid: 'uid-1',
      groups: ['dev', 'ops', 'system:authenticated'],
    });
    expect(await userOf('bob-token')).toEqual({
      username: 'bob',
      uid: 'uid-2',
      groups: ['system:authenticated'],
    });
  });

  it('answers 401 with kube-apiserver body for unknown tokens and malformed headers, never anonymous', async () => {
    for (const authorization of [
      'Bearer nope',
      'Bearer',
      'Bearer ',
      'Basic YWxpY2U6eA==',
      'bearer  a b',
      'alice-token',
    ]) {
      const res = await whoami({ authorization });
      expect(res.status, authorization).toBe(401);
      expect(res.body, authorization).toEqual(KUBE_401);
    }
    // The scheme is case-insensitive.
    expect((await whoami({ authorization: 'bEaReR alice-token' })).status).toBe(201);
  });

  it('accepts the token in the websocket protocol header', async () => {
    const b64 = Buffer.from('bob-token').toString('base64url');
    const res = await whoami({
      'sec-websocket-protocol': `base64url.bearer.authorization.k8s.io.${b64}, v4.channel.k8s.io`,
    });
    expect(res.status).toBe(201);
    expect((res.body as Review).status.userInfo?.username).toBe('bob');
  });

  it('a client certificate wins over a token, as in kube-apiserver (certificates come first)', async () => {
    const res = await adminFetch(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, admin, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer alice-token' },
      body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
    });
    expect(res.status).toBe(201);
    expect((JSON.parse(res.body) as Review).status.userInfo?.username).toBe('system:admin');
  });
});

describe('bootstrap tokens', () => {
  it('authenticates system:bootstrap:<id> in system:bootstrappers and the extra groups', async () => {
    expect(await userOf('abcdef.0123456789abcdef')).toEqual({
      username: 'system:bootstrap:abcdef',
      groups: ['system:bootstrappers', 'system:bootstrappers:worker', 'system:authenticated'],
    });
  });

  it('rejects a wrong secret, an expired token, a token not for authentication, and a missing Secret', async () => {
    for (const token of [
      'abcdef.0123456789abcdee',
      'expird.0123456789abcdef',
      'nouse0.0123456789abcdef',
      'zzzzzz.0123456789abcdef',
    ]) {
      expect((await whoami({ authorization: `Bearer ${token}` })).status, token).toBe(401);
    }
  });
});

describe('webhook token authentication', () => {
  it('asks the webhook with a v1 TokenReview, and caches the answer', async () => {
    const before = webhookReviews.length;
    expect(await userOf('webhook-good')).toEqual({
      username: 'wh-user',
      uid: 'wh-1',
      groups: ['wh-group', 'system:authenticated'],
      extra: { scopes: ['a', 'b'] },
    });
    expect(await userOf('webhook-good')).toMatchObject({ username: 'wh-user' });
    const calls = webhookReviews.slice(before).filter((r) => r.token === 'webhook-good');
    expect(calls).toEqual([{ apiVersion: 'authentication.k8s.io/v1', token: 'webhook-good' }]);
  });

  it('401 for tokens the webhook rejects or fails on, never a 5xx', async () => {
    for (const token of ['webhook-revoked', 'webhook-500', 'webhook-unknown']) {
      const res = await whoami({ authorization: `Bearer ${token}` });
      expect(res.status, token).toBe(401);
    }
  });
});

describe('TokenReview', () => {
  const review = (spec: unknown): Promise<{ status: number; body: string }> =>
    adminFetch(`${server.url}/apis/authentication.k8s.io/v1/tokenreviews`, admin, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec }),
    });

  it('answers 201 with the user of a valid token, and unauthenticated with the error otherwise', async () => {
    const ok = await review({ token: 'alice-token' });
    expect(ok.status).toBe(201);
    expect(JSON.parse(ok.body)).toMatchObject({
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1',
      status: {
        authenticated: true,
        user: { username: 'alice', uid: 'uid-1', groups: ['dev', 'ops', 'system:authenticated'] },
      },
    });
    const bad = await review({ token: 'webhook-revoked' });
    expect(bad.status).toBe(201);
    const badStatus = (JSON.parse(bad.body) as { status: Record<string, unknown> }).status;
    expect(badStatus['authenticated']).toBeUndefined();
    expect(badStatus['error']).toContain('revoked');
    // A token nothing recognises: kube-apiserver v1.33.13 answers `invalid bearer token`.
    const unknown = await review({ token: 'bogus' });
    expect((JSON.parse(unknown.body) as { status: unknown }).status).toEqual({
      user: {},
      error: 'invalid bearer token',
    });
  });

  it('audience-agnostic tokens are not good for other audiences', async () => {
    const res = await review({ token: 'alice-token', audiences: ['some-other-api'] });
    expect(
      (JSON.parse(res.body) as { status: Record<string, unknown> }).status['authenticated'],
    ).toBeUndefined();
  });

  it('400 without a token', async () => {
    const res = await review({});
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({
      reason: 'BadRequest',
      message: 'token is required for TokenReview in authentication',
    });
  });

  it('client-node creates reviews through AuthenticationV1Api', async () => {
    const api = server.kubeConfig.makeApiClient(AuthenticationV1Api);
    const r = await api.createTokenReview({ body: { spec: { token: 'bob-token' } } });
    expect(r.status?.authenticated).toBe(true);
    expect(r.status?.user?.username).toBe('bob');
  });
});

describe('clients', () => {
  it('client-node with a bearer token', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: server.url, caData: Buffer.from(admin.ca).toString('base64') }],
      users: [{ name: 'u', token: 'alice-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe('alice');
    const namespaces = await kc.makeApiClient(CoreV1Api).listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toContain('default');
  });

  for (const version of ['1.27', '1.33'] as const) {
    it(`kubectl ${version} with --token and with an exec credential plugin`, async () => {
      if (kubectlPath(version) === undefined) {
        if (process.env['CI'] === 'true') throw new Error(`kubectl ${version} is missing`);
        console.warn(`kubectl ${version} missing: test not run`);
        return;
      }
      const tokenConfig = join(dir, `token-${version}.kubeconfig`);
      await writeUserKubeconfig(tokenConfig, server.url, admin.ca, { token: 'bob-token' });
      const plugin = join(dir, `plugin-${version}.sh`);
      await writeExecPlugin(plugin, 'abcdef.0123456789abcdef');
      const execConfig = join(dir, `exec-${version}.kubeconfig`);
      await writeUserKubeconfig(execConfig, server.url, admin.ca, { execCommand: plugin });

      const listed = await runKubectl(
        version,
        ['--token', 'alice-token', 'get', 'namespaces', '-o', 'name'],
        tokenConfig,
      );
      expect(listed.stderr).toBe('');
      expect(listed.stdout).toContain('namespace/default');
      const denied = await runKubectl(version, ['--token', 'wrong', 'get', 'namespaces'], tokenConfig);
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toMatch(/Unauthorized|must be logged in/);
      const viaPlugin = await runKubectl(version, ['get', 'namespaces', '-o', 'name'], execConfig);
      expect(viaPlugin.stdout).toContain('namespace/default');
      if (version !== '1.27') {
        // kubectl 1.27 asks for SelfSubjectReview at v1beta1/v1alpha1 only; the server serves v1.
        const who = await runKubectl(
          version,
          ['--token', 'alice-token', 'auth', 'whoami', '-o', 'json'],
          tokenConfig,
        );
        expect(who.stderr).toBe('');
        expect(JSON.parse(who.stdout)).toMatchObject({
          status: { userInfo: { username: 'alice', groups: ['dev', 'ops', 'system:authenticated'] } },
        });
        const whoPlugin = await runKubectl(version, ['auth', 'whoami', '-o', 'json'], execConfig);
        expect(JSON.parse(whoPlugin.stdout)).toMatchObject({
          status: { userInfo: { username: 'system:bootstrap:abcdef' } },
        });
      }
    }, 60_000);
  }
});
