/**
 * The bootstrap signer, a client of a bare RBAC server acting as its own service account
 * (`kube-system/bootstrap-signer`, kube's bootstrap roles): `cluster-info` in kube-public gets a
 * `jws-kubeconfig-<id>` signature for every bootstrap token allowed to sign, checked as kubeadm's
 * join checks it; signatures follow the kubeconfig and the tokens.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap, Secret } from '../../src/api/types/core-v1.js';
import { CONFIG_MAPS, SECRETS, type ResourceClient } from '../../src/client/index.js';
import { bootstrapSignerController, signingToken } from '../../src/controllers/bootstrap-signer/index.js';
import {
  computeDetachedSignature,
  detachedSignatureIsValid,
} from '../../src/controllers/bootstrap-signer/jws.js';
import { rfc3339, startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let secrets: ResourceClient<Secret>;
let configMaps: ResourceClient<ConfigMap>;
const b64 = (s: string): string => Buffer.from(s).toString('base64');
const KUBECONFIG =
  'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://10.0.0.1:6443\n  name: ""\n';

beforeAll(async () => {
  env = await startInfraEnv(
    [bootstrapSignerController],
    ['--controllers=bootstrapsigner', '--use-service-account-credentials'],
    ['--controllers=', '--authorization-mode=Node,RBAC'],
  );
  secrets = env.client.resource<Secret>(SECRETS);
  configMaps = env.client.resource<ConfigMap>(CONFIG_MAPS);
}, 60_000);

afterAll(async () => {
  await env?.close();
});

function token(
  id: string,
  secret: string,
  extra: Record<string, string> = {},
  name = `bootstrap-token-${id}`,
): Secret {
  const data: Record<string, string> = {
    'token-id': id,
    'token-secret': secret,
    'usage-bootstrap-signing': 'true',
    ...extra,
  };
  return {
    metadata: { name, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}

async function clusterInfo(): Promise<Record<string, string>> {
  return (await configMaps.get('cluster-info', { namespace: 'kube-public' })).data ?? {};
}

/** The signature keys of cluster-info once they are exactly `ids`. */
async function signedBy(ids: readonly string[]): Promise<Record<string, string>> {
  const want = ids.map((id) => `jws-kubeconfig-${id}`).sort();
  return until(`cluster-info signed by [${ids.join(', ')}]`, async () => {
    const data = await clusterInfo();
    const keys = Object.keys(data)
      .filter((k) => k.startsWith('jws-kubeconfig-'))
      .sort();
    return JSON.stringify(keys) === JSON.stringify(want) ? data : undefined;
  });
}

describe('bootstrap signer', () => {
  it('computes kube’s detached JWS (cluster-bootstrap’s test vectors)', () => {
    const content = 'Hello from the other side. I must have called a thousand times.';
    expect(computeDetachedSignature(content, 'joshua', 'my voice is my passcode')).toBe(
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8',
    );
    expect(computeDetachedSignature('', 'joshua', 'my voice is my passcode')).toBe(
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk',
    );
    expect(computeDetachedSignature(content, 'joshua', '')).toBe(
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8',
    );
  });

  it('signs only with tokens valid for signing', () => {
    const now = Date.now();
    expect(signingToken(token('abcdef', '0123456789abcdef'), now)).toEqual({
      id: 'abcdef',
      secret: '0123456789abcdef',
    });
    expect(
      signingToken(token('abcdef', '0123456789abcdef', { 'usage-bootstrap-signing': 'false' }), now),
    ).toBeUndefined();
    expect(
      signingToken(token('abcdef', '0123456789abcdef', { expiration: rfc3339(now - 1000) }), now),
    ).toBeUndefined();
    expect(signingToken(token('abcdef', '0123456789abcdef', { expiration: 'soon' }), now)).toBeUndefined();
    expect(
      signingToken(token('abcdef', '0123456789abcdef', { expiration: rfc3339(now + 60_000) }), now),
    ).toBeDefined();
    expect(
      signingToken(token('abcdef', '0123456789abcdef', {}, 'bootstrap-token-zzzzzz'), now),
    ).toBeUndefined();
    expect(signingToken(token('abcdef', ''), now)).toBeUndefined();
  });

  it('signs cluster-info as kubeadm join verifies it, and follows tokens and content', async () => {
    await secrets.create(token('abcdef', '0123456789abcdef'));
    await secrets.create(token('nosign', '0123456789abcdef', { 'usage-bootstrap-signing': 'false' }));
    await secrets.create(token('expird', '0123456789abcdef', { expiration: rfc3339(Date.now() - 1000) }));
    await secrets.create({ ...token('opaque', '0123456789abcdef'), type: 'Opaque' });
    await configMaps.create(
      { metadata: { name: 'cluster-info', namespace: 'kube-public' }, data: { kubeconfig: KUBECONFIG } },
      { namespace: 'kube-public' },
    );

    let data = await signedBy(['abcdef']);
    const sig = data['jws-kubeconfig-abcdef'] ?? '';
    // kubeadm's join: recompute the detached JWS of the kubeconfig it read with its token and compare.
    expect(detachedSignatureIsValid(sig, data['kubeconfig'] ?? '', 'abcdef', '0123456789abcdef')).toBe(true);
    expect(detachedSignatureIsValid(sig, data['kubeconfig'] ?? '', 'abcdef', '0123456789abcdefX')).toBe(
      false,
    );
    // The same check written out: header {"alg":"HS256","kid":"abcdef"}, HMAC over header.payload.
    const [header, payload, mac] = sig.split('.');
    expect(payload).toBe('');
    expect(JSON.parse(Buffer.from(header ?? '', 'base64url').toString())).toEqual({
      alg: 'HS256',
      kid: 'abcdef',
    });
    const signingInput = `${header}.${Buffer.from(KUBECONFIG).toString('base64url')}`;
    expect(mac).toBe(createHmac('sha256', '0123456789abcdef').update(signingInput).digest('base64url'));

    // A second token signs too; a changed kubeconfig is re-signed by both.
    await secrets.create(token('ghijkl', 'fedcba9876543210'));
    await signedBy(['abcdef', 'ghijkl']);
    const cm = await configMaps.get('cluster-info', { namespace: 'kube-public' });
    const changed = `${KUBECONFIG}# changed\n`;
    await configMaps.update(
      { ...cm, data: { ...cm.data, kubeconfig: changed } },
      { namespace: 'kube-public' },
    );
    data = await until('the new kubeconfig signed', async () => {
      const d = await clusterInfo();
      return detachedSignatureIsValid(
        d['jws-kubeconfig-ghijkl'] ?? '',
        changed,
        'ghijkl',
        'fedcba9876543210',
      ) && detachedSignatureIsValid(d['jws-kubeconfig-abcdef'] ?? '', changed, 'abcdef', '0123456789abcdef')
        ? d
        : undefined;
    });
    expect(data['kubeconfig']).toBe(changed);

    // A deleted token's signature goes; a token losing its signing usage loses its signature.
    await secrets.delete('bootstrap-token-abcdef', { namespace: 'kube-system' });
    await signedBy(['ghijkl']);
    const g = await secrets.get('bootstrap-token-ghijkl', { namespace: 'kube-system' });
    await secrets.update(
      { ...g, data: { ...g.data, 'usage-bootstrap-signing': b64('false') } },
      { namespace: 'kube-system' },
    );
    await signedBy([]);
    expect(env.errors).toEqual([]);
  });
});
