/**
 * Encryption at rest (`--encryption-provider-config`) on every backend: Secrets (and the other
 * resources listed) are stored under kube's `k8s:enc:<provider>:v1:<key>:` prefix and never in
 * plain text, while the API serves them as usual; a rotated configuration (new key first, old
 * key kept) still reads values written with the old key, and an update rewrites them with the
 * new one; ConfigMaps not listed stay plain. Restarts keep the data (LevelDB data dir, etcd).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ETCD_BINARY, startEtcd, type LocalEtcd } from '../../tools/etcd-local.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { admin } from './support.js';

const KEY1 = Buffer.alloc(32, 1).toString('base64');
const KEY2 = Buffer.alloc(32, 2).toString('base64');
const KEY3 = Buffer.alloc(16, 3).toString('base64');
const PLAIN = 'correct-horse-battery-staple';

function config(providers: string): string {
  return `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
${providers}
`;
}

const AESCBC1 = `      - aescbc:
          keys: [{ name: key1, secret: "${KEY1}" }]`;
const SECRETBOX2 = `      - secretbox:
          keys: [{ name: key2, secret: "${KEY2}" }]`;
const AESGCM3 = `      - aesgcm:
          keys: [{ name: key3, secret: "${KEY3}" }]`;
const IDENTITY = `      - identity: {}`;

async function raw(server: TestServer, key: string): Promise<Buffer> {
  const { kv } = await server.store.get(key);
  if (kv === undefined) throw new Error(`${key} is not stored`);
  return Buffer.from(kv.value);
}

async function putSecret(server: TestServer, name: string, value: string, method = 'POST'): Promise<number> {
  const path =
    method === 'POST' ? '/api/v1/namespaces/default/secrets' : `/api/v1/namespaces/default/secrets/${name}`;
  const r = await admin(server, path, {
    method,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { password: value } },
  });
  return r.status;
}

async function readSecret(server: TestServer, name: string): Promise<string> {
  const r = await admin(server, `/api/v1/namespaces/default/secrets/${name}`);
  expect(r.status).toBe(200);
  const data = r.json['data'] as Record<string, string>;
  return Buffer.from(data['password'] ?? '', 'base64').toString('utf8');
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Runs the rotation scenario on servers `start(args)` makes over one persistent store. */
async function rotationScenario(
  start: (configPath: string) => Promise<TestServer>,
  dir: string,
): Promise<void> {
  const first = join(dir, 'enc-1.yaml');
  await writeFile(first, config(`${AESCBC1}\n${IDENTITY}`));
  let server = await start(first);
  try {
    expect(await putSecret(server, 'db', PLAIN)).toBe(201);
    const cm = await admin(server, '/api/v1/namespaces/default/configmaps', {
      method: 'POST',
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'plain' }, data: { v: PLAIN } },
    });
    expect(cm.status).toBe(201);
    const stored = await raw(server, '/secrets/default/db');
    expect(stored.subarray(0, 23).toString('latin1')).toBe('k8s:enc:aescbc:v1:key1:');
    expect(stored.includes(PLAIN)).toBe(false);
    expect(stored.includes(Buffer.from(PLAIN).toString('base64'))).toBe(false);
    expect((await raw(server, '/configmaps/default/plain')).includes(PLAIN)).toBe(true);
    expect(await readSecret(server, 'db')).toBe(PLAIN);
  } finally {
    await server.close();
  }
  // Rotation: a new key first, the old one still listed.
  const second = join(dir, 'enc-2.yaml');
  await writeFile(second, config(`${SECRETBOX2}\n${AESCBC1}\n${AESGCM3}`));
  server = await start(second);
  try {
    expect(await readSecret(server, 'db')).toBe(PLAIN);
    expect((await raw(server, '/secrets/default/db')).subarray(0, 23).toString('latin1')).toBe(
      'k8s:enc:aescbc:v1:key1:',
    );
    expect(await putSecret(server, 'db', `${PLAIN}-2`, 'PUT')).toBe(200);
    const rewritten = await raw(server, '/secrets/default/db');
    expect(rewritten.subarray(0, 26).toString('latin1')).toBe('k8s:enc:secretbox:v1:key2:');
    expect(rewritten.includes(PLAIN)).toBe(false);
    expect(await readSecret(server, 'db')).toBe(`${PLAIN}-2`);
  } finally {
    await server.close();
  }
  // aesgcm first: the value is bound to its key (authenticated data), and old keys still read.
  const third = join(dir, 'enc-3.yaml');
  await writeFile(third, config(`${AESGCM3}\n${SECRETBOX2}`));
  server = await start(third);
  try {
    expect(await readSecret(server, 'db')).toBe(`${PLAIN}-2`);
    expect(await putSecret(server, 'gcm', PLAIN)).toBe(201);
    const gcm = await raw(server, '/secrets/default/gcm');
    expect(gcm.subarray(0, 23).toString('latin1')).toBe('k8s:enc:aesgcm:v1:key3:');
    expect(await readSecret(server, 'gcm')).toBe(PLAIN);
    const list = await admin(server, '/api/v1/namespaces/default/secrets');
    expect((list.json['items'] as unknown[]).length).toBeGreaterThanOrEqual(2);
  } finally {
    await server.close();
  }
}

describe('encryption at rest', () => {
  it('memory store: Secrets are sealed, the API reads them, a bad config fails the start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'capstan-enc-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'enc.yaml');
    await writeFile(path, config(AESGCM3));
    const server = await startTestServer({ args: [`--encryption-provider-config=${path}`] });
    try {
      expect(await putSecret(server, 's', PLAIN)).toBe(201);
      const stored = await raw(server, '/secrets/default/s');
      expect(stored.subarray(0, 23).toString('latin1')).toBe('k8s:enc:aesgcm:v1:key3:');
      expect(stored.includes(PLAIN)).toBe(false);
      expect(await readSecret(server, 's')).toBe(PLAIN);
    } finally {
      await server.close();
    }
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      config(
        `      - aescbc:\n          keys: [{ name: k, secret: "${Buffer.alloc(7).toString('base64')}" }]`,
      ),
    );
    await expect(startTestServer({ args: [`--encryption-provider-config=${bad}`] })).rejects.toMatchObject({
      code: 'ENCRYPTION_CONFIG_INVALID',
    });
  });

  it('LevelDB: rotation keeps old values readable and updates rewrite them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'capstan-enc-ldb-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    await rotationScenario(
      (cfg) =>
        startTestServer({ store: 'leveldb', dataDir: dir, args: [`--encryption-provider-config=${cfg}`] }),
      dir,
    );
  }, 60_000);

  it('etcd: rotation keeps old values readable and updates rewrite them', async () => {
    if (!existsSync(ETCD_BINARY)) {
      if (process.env['CI'] === 'true') throw new Error(`etcd is missing (${ETCD_BINARY})`);
      return;
    }
    const dir = await mkdtemp(join(tmpdir(), 'capstan-enc-etcd-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const etcd: LocalEtcd = await startEtcd();
    cleanups.push(() => etcd.stop());
    await rotationScenario(
      (cfg) =>
        startTestServer({ store: 'etcd', etcd, dataDir: dir, args: [`--encryption-provider-config=${cfg}`] }),
      dir,
    );
  }, 90_000);
});
