/**
 * `system:authenticated` is added once, around the whole authenticator chain (kube's
 * `AuthenticatedGroupAdder`): a property over every authenticator of one server (x509 client
 * certificates, the token file, bootstrap tokens, service-account legacy and bound tokens, OIDC,
 * the token webhook, the authenticating proxy). For random group sets, each authenticator's user
 * (as SelfSubjectReview shows it, and TokenReview for tokens) carries its own groups in order and
 * `system:authenticated` exactly once, whether or not the credential already named it; the
 * anonymous user never gets it.
 *
 * Group sets hold distinct names and never `system:unauthenticated` (kube leaves a user naming
 * that group as it is); OIDC groups pass through unprefixed, so a token may itself claim
 * `system:authenticated`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps, type TestCa } from './support.js';
import { admin, eventually, requestToken, tokenOf } from '../serviceaccount/support.js';
import { ANONYMOUS, userInfo, withAuthenticatedGroup } from '../../src/authn/user.js';

const GROUP_POOL = ['dev', 'ops', 'system:authenticated', 'system:masters', 'team:a', 'qa'] as const;
const AUTHENTICATED = 'system:authenticated';
/** How many group sets each authenticator is tried with. */
const RUNS = 12;

let dir: string;
let server: TestServer;
let webhook: LocalHttps;
let issuer: LocalHttps;
let issuerUrl: string;
let userCa: TestCa;
let proxyCert: { certPem: string; keyPem: string };
let oidcKey: Awaited<ReturnType<typeof generateKeyPair>>;
const tokenFileUsers: { token: string; groups: readonly string[] }[] = [];

/** Deterministic group sets (seeded), distinct names, in a random order. */
const groupSets: readonly (readonly string[])[] = fc.sample(
  fc.uniqueArray(fc.constantFrom(...GROUP_POOL), { maxLength: GROUP_POOL.length }),
  { numRuns: RUNS, seed: 28 },
);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authn-group-'));
  // Token webhook: a token `hook-<i>` is user hook-<i> with group set i.
  const hookCa = await makeCa('webhook-ca');
  const hookServing = await issue(hookCa, { commonName: 'hook' }, 'server', { ipAddresses: ['127.0.0.1'] });
  webhook = await startLocalHttps(hookServing, (_req, body, res) => {
    const review = JSON.parse(body) as { apiVersion: string; spec: { token: string } };
    const i = Number(/^hook-(\d+)$/.exec(review.spec.token)?.[1] ?? NaN);
    const groups = groupSets[i];
    sendJson(res, 200, {
      apiVersion: review.apiVersion,
      kind: 'TokenReview',
      status:
        groups === undefined
          ? { authenticated: false }
          : { authenticated: true, user: { username: `hook-${i}`, groups } },
    });
  });
  const hookConfig = join(dir, 'webhook.kubeconfig');
  await writeFile(
    hookConfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: hook',
      '  cluster:',
      `    server: ${webhook.url}/authenticate`,
      `    certificate-authority-data: ${Buffer.from(hookCa.certPem).toString('base64')}`,
      'users:',
      '- name: api',
      '  user: {}',
      'contexts:',
      '- name: x',
      '  context: {cluster: hook, user: api}',
      'current-context: x',
      '',
    ].join('\n'),
  );
  // OIDC issuer.
  const oidcCa = await makeCa('oidc-ca');
  const oidcServing = await issue(oidcCa, { commonName: 'issuer' }, 'server', { ipAddresses: ['127.0.0.1'] });
  oidcKey = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(oidcKey.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  issuer = await startLocalHttps(oidcServing, (req, _body, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      sendJson(res, 200, { issuer: issuerUrl, jwks_uri: `${issuerUrl}/keys` });
    } else if (req.url === '/keys') {
      sendJson(res, 200, { keys: [jwk] });
    } else {
      sendJson(res, 404, {});
    }
  });
  issuerUrl = issuer.url;
  await writeFile(join(dir, 'oidc-ca.crt'), oidcCa.certPem);
  // Client certificate and proxy CAs.
  userCa = await makeCa('user-ca');
  const proxyCa = await makeCa('proxy-ca');
  proxyCert = await issue(proxyCa, { commonName: 'front-proxy' }, 'client');
  await writeFile(join(dir, 'client-ca.crt'), userCa.certPem);
  await writeFile(join(dir, 'proxy-ca.crt'), proxyCa.certPem);
  // Token file: user file-<i> with group set i.
  const lines = groupSets.map((groups, i) => {
    const token = `file-token-${i}`;
    tokenFileUsers.push({ token, groups });
    return `${token},file-${i},uid-${i},"${groups.join(',')}"`;
  });
  await writeFile(join(dir, 'tokens.csv'), `${lines.join('\n')}\n`);
  server = await startTestServer({
    args: [
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--enable-bootstrap-token-auth',
      `--authentication-token-webhook-config-file=${hookConfig}`,
      '--authentication-token-webhook-version=v1',
      `--oidc-issuer-url=${issuerUrl}`,
      '--oidc-client-id=capstan',
      `--oidc-ca-file=${join(dir, 'oidc-ca.crt')}`,
      '--oidc-groups-claim=groups',
      `--client-ca-file=${join(dir, 'client-ca.crt')}`,
      `--requestheader-client-ca-file=${join(dir, 'proxy-ca.crt')}`,
      '--requestheader-allowed-names=front-proxy',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
    ],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await webhook?.close();
  await issuer?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Reviewed {
  readonly username: string;
  readonly groups: readonly string[];
}

/** SelfSubjectReview with `headers` over a connection with `cert` (if any). */
async function whoami(
  headers: Record<string, string>,
  cert?: { certPem: string; keyPem: string },
  http2 = true,
): Promise<Reviewed> {
  const { ca } = adminTls(server.kubeconfigPath);
  const res = await adminFetch(
    `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
    cert === undefined ? { ca } : { ca, cert: cert.certPem, key: cert.keyPem },
    {
      method: 'POST',
      http2,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    },
  );
  expect(res.status, res.body).toBe(201);
  return (JSON.parse(res.body) as { status: { userInfo: Reviewed } }).status.userInfo;
}

/** TokenReview of `token` by the admin. */
async function tokenReview(token: string): Promise<Reviewed> {
  const r = await admin(server, '/apis/authentication.k8s.io/v1/tokenreviews', {
    method: 'POST',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
  });
  expect(r.status).toBe(201);
  const status = r.json['status'] as { authenticated?: boolean; user: Reviewed };
  expect(status.authenticated, JSON.stringify(status)).toBe(true);
  return status.user;
}

/** The property: the user's own groups, in order, then the group once (unless it named it). */
function expectGroupOnce(user: Reviewed, own: readonly string[]): void {
  expect(
    user.groups.filter((g) => g === AUTHENTICATED),
    JSON.stringify(user),
  ).toHaveLength(1);
  const expected = own.includes(AUTHENTICATED) ? own : [...own, AUTHENTICATED];
  expect(user.groups).toEqual(expected);
}

/** Both views of a token's user. */
async function checkToken(token: string, own: readonly string[]): Promise<void> {
  expectGroupOnce(await whoami({ authorization: `Bearer ${token}` }), own);
  expectGroupOnce(await tokenReview(token), own);
}

describe('system:authenticated around the whole chain', () => {
  it('x509 client certificates', async () => {
    for (const [i, groups] of groupSets.entries()) {
      const cert = await issue(userCa, { commonName: `cert-${i}`, organizations: groups }, 'client');
      const user = await whoami({}, cert);
      expect(user.username).toBe(`cert-${i}`);
      expectGroupOnce(user, groups);
    }
  });

  it('the authenticating proxy', async () => {
    for (const [i, groups] of groupSets.entries()) {
      // One X-Remote-Group header line per group (kube reads every value of the header).
      const headers = { 'X-Remote-User': `proxied-${i}`, 'X-Remote-Group': [...groups] };
      const user = await whoami(headers as unknown as Record<string, string>, proxyCert, false);
      expect(user.username).toBe(`proxied-${i}`);
      expectGroupOnce(user, groups);
    }
  });

  it('the token file', async () => {
    for (const { token, groups } of tokenFileUsers) await checkToken(token, groups);
  });

  it('the token webhook', async () => {
    for (const [i, groups] of groupSets.entries()) await checkToken(`hook-${i}`, groups);
  });

  it('OIDC ID tokens', async () => {
    for (const groups of groupSets) {
      const token = await new SignJWT({ groups: [...groups] })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuedAt()
        .setIssuer(issuerUrl)
        .setSubject('jane')
        .setAudience('capstan')
        .setExpirationTime('10m')
        .sign(oidcKey.privateKey);
      await checkToken(token, groups);
    }
  });

  it('bootstrap tokens', async () => {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const created = await admin(server, '/api/v1/namespaces/kube-system/secrets', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bootstrap-token-abcdef' },
        type: 'bootstrap.kubernetes.io/token',
        data: {
          'token-id': b64('abcdef'),
          'token-secret': b64('0123456789abcdef'),
          'usage-bootstrap-authentication': b64('true'),
          'auth-extra-groups': b64('system:bootstrappers:worker'),
        },
      },
    });
    expect(created.status).toBe(201);
    await checkToken('abcdef.0123456789abcdef', ['system:bootstrappers', 'system:bootstrappers:worker']);
  });

  it('service-account tokens, bound and legacy', async () => {
    const ns = await admin(server, '/api/v1/namespaces', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } },
    });
    expect(ns.status).toBe(201);
    const own = ['system:serviceaccounts', 'system:serviceaccounts:apps'];
    await eventually(async () =>
      (await admin(server, '/api/v1/namespaces/apps/serviceaccounts/default')).status === 200
        ? true
        : undefined,
    );
    await checkToken(tokenOf(await requestToken(server, 'apps', 'default')), own);
    const secret = await admin(server, '/api/v1/namespaces/apps/secrets', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'legacy', annotations: { 'kubernetes.io/service-account.name': 'default' } },
        type: 'kubernetes.io/service-account-token',
      },
    });
    expect(secret.status).toBe(201);
    const legacy = await eventually(async () => {
      const s = await admin(server, '/api/v1/namespaces/apps/secrets/legacy');
      const token = (s.json['data'] as Record<string, string> | undefined)?.['token'];
      return token === undefined ? undefined : Buffer.from(token, 'base64').toString();
    });
    await checkToken(legacy, own);
  });

  it('never the anonymous user, and never twice', () => {
    expect(withAuthenticatedGroup(ANONYMOUS)).toBe(ANONYMOUS);
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((n) => n !== ANONYMOUS.name),
        fc.uniqueArray(fc.constantFrom(...GROUP_POOL, 'system:unauthenticated')),
        (name, groups) => {
          const out = withAuthenticatedGroup(userInfo({ name, groups })).groups;
          if (groups.includes('system:unauthenticated')) expect(out).toEqual(groups);
          else expectGroupOnce({ username: name, groups: out }, groups);
        },
      ),
    );
  });
});
