/**
 * Service-account tokens end to end on one server (memory store): TokenRequest through raw HTTPS
 * and stock kubectl 1.27/1.33 (`create token`), the tokens used by kubectl (`--token` kubeconfig),
 * client-node and raw requests; the JWKS the server publishes verifying a token with jose on its
 * own; revocation (service account deleted, bound pod deleted); tokens refused with 401: expired,
 * wrong audience, unknown key, `alg: none`, tampered.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createLocalJWKSet, decodeJwt, importPKCS8, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyIdOf, signingKeyOf } from '../../src/serviceaccount/keys.js';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import {
  adminFetch,
  adminTls,
  kubectlPath,
  runKubectl,
  startTestServer,
  type TestServer,
} from '../support/server.js';
import { admin, eventually, requestToken, tokenFetch, tokenKubeconfig, tokenOf } from './support.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
let server: TestServer;

async function createSa(ns: string, name: string): Promise<void> {
  const r = await admin(server, `/api/v1/namespaces/${ns}/serviceaccounts`, {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  expect(r.status).toBe(201);
}

beforeAll(async () => {
  server = await startTestServer({ args: ['--anonymous-auth=false'] });
  const ns = await admin(server, '/api/v1/namespaces', {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } },
  });
  expect(ns.status).toBe(201);
  await createSa('team', 'robot');
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('TokenRequest', () => {
  it("answers 201 with a bound token whose claims are kube's", async () => {
    const before = Math.floor(Date.now() / 1000);
    const answer = await requestToken(server, 'team', 'robot');
    expect(answer.status).toBe(201);
    expect(answer.json['kind']).toBe('TokenRequest');
    expect(answer.json['apiVersion']).toBe('authentication.k8s.io/v1');
    const spec = answer.json['spec'] as Record<string, unknown>;
    expect(spec['audiences']).toEqual([ISSUER]);
    expect(spec['expirationSeconds']).toBe(3600);
    const claims = decodeJwt(tokenOf(answer));
    expect(claims.iss).toBe(ISSUER);
    expect(claims.sub).toBe('system:serviceaccount:team:robot');
    expect(claims.aud).toEqual([ISSUER]);
    expect(typeof claims.jti).toBe('string');
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims.iat).toBeGreaterThanOrEqual(before);
    const k8s = claims['kubernetes.io'] as Record<string, unknown>;
    expect(k8s['namespace']).toBe('team');
    expect((k8s['serviceaccount'] as { name: string }).name).toBe('robot');
    const exp = Date.parse((answer.json['status'] as { expirationTimestamp: string }).expirationTimestamp);
    expect(Math.abs(exp / 1000 - claims.exp!)).toBeLessThanOrEqual(1);
  });

  it("refuses kube's invalid requests with kube's messages", async () => {
    const short = await requestToken(server, 'team', 'robot', { expirationSeconds: 100 });
    expect(short.status).toBe(422);
    expect(short.json['message']).toBe(
      'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 100: may not specify a duration less than 10 minutes',
    );
    const missing = await requestToken(server, 'team', 'nobody');
    expect(missing.status).toBe(404);
    expect(missing.json['message']).toBe('serviceaccounts "nobody" not found');
    const badKind = await requestToken(server, 'team', 'robot', {
      boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' },
    });
    expect(badKind.status).toBe(400);
    expect(badKind.json['message']).toBe('cannot bind token to object of type /v1, Kind=ConfigMap');
    const noPod = await requestToken(server, 'team', 'robot', {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'ghost' },
    });
    expect(noPod.status).toBe(404);
  });

  it("a TokenReview for the token's own audience authenticates it; for another it does not", async () => {
    const answer = await requestToken(server, 'team', 'robot', { audiences: ['vault'] });
    expect(answer.status).toBe(201);
    const review = async (audiences: string[]): Promise<Record<string, unknown>> => {
      const r = await admin(server, '/apis/authentication.k8s.io/v1/tokenreviews', {
        method: 'POST',
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          spec: { token: tokenOf(answer), audiences },
        },
      });
      expect(r.status).toBe(201);
      return r.json['status'] as Record<string, unknown>;
    };
    const vault = await review(['vault', 'other']);
    expect(vault['authenticated']).toBe(true);
    expect(vault['audiences']).toEqual(['vault']);
    expect((vault['user'] as { username: string }).username).toBe('system:serviceaccount:team:robot');
    const other = await review(['other']);
    expect(other['authenticated']).toBeUndefined();
    expect(other['error']).toMatch(/invalid for the target audiences/);
    // The server's own audience (an empty spec.audiences) is not the token's either.
    expect((await review([]))['authenticated']).toBeUndefined();
  });

  it('is listed in discovery as serviceaccounts/token (TokenRequest, create)', async () => {
    const r = await admin(server, '/api/v1');
    const resources = r.json['resources'] as {
      name: string;
      kind: string;
      group?: string;
      verbs: string[];
    }[];
    const token = resources.find((x) => x.name === 'serviceaccounts/token');
    expect(token).toMatchObject({
      kind: 'TokenRequest',
      group: 'authentication.k8s.io',
      version: 'v1',
      verbs: ['create'],
    });
  });
});

describe('using tokens', () => {
  it('authenticates raw requests as the service account', async () => {
    const token = tokenOf(await requestToken(server, 'team', 'robot'));
    const ok = await tokenFetch(server, '/api/v1/namespaces/team/configmaps', token);
    expect(ok.status).toBe(200);
    const noToken = await adminFetch(`${server.url}/api/v1/namespaces`, {
      ca: adminTls(server.kubeconfigPath).ca,
    });
    expect(noToken.status).toBe(401);
  });

  it('works with client-node', async () => {
    const token = tokenOf(await requestToken(server, 'team', 'robot'));
    const kc = new KubeConfig();
    kc.loadFromFile(await tokenKubeconfig(server, token, 'client-node'));
    const list = await kc.makeApiClient(CoreV1Api).listNamespacedServiceAccount({ namespace: 'team' });
    expect(list.items.map((s) => s.metadata?.name)).toContain('robot');
  });

  for (const version of ['1.27', '1.33'] as const) {
    it(`kubectl ${version}: create token, then use it`, async () => {
      if (kubectlPath(version) === undefined) {
        if (process.env['CI'] === 'true') throw new Error(`kubectl ${version} is missing`);
        return;
      }
      const created = await runKubectl(
        version,
        ['create', 'token', 'robot', '-n', 'team', '--duration=20m'],
        server.kubeconfigPath,
      );
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const token = created.stdout.trim();
      const claims = decodeJwt(token);
      expect(claims.exp! - claims.iat!).toBe(1200);
      const kubeconfig = await tokenKubeconfig(server, token, `kubectl-${version}`);
      const got = await runKubectl(
        version,
        ['get', 'serviceaccount', 'robot', '-n', 'team', '-o', 'name'],
        kubeconfig,
      );
      expect(got.stderr).toBe('');
      expect(got.stdout.trim()).toBe('serviceaccount/robot');
      const who = await runKubectl(
        version,
        ['get', 'sa', '-n', 'team', '--token=not-a-token'],
        server.kubeconfigPath,
      );
      // The admin certificate wins over a token (kube's authenticator order): still allowed.
      expect(who.code).toBe(0);
    }, 60_000);
  }
});

describe('issuer discovery', () => {
  it("serves kube's OpenID documents, and its JWKS verifies tokens with jose", async () => {
    const token = tokenOf(await requestToken(server, 'team', 'robot'));
    const tls = adminTls(server.kubeconfigPath);
    const config = await adminFetch(`${server.url}/.well-known/openid-configuration`, tls);
    expect(config.status).toBe(200);
    expect(config.headers['content-type']).toMatch(/^application\/json/);
    const doc = JSON.parse(config.body) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: ISSUER,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
    });
    expect(doc['jwks_uri']).toMatch(/^https:\/\/.*\/openid\/v1\/jwks$/);
    const jwks = await adminFetch(`${server.url}/openid/v1/jwks`, tls);
    expect(jwks.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    const set = createLocalJWKSet(JSON.parse(jwks.body) as Parameters<typeof createLocalJWKSet>[0]);
    const verified = await jwtVerify(token, set, { issuer: ISSUER, audience: ISSUER });
    expect(verified.payload.sub).toBe('system:serviceaccount:team:robot');
  });
});

describe('revocation and refusal', () => {
  it("a deleted service account's tokens are refused (lookup)", async () => {
    await createSa('team', 'doomed');
    const token = tokenOf(await requestToken(server, 'team', 'doomed'));
    expect((await tokenFetch(server, '/api/v1/namespaces/team/pods', token)).status).toBe(200);
    expect(
      (await admin(server, '/api/v1/namespaces/team/serviceaccounts/doomed', { method: 'DELETE' })).status,
    ).toBe(200);
    await eventually(async () =>
      (await tokenFetch(server, '/api/v1/namespaces/team/pods', token)).status === 401 ? true : undefined,
    );
    // A new account with the same name has another uid: the old token stays refused.
    await createSa('team', 'doomed');
    expect((await tokenFetch(server, '/api/v1/namespaces/team/pods', token)).status).toBe(401);
  });

  it('a token bound to a pod dies with the pod', async () => {
    const pod = await admin(server, '/api/v1/namespaces/team/pods', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'worker' },
        spec: { serviceAccountName: 'robot', containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    expect(pod.status).toBe(201);
    const uid = (pod.json['metadata'] as { uid: string }).uid;
    const wrongUid = await requestToken(server, 'team', 'robot', {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'worker', uid: 'not-the-uid' },
    });
    expect(wrongUid.status).toBe(409);
    const answer = await requestToken(server, 'team', 'robot', {
      boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'worker', uid },
    });
    expect(answer.status).toBe(201);
    const token = tokenOf(answer);
    const k8s = decodeJwt(token)['kubernetes.io'] as { pod: { name: string; uid: string } };
    expect(k8s.pod).toEqual({ name: 'worker', uid });
    expect((await tokenFetch(server, '/api/v1/namespaces/team/pods', token)).status).toBe(200);
    const del = await admin(server, '/api/v1/namespaces/team/pods/worker?gracePeriodSeconds=0', {
      method: 'DELETE',
    });
    expect(del.status).toBe(200);
    await eventually(async () =>
      (await tokenFetch(server, '/api/v1/namespaces/team/pods', token)).status === 401 ? true : undefined,
    );
  });

  it("tokens bound to a Secret or a Node die with it; pod-bound tokens name the pod's node", async () => {
    const secret = await admin(server, '/api/v1/namespaces/team/secrets', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'anchor' }, stringData: { a: 'b' } },
    });
    expect(secret.status).toBe(201);
    const node = await admin(server, '/api/v1/nodes', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } },
    });
    expect(node.status).toBe(201);
    const nodeUid = (node.json['metadata'] as { uid: string }).uid;
    const bySecret = tokenOf(
      await requestToken(server, 'team', 'robot', {
        boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'anchor' },
      }),
    );
    const byNode = tokenOf(
      await requestToken(server, 'team', 'robot', {
        boundObjectRef: { kind: 'Node', apiVersion: 'v1', name: 'n1' },
      }),
    );
    expect((decodeJwt(byNode)['kubernetes.io'] as { node: unknown }).node).toEqual({
      name: 'n1',
      uid: nodeUid,
    });
    const pod = await admin(server, '/api/v1/namespaces/team/pods', {
      method: 'POST',
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'placed' },
        spec: { serviceAccountName: 'robot', nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    expect(pod.status).toBe(201);
    const byPod = tokenOf(
      await requestToken(server, 'team', 'robot', {
        boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'placed' },
      }),
    );
    expect((decodeJwt(byPod)['kubernetes.io'] as { node: unknown }).node).toEqual({
      name: 'n1',
      uid: nodeUid,
    });
    for (const t of [bySecret, byNode, byPod]) {
      expect((await tokenFetch(server, '/api/v1/namespaces/team/pods', t)).status).toBe(200);
    }
    expect((await admin(server, '/api/v1/namespaces/team/secrets/anchor', { method: 'DELETE' })).status).toBe(
      200,
    );
    expect((await admin(server, '/api/v1/nodes/n1', { method: 'DELETE' })).status).toBe(200);
    for (const t of [bySecret, byNode]) {
      await eventually(async () =>
        (await tokenFetch(server, '/api/v1/namespaces/team/pods', t)).status === 401 ? true : undefined,
      );
    }
    // A pod-bound token lives with its pod, not with the node the pod ran on.
    expect((await tokenFetch(server, '/api/v1/namespaces/team/pods', byPod)).status).toBe(200);
  });

  it('refuses expired, wrong-audience, unknown-key, alg none and tampered tokens with 401', async () => {
    const pem = await readFile(join(server.certDir, 'sa.key'), 'utf8');
    const key = await importPKCS8(pem, 'ES256');
    const kid = signingKeyOf(createPrivateKey(pem)).kid;
    const sa = await admin(server, '/api/v1/namespaces/team/serviceaccounts/robot');
    const uid = (sa.json['metadata'] as { uid: string }).uid;
    const now = Math.floor(Date.now() / 1000);
    const claims = (over: Record<string, unknown>): Record<string, unknown> => ({
      iss: ISSUER,
      sub: 'system:serviceaccount:team:robot',
      aud: [ISSUER],
      iat: now,
      nbf: now,
      exp: now + 600,
      'kubernetes.io': { namespace: 'team', serviceaccount: { name: 'robot', uid } },
      ...over,
    });
    const sign = (
      c: Record<string, unknown>,
      k: Parameters<SignJWT['sign']>[0] = key,
      id = kid,
    ): Promise<string> => new SignJWT(c).setProtectedHeader({ alg: 'ES256', kid: id }).sign(k);
    // Control: a well-formed token made the same way is accepted.
    expect((await tokenFetch(server, '/api/v1/namespaces', await sign(claims({})))).status).toBe(200);
    const expired = await sign(claims({ iat: now - 7200, nbf: now - 7200, exp: now - 3600 }));
    const audience = await sign(claims({ aud: ['vault'] }));
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const unknownKey = await sign(claims({}), other.privateKey, keyIdOf(other.publicKey));
    const b64 = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims({}))}.`;
    const good = await sign(claims({}));
    const [h, , s] = good.split('.');
    const tampered = `${h}.${b64(claims({ sub: 'system:serviceaccount:team:admin' }))}.${s}`;
    for (const token of [expired, audience, unknownKey, none, tampered]) {
      const r = await tokenFetch(server, '/api/v1/namespaces', token);
      expect(r.status).toBe(401);
      expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    }
  });
});
