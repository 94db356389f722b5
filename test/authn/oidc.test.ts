/**
 * OIDC ID tokens against a real local HTTPS issuer (discovery and JWKS served over TLS with a
 * CA made in the test, trusted through --oidc-ca-file): claims, prefixes, required claims,
 * audience, expiry, algorithms, and key rotation mid-test (a new kid makes the server refetch
 * the JWKS).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, SignJWT, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps } from './support.js';

type Key = Awaited<ReturnType<typeof generateKeyPair>>;

let dir: string;
let issuerServer: LocalHttps;
let server: TestServer;
let issuerUrl: string;
let jwks: JWK[] = [];
let jwksFetches = 0;
let key1: Key;
let key2: Key;
let ecKey: Key;

async function publicJwk(key: Key, kid: string, alg: string): Promise<JWK> {
  return { ...(await exportJWK(key.publicKey)), kid, alg, use: 'sig' };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authn-oidc-'));
  const ca = await makeCa('oidc-ca');
  const serving = await issue(ca, { commonName: 'issuer' }, 'server', { ipAddresses: ['127.0.0.1'] });
  key1 = await generateKeyPair('RS256');
  key2 = await generateKeyPair('RS256');
  ecKey = await generateKeyPair('ES256');
  jwks = [await publicJwk(key1, 'k1', 'RS256'), await publicJwk(ecKey, 'ec', 'ES256')];
  issuerServer = await startLocalHttps(serving, (req, _body, res) => {
    if (req.url === '/.well-known/openid-configuration') {
      sendJson(res, 200, {
        issuer: issuerUrl,
        jwks_uri: `${issuerUrl}/keys`,
        id_token_signing_alg_values_supported: ['RS256'],
      });
    } else if (req.url === '/keys') {
      jwksFetches++;
      sendJson(res, 200, { keys: jwks });
    } else {
      sendJson(res, 404, {});
    }
  });
  issuerUrl = issuerServer.url;
  const caFile = join(dir, 'oidc-ca.crt');
  await writeFile(caFile, ca.certPem);
  server = await startTestServer({
    args: [
      `--oidc-issuer-url=${issuerUrl}`,
      '--oidc-client-id=capstan',
      `--oidc-ca-file=${caFile}`,
      '--oidc-groups-claim=groups',
      '--oidc-groups-prefix=oidc:',
      '--oidc-required-claim=hd=example.com',
    ],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await issuerServer?.close();
  await rm(dir, { recursive: true, force: true });
});

async function sign(
  claims: JWTPayload,
  opts: { key?: Key; kid?: string; alg?: string; expiresIn?: string | number } = {},
): Promise<string> {
  return new SignJWT({ hd: 'example.com', ...claims })
    .setProtectedHeader({ alg: opts.alg ?? 'RS256', kid: opts.kid ?? 'k1' })
    .setIssuedAt()
    .setIssuer(claims.iss ?? issuerUrl)
    .setAudience((claims.aud as string | undefined) ?? 'capstan')
    .setExpirationTime(opts.expiresIn ?? '10m')
    .sign((opts.key ?? key1).privateKey);
}

async function whoami(
  token: string,
): Promise<{ status: number; user?: { username: string; groups: string[] } }> {
  const res = await adminFetch(
    `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
    { ca: adminTls(server.kubeconfigPath).ca },
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
    },
  );
  const body = JSON.parse(res.body) as { status?: { userInfo?: { username: string; groups: string[] } } };
  return {
    status: res.status,
    ...(body.status?.userInfo === undefined ? {} : { user: body.status.userInfo }),
  };
}

describe('OIDC', () => {
  it('authenticates a signed ID token: the sub prefixed with the issuer, groups prefixed', async () => {
    const res = await whoami(await sign({ sub: 'jane', groups: ['admins', 'dev'] }));
    expect(res.status).toBe(201);
    expect(res.user).toEqual({
      username: `${issuerUrl}#jane`,
      groups: ['oidc:admins', 'oidc:dev', 'system:authenticated'],
    });
    // A single string is a one-group list.
    expect((await whoami(await sign({ sub: 'joe', groups: 'ops' }))).user?.groups).toEqual([
      'oidc:ops',
      'system:authenticated',
    ]);
  });

  it('401 for a wrong audience, an expired token, a missing required claim, another issuer, a disallowed algorithm', async () => {
    const cases: Record<string, string> = {
      audience: await sign({ sub: 'jane', aud: 'someone-else' }),
      expired: await sign({ sub: 'jane' }, { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      required: await sign({ sub: 'jane', hd: 'evil.com' }),
      issuer: await sign({ sub: 'jane', iss: 'https://elsewhere.example' }),
      algorithm: await sign({ sub: 'jane' }, { key: ecKey, kid: 'ec', alg: 'ES256' }),
      tampered: (await sign({ sub: 'jane' })).replace(/\.[^.]+$/, '.AAAA'),
    };
    for (const [name, token] of Object.entries(cases)) {
      expect((await whoami(token)).status, name).toBe(401);
    }
  });

  it('follows key rotation: a new kid makes the server refetch the JWKS, at most once per interval', async () => {
    expect((await whoami(await sign({ sub: 'warm' }))).status).toBe(201);
    const before = jwksFetches;
    jwks = [await publicJwk(key2, 'k2', 'RS256')];
    const res = await whoami(await sign({ sub: 'rotated' }, { key: key2, kid: 'k2' }));
    expect(res.status).toBe(201);
    expect(res.user?.username).toBe(`${issuerUrl}#rotated`);
    expect(jwksFetches).toBe(before + 1);
    // The old key is gone from the set.
    expect((await whoami(await sign({ sub: 'old', n: 2 }))).status).toBe(401);
    // Another unknown kid right away does not refetch (rate limited), and fails.
    const key3 = await generateKeyPair('RS256');
    jwks = [await publicJwk(key3, 'k3', 'RS256')];
    expect((await whoami(await sign({ sub: 'third' }, { key: key3, kid: 'k3' }))).status).toBe(401);
    expect(jwksFetches).toBe(before + 1);
  });
});
