/**
 * The service-account flags as envtest and kubeadm pass them: explicit RSA key files
 * (`--service-account-key-file` public, `--service-account-signing-key-file` private), several
 * issuers (the first issues, all are accepted), `--api-audiences`, a maximum token lifetime and
 * a `jwks_uri` override; and the values kube-apiserver refuses at start.
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlagError } from '../../src/flags/flags.js';
import { parseServerArgs } from '../../src/server/options.js';
import { keyIdOf } from '../../src/serviceaccount/keys.js';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';
import { admin, requestToken, tokenFetch, tokenOf } from './support.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
let server: TestServer;

beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-sa-keys-'));
  const keyFile = join(dir, 'sa.key');
  const pubFile = join(dir, 'sa.pub');
  await writeFile(keyFile, privateKey.export({ format: 'pem', type: 'pkcs1' }));
  await writeFile(pubFile, publicKey.export({ format: 'pem', type: 'spki' }));
  server = await startTestServer({
    dataDir: dir,
    args: [
      '--anonymous-auth=false',
      `--service-account-key-file=${pubFile}`,
      `--service-account-signing-key-file=${keyFile}`,
      '--service-account-issuer=https://issuer.example',
      '--service-account-issuer=https://old.example',
      '--api-audiences=api,other',
      '--service-account-max-token-expiration=2h',
      '--service-account-jwks-uri=https://jwks.example/keys',
    ],
  });
  const sa = await admin(server, '/api/v1/namespaces/default/serviceaccounts', {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ci' } },
  });
  expect(sa.status).toBe(201);
}, 60_000);

afterAll(async () => {
  await server?.close();
  if (server !== undefined) await rm(server.dataDir, { recursive: true, force: true });
});

describe('explicit service-account flags', () => {
  it('sign with the given RSA key and first issuer, for the API audiences, shortened to the maximum', async () => {
    expect(existsSync(join(server.certDir, 'sa.key'))).toBe(false);
    const answer = await requestToken(server, 'default', 'ci', { expirationSeconds: 10800 });
    expect(answer.status).toBe(201);
    expect((answer.json['spec'] as { expirationSeconds: number }).expirationSeconds).toBe(7200);
    const token = tokenOf(answer);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'RS256', kid: keyIdOf(publicKey) });
    const claims = decodeJwt(token);
    expect(claims.iss).toBe('https://issuer.example');
    expect(claims.aud).toEqual(['api', 'other']);
    expect(claims.exp! - claims.iat!).toBe(7200);
    expect((await tokenFetch(server, '/api/v1/namespaces', token)).status).toBe(200);
  });

  it('accept every issuer and any of the API audiences, and nothing else', async () => {
    const uid = (
      (await admin(server, '/api/v1/namespaces/default/serviceaccounts/ci')).json['metadata'] as {
        uid: string;
      }
    ).uid;
    const now = Math.floor(Date.now() / 1000);
    const make = (iss: string, aud: string[]): Promise<string> =>
      new SignJWT({
        iss,
        aud,
        sub: 'system:serviceaccount:default:ci',
        iat: now,
        nbf: now,
        exp: now + 600,
        'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'ci', uid } },
      })
        .setProtectedHeader({ alg: 'RS256', kid: keyIdOf(publicKey) })
        .sign(createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' })));
    expect(
      (await tokenFetch(server, '/api/v1/namespaces', await make('https://old.example', ['other']))).status,
    ).toBe(200);
    expect(
      (await tokenFetch(server, '/api/v1/namespaces', await make('https://unknown.example', ['api']))).status,
    ).toBe(401);
    expect(
      (await tokenFetch(server, '/api/v1/namespaces', await make('https://issuer.example', ['vault'])))
        .status,
    ).toBe(401);
  });

  it('publish the jwks_uri override and the RSA key', async () => {
    const tls = adminTls(server.kubeconfigPath);
    const config = JSON.parse(
      (await adminFetch(`${server.url}/.well-known/openid-configuration`, tls)).body,
    ) as Record<string, unknown>;
    expect(config).toMatchObject({
      issuer: 'https://issuer.example',
      jwks_uri: 'https://jwks.example/keys',
      id_token_signing_alg_values_supported: ['RS256'],
    });
    const jwks = JSON.parse((await adminFetch(`${server.url}/openid/v1/jwks`, tls)).body) as {
      keys: Record<string, unknown>[];
    };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ use: 'sig', kty: 'RSA', alg: 'RS256', kid: keyIdOf(publicKey) });
  });
});

describe('refused flag values', () => {
  const bad = (args: string[]): unknown => {
    try {
      parseServerArgs(args);
    } catch (err) {
      return err;
    }
    return undefined;
  };
  it("are flag errors with kube's wording", () => {
    const dup = bad(['--service-account-issuer=https://a', '--service-account-issuer=https://a']);
    expect(dup).toBeInstanceOf(FlagError);
    expect((dup as Error).message).toBe('service-account-issuer "https://a" specified more than once');
    const jwks = bad(['--service-account-jwks-uri=http://insecure/keys']);
    expect(jwks).toBeInstanceOf(FlagError);
    const max = bad(['--service-account-max-token-expiration=30m']);
    expect((max as Error).message).toBe(
      'the service-account-max-token-expiration must be between 1 hour and 2^32 seconds',
    );
  });
});
