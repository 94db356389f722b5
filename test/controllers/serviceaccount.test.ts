/**
 * The serviceaccount, root-ca-cert-publisher and serviceaccount-token controllers, each a client
 * of a bare server (`--controllers=`: the server itself creates none of these objects):
 * `default` ServiceAccounts and `kube-root-ca.crt` in every namespace, put back when deleted or
 * changed; legacy token Secrets filled with a token the server accepts, deleted with their
 * account.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap, Namespace, Secret, ServiceAccount } from '../../src/api/types/core-v1.js';
import {
  Client,
  CONFIG_MAPS,
  NAMESPACES,
  SECRETS,
  SERVICE_ACCOUNTS,
  isNotFound,
  loadKubeconfig,
  type ResourceClient,
} from '../../src/client/index.js';
import { serviceAccountController } from '../../src/controllers/serviceaccount/index.js';
import {
  DESCRIPTION_ANNOTATION,
  ROOT_CA_DESCRIPTION,
  rootCaCertPublisherController,
} from '../../src/controllers/root-ca-cert-publisher/index.js';
import { serviceAccountTokenController } from '../../src/controllers/serviceaccount-token/index.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let dir: string;
let rootCa: string;
let accounts: ResourceClient<ServiceAccount>;
let configMaps: ResourceClient<ConfigMap>;
let secrets: ResourceClient<Secret>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-sa-test-'));
  // A root CA file other than the client's, so the test sees the flag is honoured.
  rootCa = '-----BEGIN CERTIFICATE-----\nTUlJQmZha2U=\n-----END CERTIFICATE-----\n';
  await writeFile(join(dir, 'ca.crt'), rootCa);
  // One key for the server's token verification and the token controller's signing.
  const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  await writeFile(join(dir, 'sa.key'), key.export({ type: 'pkcs8', format: 'pem' }));
  env = await startInfraEnv(
    [serviceAccountController, rootCaCertPublisherController, serviceAccountTokenController],
    [`--root-ca-file=${join(dir, 'ca.crt')}`, `--service-account-private-key-file=${join(dir, 'sa.key')}`],
    ['--controllers=', `--service-account-signing-key-file=${join(dir, 'sa.key')}`],
  );
  accounts = env.client.resource<ServiceAccount>(SERVICE_ACCOUNTS);
  configMaps = env.client.resource<ConfigMap>(CONFIG_MAPS);
  secrets = env.client.resource<Secret>(SECRETS);
}, 60_000);

afterAll(async () => {
  await env?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function missing(get: () => Promise<unknown>): Promise<true | undefined> {
  try {
    await get();
    return undefined;
  } catch (err) {
    if (isNotFound(err)) return true;
    throw err;
  }
}

describe('serviceaccount controller', () => {
  it('creates default in every namespace, and again when it is deleted', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public']) {
      await until(`default in ${ns}`, () => accounts.get('default', { namespace: ns }));
    }
    await env.client.resource<Namespace>(NAMESPACES).create({ metadata: { name: 'team-a' } });
    const first = await until('default in team-a', () => accounts.get('default', { namespace: 'team-a' }));
    await accounts.delete('default', { namespace: 'team-a' });
    const again = await until('default recreated', async () => {
      const sa = await accounts.get('default', { namespace: 'team-a' });
      return sa.metadata.uid !== first.metadata.uid ? sa : undefined;
    });
    expect(again.metadata.name).toBe('default');
  });
});

describe('root-ca-cert-publisher controller', () => {
  it('publishes --root-ca-file in kube-root-ca.crt and puts it back', async () => {
    await env.client.resource<Namespace>(NAMESPACES).create({ metadata: { name: 'team-b' } });
    const cm = await until('kube-root-ca.crt', () =>
      configMaps.get('kube-root-ca.crt', { namespace: 'team-b' }),
    );
    expect(cm.data).toEqual({ 'ca.crt': rootCa });
    expect(cm.metadata.annotations?.[DESCRIPTION_ANNOTATION]).toBe(ROOT_CA_DESCRIPTION);

    await configMaps.update({ ...cm, data: { 'ca.crt': 'tampered', extra: 'x' } }, { namespace: 'team-b' });
    await until('restored', async () => {
      const c = await configMaps.get('kube-root-ca.crt', { namespace: 'team-b' });
      return c.data?.['ca.crt'] === rootCa && c.data['extra'] === undefined ? c : undefined;
    });
    await configMaps.delete('kube-root-ca.crt', { namespace: 'team-b' });
    await until('recreated', () => configMaps.get('kube-root-ca.crt', { namespace: 'team-b' }));
  });
});

describe('serviceaccount-token controller', () => {
  it('fills a token Secret whose token authenticates, and deletes it with its account', async () => {
    await env.client.resource<Namespace>(NAMESPACES).create({ metadata: { name: 'team-c' } });
    const sa = await accounts.create({ metadata: { name: 'robot', namespace: 'team-c' } });
    await secrets.create({
      metadata: {
        name: 'robot-token',
        namespace: 'team-c',
        annotations: { 'kubernetes.io/service-account.name': 'robot' },
      },
      type: 'kubernetes.io/service-account-token',
    });
    const filled = await until('the token', async () => {
      const s = await secrets.get('robot-token', { namespace: 'team-c' });
      return (s.data?.['token'] ?? '') === '' ? undefined : s;
    });
    expect(filled.metadata.annotations?.['kubernetes.io/service-account.uid']).toBe(sa.metadata.uid);
    expect(Buffer.from(filled.data?.['ca.crt'] ?? '', 'base64').toString()).toBe(rootCa);
    expect(Buffer.from(filled.data?.['namespace'] ?? '', 'base64').toString()).toBe('team-c');
    const token = Buffer.from(filled.data?.['token'] ?? '', 'base64').toString();
    const config = loadKubeconfig(env.server.kubeconfigPath);
    const { certData: _c, keyData: _k, ...anonymous } = config;
    const asRobot = new Client({ ...anonymous, token, qps: -1 });
    try {
      const review = await asRobot.json<{ status?: { userInfo?: { username?: string } } }>(
        {
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        },
        'self subject review',
      );
      expect(review.status?.userInfo?.username).toBe('system:serviceaccount:team-c:robot');
    } finally {
      await asRobot.close();
    }

    // A token Secret naming no account is deleted.
    await secrets.create({
      metadata: {
        name: 'orphan',
        namespace: 'team-c',
        annotations: { 'kubernetes.io/service-account.name': 'nobody' },
      },
      type: 'kubernetes.io/service-account-token',
    });
    await until('the orphan deleted', () => missing(() => secrets.get('orphan', { namespace: 'team-c' })));

    await accounts.delete('robot', { namespace: 'team-c' });
    await until('the token Secret deleted', () =>
      missing(() => secrets.get('robot-token', { namespace: 'team-c' })),
    );
    expect(env.errors).toEqual([]);
  });
});
