/**
 * The server as a whole: restart on the same data dir (certificates, kubeconfig and data survive),
 * client-certificate authentication and anonymous access, the etcd backend under `--etcd-prefix`,
 * and watches ending cleanly on shutdown.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureServerPki } from '../../src/pki/server-pki.js';
import { CaBundle } from '../../src/authn/ca-bundle.js';
import { RequestAuthenticator, userFromSubject } from '../../src/authn/request-authenticator.js';
import { TokenChain } from '../../src/authn/token-chain.js';
import { waitReady } from '../support/users.js';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

const ETCD_AVAILABLE = existsSync(process.env['CAPSTAN_ETCD_BIN'] ?? '/usr/bin/etcd');
const REQUIRE_ETCD = process.env['CAPSTAN_REQUIRE_ETCD'] === '1';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-foundation-'));
  dirs.push(dir);
  return dir;
}

async function start(...args: Parameters<typeof startTestServer>): Promise<TestServer> {
  const s = await startTestServer(...args);
  servers.push(s);
  return s;
}

describe('restart on the embedded store', () => {
  it('reuses the certificates, rewrites a working kubeconfig, and keeps the data', async () => {
    const dataDir = await tempDir();
    const first = await start({ store: 'leveldb', dataDir });
    const core = first.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'kept' }, data: { a: 'b' } },
    });
    const caBefore = await readFile(join(first.certDir, 'ca.crt'), 'utf8');
    const servingBefore = await readFile(join(first.certDir, 'apiserver.crt'), 'utf8');
    const oldTls = adminTls(first.kubeconfigPath);
    expect((await stat(first.kubeconfigPath)).mode & 0o777).toBe(0o600);
    expect(await readFile(first.kubeconfigPath, 'utf8')).toContain(`server: "${first.url}"`);
    await first.close();

    const second = await start({ store: 'leveldb', dataDir });
    expect(second.server.pki.written).toEqual([]);
    expect(await readFile(join(second.certDir, 'ca.crt'), 'utf8')).toBe(caBefore);
    expect(await readFile(join(second.certDir, 'apiserver.crt'), 'utf8')).toBe(servingBefore);
    // The admin credentials of the first run still work against the second (a new port).
    const res = await adminFetch(`${second.url}/api/v1/namespaces/default/configmaps/kept`, oldTls);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ metadata: { name: 'kept' }, data: { a: 'b' } });
    const cm = await second.kubeConfig
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ name: 'kept', namespace: 'default' });
    expect(cm.data).toEqual({ a: 'b' });
  });
});

describe('authentication', () => {
  it('maps a verified certificate subject to user and groups (the chain adds system:authenticated)', () => {
    expect(userFromSubject({ CN: 'system:admin', O: 'system:masters' })).toEqual({
      name: 'system:admin',
      uid: '',
      groups: ['system:masters'],
      extra: {},
    });
    expect(userFromSubject({ CN: 'jane', O: ['dev', 'ops'] })?.groups).toEqual(['dev', 'ops']);
    expect(userFromSubject({ O: 'x' })).toBeUndefined();
  });

  it('answers anonymous requests when allowed, and rejects unverifiable certificates even then', async () => {
    // Kube turns anonymous requests off with the AlwaysAllow authorizer (the default mode).
    const server = await start({ args: ['--authorization-mode=RBAC'] });
    // Anonymous requests reach /healthz through the bootstrap policy, in place once ready.
    await waitReady(server);
    const { ca } = adminTls(server.kubeconfigPath);
    expect((await adminFetch(`${server.url}/healthz`, { ca })).status).toBe(200);
    const foreign = await ensureServerPki({ certDir: await tempDir() });
    const res = await adminFetch(`${server.url}/healthz`, {
      ca,
      cert: foreign.admin.certPem,
      key: foreign.admin.keyPem,
    });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('turns anonymous requests off under the AlwaysAllow authorizer, as kube-apiserver does', async () => {
    const server = await start();
    const { ca } = adminTls(server.kubeconfigPath);
    expect((await adminFetch(`${server.url}/healthz`, { ca })).status).toBe(401);
    expect(server.logs.join('\n')).toContain('AnonymousAuth is not allowed with the AlwaysAllow authorizer');
  });

  it('with --anonymous-auth=false, requires a certificate from a trusted CA (its own or --client-ca-file)', async () => {
    const otherDir = await tempDir();
    const other = await ensureServerPki({ certDir: otherDir });
    const server = await start({
      args: ['--anonymous-auth=false', `--client-ca-file=${join(otherDir, 'ca.crt')}`],
    });
    const admin = adminTls(server.kubeconfigPath);
    const noCert = await adminFetch(`${server.url}/api/v1/namespaces`, { ca: admin.ca });
    expect(noCert.status).toBe(401);
    expect((await adminFetch(`${server.url}/healthz`, { ca: admin.ca })).status).toBe(401);
    expect((await adminFetch(`${server.url}/api/v1/namespaces`, admin)).status).toBe(200);
    expect((await adminFetch(`${server.url}/api/v1/namespaces`, admin, { http2: false })).status).toBe(200);
    const viaClientCa = await adminFetch(`${server.url}/api/v1/namespaces`, {
      ca: admin.ca,
      cert: other.admin.certPem,
      key: other.admin.keyPem,
    });
    expect(viaClientCa.status).toBe(200);
  });

  it('caches the identity per connection', async () => {
    const pki = await ensureServerPki({ certDir: await tempDir() });
    let lookups = 0;
    const socket = {
      authorized: true,
      getPeerCertificate: () => {
        lookups++;
        return { subject: { CN: 'system:admin', O: 'system:masters' } };
      },
      getPeerX509Certificate: () => new X509Certificate(pki.admin.certPem),
    };
    const request = { raw: { socket, rawHeaders: [] }, headers: {} } as never;
    const authn = new RequestAuthenticator({
      anonymous: false,
      clientCas: new CaBundle([{ pem: pki.ca.certPem }]),
      tokens: new TokenChain({ authenticators: [], apiAudiences: [] }),
    });
    const first = authn.authenticate(request);
    expect(first).not.toBeInstanceOf(Promise);
    expect((first as { name: string }).name).toBe('system:admin');
    expect((authn.authenticate(request) as { groups: readonly string[] }).groups).toEqual([
      'system:masters',
      'system:authenticated',
    ]);
    expect(lookups).toBe(1);
  });
});

describe('graceful shutdown', () => {
  it('ends open watches cleanly and closes the store', async () => {
    const server = await start();
    const tls = adminTls(server.kubeconfigPath);
    const session = connect(server.url, tls);
    const stream = session.request({ ':path': '/api/v1/namespaces/default/configmaps?watch=1' });
    let status = 0;
    let received = '';
    stream.setEncoding('utf8');
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c: string) => (received += c));
    const ended = new Promise<void>((resolve) => stream.on('close', resolve));
    await new Promise<void>((resolve) => stream.once('response', () => resolve()));
    const core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'seen' } } });
    for (let i = 0; i < 100 && !received.includes('"seen"'); i++) await new Promise((r) => setTimeout(r, 20));
    await server.close();
    await ended;
    session.destroy();
    expect(status).toBe(200);
    expect(received).toContain('"type":"ADDED"');
    expect(stream.rstCode ?? 0).toBe(0);
    expect(server.server.lifecycle.phase).toBe('stopped');
    await expect(server.store.currentRevision()).rejects.toThrow();
  });
});

describe.skipIf(!ETCD_AVAILABLE && !REQUIRE_ETCD)('on etcd', () => {
  it("stores resources under --etcd-prefix in kube-apiserver's layout", async () => {
    const server = await start({ store: 'etcd', args: ['--etcd-prefix=/registry'] });
    const core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedService({
      namespace: 'default',
      body: { metadata: { name: 'web' }, spec: { ports: [{ port: 80 }] } },
    });
    const root = server.server.rootStore;
    const keys = (
      await root.range({ prefix: '/registry/services/specs/default/' }, { keysOnly: true })
    ).items.map((kv) => kv.key);
    // kube-apiserver's own default/kubernetes Service sits beside it.
    expect(keys).toEqual([
      '/registry/services/specs/default/kubernetes',
      '/registry/services/specs/default/web',
    ]);
    const ns = (await root.range({ prefix: '/registry/namespaces/' }, { keysOnly: true })).items.map(
      (kv) => kv.key,
    );
    expect(ns).toContain('/registry/namespaces/default');
    const res = await adminFetch(`${server.url}/readyz?verbose`, adminTls(server.kubeconfigPath));
    expect(res.body).toContain('[+]etcd ok\n');
  });
});
