/**
 * The local etcd launcher (`tools/etcd-local.ts`): fresh data dir and cleanup, kill and restart
 * on the same data, and TLS with client certificates (generated here with the openssl CLI),
 * which also exercises the store's `tls` options.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../../storage/errors.js';
import { openEtcdStore } from '../../../storage/etcd/index.js';
import { startEtcd } from '../../../tools/etcd-local.js';
import { bytes, runEtcdTests, text } from './support.js';
import { adminFetch, adminJson, adminTls } from '../../support/https.js';
import { startTestServer } from '../../support/server.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.runIf(runEtcdTests)('local etcd launcher', () => {
  it('starts on a fresh data dir, keeps data across kill and restart, and cleans up on stop', async () => {
    const etcd = await startEtcd();
    const firstPid = etcd.pid;
    let lastPid = firstPid;
    expect(existsSync(etcd.dataDir)).toBe(true);
    expect(etcd.endpoints).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/)]);
    try {
      const store = await openEtcdStore({ endpoints: etcd.endpoints });
      const written = await store.create('/launcher/a', bytes('kept'));
      await store.close();
      await etcd.kill();
      expect(alive(firstPid)).toBe(false);
      await etcd.restart();
      expect(etcd.pid).not.toBe(firstPid);
      const again = await openEtcdStore({ endpoints: etcd.endpoints });
      const read = await again.get('/launcher/a');
      expect(read.kv?.modRevision).toBe(written.revision);
      expect(text(read.kv?.value ?? new Uint8Array())).toBe('kept');
      await again.close();
    } finally {
      lastPid = etcd.pid;
      await etcd.stop();
    }
    expect(existsSync(etcd.dataDir)).toBe(false);
    expect(alive(lastPid)).toBe(false);
  });
});

/** Runs openssl in `dir` (certificates for tests only). */
function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/**
 * A CA, a server certificate for 127.0.0.1 (also valid for client auth: the launcher's readiness
 * probe presents it), a client certificate, and an unrelated CA. ECDSA P-256, valid for a day.
 */
async function makeCerts(dir: string): Promise<{
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  otherCa: string;
}> {
  const leafExt = join(dir, 'leaf.cnf');
  await writeFile(
    leafExt,
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=critical,digitalSignature\n',
  );
  const caCert = (name: string): void => {
    openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}-key.pem`]);
    openssl(dir, [
      'req',
      '-x509',
      '-new',
      '-key',
      `${name}-key.pem`,
      '-subj',
      `/CN=${name}`,
      '-days',
      '1',
      '-out',
      `${name}.pem`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign',
    ]);
  };
  const leaf = (name: string): void => {
    openssl(dir, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', `${name}-key.pem`]);
    openssl(dir, ['req', '-new', '-key', `${name}-key.pem`, '-subj', `/CN=${name}`, '-out', `${name}.csr`]);
    openssl(dir, [
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-days',
      '1',
      '-out',
      `${name}.pem`,
      '-extfile',
      leafExt,
    ]);
  };
  caCert('ca');
  caCert('other-ca');
  leaf('server');
  leaf('client');
  return {
    ca: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server-key.pem'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client-key.pem'),
    otherCa: join(dir, 'other-ca.pem'),
  };
}

describe.runIf(runEtcdTests)('etcd over TLS with client certificates', () => {
  let dir: string;
  let certs: Awaited<ReturnType<typeof makeCerts>>;
  let etcd: Awaited<ReturnType<typeof startEtcd>>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-etcd-tls-'));
    certs = await makeCerts(dir);
    etcd = await startEtcd({
      tls: { certFile: certs.serverCert, keyFile: certs.serverKey, clientCaFile: certs.ca },
    });
  });
  afterAll(async () => {
    await etcd?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('serves a store that presents a client certificate and trusts the CA', async () => {
    expect(etcd.endpoints[0]).toMatch(/^https:/);
    const store = await openEtcdStore({
      endpoints: etcd.endpoints,
      tls: { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey },
    });
    try {
      const written = await store.create('/tls/a', bytes('secret'));
      expect((await store.get('/tls/a')).kv?.modRevision).toBe(written.revision);
      await store.checkHealth();
    } finally {
      await store.close();
    }
  });

  it('cannot connect without a client certificate, or when the server is not trusted', async () => {
    await expect(
      openEtcdStore({ endpoints: etcd.endpoints, tls: { caFile: certs.ca }, dialTimeoutMs: 1_000 }),
    ).rejects.toBeInstanceOf(UnavailableError);
    await expect(
      openEtcdStore({
        endpoints: etcd.endpoints,
        tls: { caFile: certs.otherCa, certFile: certs.clientCert, keyFile: certs.clientKey },
        dialTimeoutMs: 1_000,
      }),
    ).rejects.toBeInstanceOf(UnavailableError);
  });

  it('capstan server stores there with --etcd-cafile, --etcd-certfile and --etcd-keyfile', async () => {
    const server = await startTestServer({
      store: 'etcd',
      etcd,
      args: [
        `--etcd-cafile=${certs.ca}`,
        `--etcd-certfile=${certs.clientCert}`,
        `--etcd-keyfile=${certs.clientKey}`,
      ],
    });
    try {
      const tls = adminTls(server.kubeconfigPath);
      const created = await adminJson(`${server.url}/api/v1/namespaces/default/configmaps`, tls, 'POST', {
        metadata: { name: 'over-tls' },
        data: { k: 'v' },
      });
      expect(created.status).toBe(201);
      const ready = await adminFetch(`${server.url}/readyz?verbose`, tls);
      expect(ready.status).toBe(200);
      expect(ready.body).toContain('[+]etcd ok');
      // The object is in this etcd, read back over TLS without the server.
      const store = await openEtcdStore({
        endpoints: etcd.endpoints,
        tls: { caFile: certs.ca, certFile: certs.clientCert, keyFile: certs.clientKey },
      });
      try {
        const { kv } = await store.get('/registry/configmaps/default/over-tls');
        expect(kv).toBeDefined();
      } finally {
        await store.close();
      }
    } finally {
      await server.close();
    }
  });

  it('capstan server refuses to start without the client certificate, naming the store', async () => {
    await expect(
      startTestServer({ store: 'etcd', etcd, args: [`--etcd-cafile=${certs.ca}`] }),
    ).rejects.toThrow(/^etcd: cannot connect/);
  }, 60_000);
});
