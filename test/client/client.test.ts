/**
 * The REST client against a real in-process Capstan: CRUD, typed errors, patch types,
 * subresources, paging, watches, and config loading.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createSecureServer, type ServerHttp2Session } from 'node:http2';
import {
  connect as tcpConnect,
  createServer as createTcpServer,
  type AddressInfo,
  type Socket,
} from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConfigMap, Pod, ServiceAccount } from '../../src/api/types/core-v1.js';
import type { TokenRequest } from '../../src/api/types/authentication-v1.js';
import type { Deployment } from '../../src/api/types/apps-v1.js';
import {
  ApiStatusError,
  CONFIG_MAPS,
  Client,
  DEPLOYMENTS,
  NAMESPACES,
  PODS,
  SERVICE_ACCOUNTS,
  TransportError,
  inClusterConfig,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  loadKubeconfig,
  serverPreferredResources,
  withIdentity,
  type WatchEvent,
} from '../../src/client/index.js';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../../src/pki/certificate.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;
const NS = 'client-crud';

beforeAll(async () => {
  server = await startTestServer();
  client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
  await client.resource(NAMESPACES).create({ metadata: { name: NS } });
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

function cm(name: string, data: Record<string, string> = { a: '1' }): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data };
}

describe('resource client', () => {
  it('creates, gets, lists, updates and deletes', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    const created = await cms.create(cm('one'));
    expect(created.metadata?.uid).toBeTruthy();
    const got = await cms.get('one', { namespace: NS });
    expect(got.data).toEqual({ a: '1' });
    const updated = await cms.update({ ...got, data: { a: '2' } });
    expect(updated.metadata?.resourceVersion).not.toBe(got.metadata?.resourceVersion);
    const list = await cms.list({ namespace: NS });
    expect(list.items.map((i) => i.metadata?.name)).toContain('one');
    expect(list.metadata.resourceVersion).toMatch(/^\d+$/);
    await cms.delete('one', { namespace: NS });
    await expect(cms.get('one', { namespace: NS })).rejects.toSatisfy(isNotFound);
  });

  it('types 404, 409 (exists and conflict) and 422 errors', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    const err = await cms.get('missing', { namespace: NS }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiStatusError);
    expect((err as ApiStatusError).code).toBe(404);
    expect((err as ApiStatusError).reason).toBe('NotFound');
    const first = await cms.create(cm('dup'));
    await expect(cms.create(cm('dup'))).rejects.toSatisfy(isAlreadyExists);
    await cms.update({ ...first, data: { b: '1' } });
    const stale = await cms.update({ ...first, data: { c: '1' } }).catch((e: unknown) => e);
    expect(isConflict(stale)).toBe(true);
    expect(isAlreadyExists(stale)).toBe(false);
    const invalid = await cms.create(cm('Not_Valid')).catch((e: unknown) => e);
    expect(isInvalid(invalid)).toBe(true);
    expect((invalid as ApiStatusError).code).toBe(422);
    expect((invalid as ApiStatusError).status.details?.causes?.length).toBeGreaterThan(0);
  });

  it('patches with merge, strategic, json and apply', async () => {
    const deps = client.resource<Deployment>(DEPLOYMENTS);
    await deps.create({
      metadata: { name: 'web', namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    let d = await deps.patch('web', { spec: { replicas: 2 } }, { type: 'merge', namespace: NS });
    expect(d.spec?.replicas).toBe(2);
    d = await deps.patch(
      'web',
      { spec: { template: { spec: { containers: [{ name: 'side', image: 'busybox' }] } } } },
      { type: 'strategic', namespace: NS },
    );
    expect(d.spec?.template?.spec?.containers?.map((c) => c.name).sort()).toEqual(['c', 'side']);
    d = await deps.patch('web', [{ op: 'replace', path: '/spec/replicas', value: 3 }], {
      type: 'json',
      namespace: NS,
    });
    expect(d.spec?.replicas).toBe(3);
    d = await deps.patch(
      'web',
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { tier: 'front' } } },
      { type: 'apply', namespace: NS, fieldManager: 'client-test' },
    );
    expect(d.metadata?.labels).toEqual({ tier: 'front' });
    expect(d.metadata?.managedFields?.some((f) => f.manager === 'client-test')).toBe(true);
    d = await deps.patch(
      'web',
      { status: { observedGeneration: 7 } },
      {
        type: 'merge',
        namespace: NS,
        subresource: 'status',
      },
    );
    expect(d.status?.observedGeneration).toBe(7);
  });

  it('reads and writes subresources and deletes collections', async () => {
    const deps = client.resource<Deployment>(DEPLOYMENTS);
    const scale = await deps.getSubresource<{ spec: { replicas: number } }>('web', 'scale', {
      namespace: NS,
    });
    expect(scale.spec.replicas).toBe(3);
    const pods = client.resource<Pod>(PODS);
    for (const name of ['p1', 'p2'])
      await pods.create({
        metadata: { name, namespace: NS, labels: { group: 'x' } },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      });
    const scaled = await deps.updateSubresource<{ spec: { replicas: number } }>(
      'web',
      'scale',
      { ...scale, spec: { replicas: 4 } },
      { namespace: NS },
    );
    expect(scaled.spec.replicas).toBe(4);
    expect((await deps.get('web', { namespace: NS })).spec?.replicas).toBe(4);
    await pods.deleteCollection({ namespace: NS, labelSelector: 'group=x', gracePeriodSeconds: 0 });
    const left = await pods.list({ namespace: NS, labelSelector: 'group=x' });
    expect(left.items.filter((p) => p.metadata?.deletionTimestamp === undefined)).toEqual([]);
  });

  it('pages lists with limit and continue', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    for (let i = 0; i < 5; i++) await cms.create(cm(`page-${i}`));
    const seen: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await cms.list({
        namespace: NS,
        limit: 2,
        ...(cont === undefined ? {} : { continue: cont }),
      });
      pages++;
      for (const i of page.items) seen.push(i.metadata?.name ?? '');
      cont = page.metadata.continue;
    } while (cont !== undefined && cont !== '');
    expect(pages).toBeGreaterThan(2);
    expect(seen.filter((n) => n.startsWith('page-')).sort()).toEqual([
      'page-0',
      'page-1',
      'page-2',
      'page-3',
      'page-4',
    ]);
  });

  it('fails fast with CLIENT_UNREACHABLE when nothing listens, for requests and watches', async () => {
    const dead = new Client({ ...loadKubeconfig(server.kubeconfigPath), server: 'https://127.0.0.1:1' });
    try {
      const err = await dead
        .resource(NAMESPACES)
        .get(NS)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).code).toBe('CLIENT_UNREACHABLE');
      const watch = dead.resource(NAMESPACES).watch();
      const werr = await watch[Symbol.asyncIterator]()
        .next()
        .catch((e: unknown) => e);
      expect((werr as TransportError).code).toBe('CLIENT_UNREACHABLE');
    } finally {
      await dead.close();
    }
    await expect(dead.request({ method: 'GET', path: '/version' })).rejects.toMatchObject({
      code: 'CLIENT_CLOSED',
    });
  });

  it('reconnects after the session is dropped', async () => {
    const before = await client.resource(NAMESPACES).get(NS);
    client.transport.reset();
    const after = await client.resource(NAMESPACES).get(NS);
    expect(after.metadata?.uid).toBe(before.metadata?.uid);
  });

  it('opens a new session after a GOAWAY', async () => {
    const pki = server.server.pki;
    const h2 = createSecureServer({ cert: pki.serving.certPem, key: pki.serving.keyPem });
    let sessions = 0;
    const open: ServerHttp2Session[] = [];
    h2.on('session', (s: ServerHttp2Session) => {
      sessions++;
      s.on('error', () => undefined);
      open.push(s);
    });
    h2.on('stream', (stream) => {
      stream.respond({ ':status': 200, 'content-type': 'application/json' });
      stream.end('{}');
      // After answering, tell the client this connection takes no more streams.
      stream.session?.goaway();
    });
    await new Promise<void>((r) => h2.listen(0, '127.0.0.1', r));
    const port = (h2.address() as AddressInfo).port;
    const c = new Client({
      server: `https://127.0.0.1:${port}`,
      caData: Buffer.from(pki.servingTrustPem),
      qps: -1,
    });
    try {
      for (let i = 0; i < 3; i++) expect((await c.request({ method: 'GET', path: '/x' })).status).toBe(200);
      expect(sessions).toBe(3);
    } finally {
      await c.close();
      // Node's server keeps a session that sent GOAWAY until it is destroyed.
      for (const s of open) s.destroy();
      await new Promise((r) => h2.close(r));
    }
  });

  it('drops a session whose server stops answering, by the HTTP/2 PING health check', async () => {
    // A TCP relay to the server that can freeze: the connection stays open, nothing gets through.
    const target = new URL(server.url);
    let frozen = false;
    const sockets = new Set<Socket>();
    const relay = createTcpServer((down) => {
      const up = tcpConnect(Number(target.port), target.hostname);
      for (const [from, to] of [
        [down, up],
        [up, down],
      ] as const) {
        sockets.add(from);
        from.on('data', (d: Buffer) => void (frozen || to.write(d)));
        from.on('error', () => undefined);
        from.on('close', () => to.destroy());
      }
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const port = (relay.address() as AddressInfo).port;
    const c = new Client({
      ...loadKubeconfig(server.kubeconfigPath),
      server: `https://127.0.0.1:${port}`,
      qps: -1,
      http2ReadIdleTimeoutMs: 200,
      http2PingTimeoutMs: 300,
    });
    try {
      expect((await c.resource(NAMESPACES).get(NS)).metadata?.name).toBe(NS);
      frozen = true;
      const started = Date.now();
      const err = await c
        .resource(NAMESPACES)
        .get(NS)
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).message).toMatch(/PING/);
      expect(Date.now() - started).toBeLessThan(5_000);
      frozen = false; // a new session (a new connection) serves the next request
      expect((await c.resource(NAMESPACES).get(NS)).metadata?.name).toBe(NS);
    } finally {
      await c.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => relay.close(r));
    }
  });

  it('makes raw requests', async () => {
    const res = await client.request({ method: 'GET', path: '/version' });
    expect(res.status).toBe(200);
    expect((JSON.parse(res.body.toString()) as { gitVersion: string }).gitVersion).toMatch(/^v1\./);
  });
});

describe('watch', () => {
  it('sees added, modified and deleted events, and bookmarks', async () => {
    const cms = client.resource<ConfigMap>(CONFIG_MAPS);
    const start = await cms.list({ namespace: NS, limit: 1 });
    const watch = cms.watch({
      namespace: NS,
      resourceVersion: start.metadata.resourceVersion ?? '',
      allowWatchBookmarks: true,
    });
    const created = await cms.create(cm('watched'));
    await cms.update({ ...created, data: { z: '1' } });
    await cms.delete('watched', { namespace: NS });
    const seen: WatchEvent<ConfigMap>[] = [];
    for await (const ev of watch) {
      if (ev.type === 'BOOKMARK' || ev.object.metadata?.name !== 'watched') continue;
      seen.push(ev);
      if (ev.type === 'DELETED') break;
    }
    expect(seen.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    expect(seen[1]?.object.data).toEqual({ z: '1' });
  });

  it('close() ends the iteration', async () => {
    const watch = client.resource<ConfigMap>(CONFIG_MAPS).watch({ namespace: NS });
    setTimeout(() => watch.close(), 50);
    const events: unknown[] = [];
    for await (const ev of watch) events.push(ev);
    expect(Array.isArray(events)).toBe(true);
  });
});

describe('watch from a compacted revision', () => {
  it('throws a too-old resourceVersion as a 410 ApiStatusError', async () => {
    const uncached = await startTestServer({ args: ['--watch-cache=false'] });
    const c = new Client({ ...loadKubeconfig(uncached.kubeconfigPath), qps: -1 });
    try {
      const cms = c.resource<ConfigMap>(CONFIG_MAPS);
      await c.resource(NAMESPACES).create({ metadata: { name: NS } });
      const before = await cms.create(cm('old'));
      await cms.update({ ...before, data: { b: '2' } });
      // The first tick records a revision, the second compacts to it.
      await uncached.server.compactNow();
      await uncached.server.compactNow();
      const watch = cms.watch({ namespace: NS, resourceVersion: before.metadata?.resourceVersion ?? '' });
      const err = await (async () => {
        for await (const _ of watch) {
          // an old RV may first replay nothing; the error arrives as an ERROR event or a 410
        }
      })().catch((e: unknown) => e);
      expect(isGone(err)).toBe(true);
      expect((err as ApiStatusError).code).toBe(410);
    } finally {
      await c.close();
      await uncached.close();
    }
  });
});

describe('discovery', () => {
  it("lists the preferred versions' resources with their verbs, without subresources", async () => {
    const { resources, failed } = await serverPreferredResources(client, new AbortController().signal);
    expect(failed.size).toBe(0);
    const find = (group: string, resource: string) =>
      resources.find((r) => r.ref.group === group && r.ref.resource === resource);
    const deployments = find('apps', 'deployments');
    expect(deployments?.ref).toMatchObject({ version: 'v1', kind: 'Deployment', namespaced: true });
    expect([...(deployments?.verbs ?? [])]).toEqual(expect.arrayContaining(['list', 'watch', 'delete']));
    expect(find('', 'namespaces')?.ref).toMatchObject({
      version: 'v1',
      kind: 'Namespace',
      namespaced: false,
    });
    expect(resources.some((r) => r.ref.resource.includes('/'))).toBe(false);
  });
});

describe('config', () => {
  it('re-reads client certificate files after 5 minutes, in the background', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'client-cert-reload-'));
    const clock = vi.spyOn(performance, 'now');
    try {
      const caKey = createPrivateKey(await readFile(join(server.certDir, 'ca.key')));
      const ca = new X509Certificate(await readFile(join(server.certDir, 'ca.crt')));
      const issuer = {
        subjectDer: subjectDerOf(ca.raw),
        privateKey: caKey,
        publicKey: createPublicKey(caKey),
      };
      const writePair = async (user: string): Promise<void> => {
        const keys = await generateKeyPair();
        const cert = issueCertificate({
          subject: { commonName: user, organizations: ['system:masters'] },
          publicKey: keys.publicKey,
          issuer,
          usage: 'client',
          notBefore: new Date(Date.now() - 60_000),
          notAfter: new Date(Date.now() + 3_600_000),
        });
        // As a rotation does: whole files swapped in by rename.
        await writeFile(join(dir, 'key.tmp'), privateKeyPem(keys.privateKey));
        await writeFile(join(dir, 'crt.tmp'), cert);
        await rename(join(dir, 'key.tmp'), join(dir, 'client.key'));
        await rename(join(dir, 'crt.tmp'), join(dir, 'client.crt'));
      };
      await writePair('alice');
      const c = new Client({
        server: server.url,
        caData: loadKubeconfig(server.kubeconfigPath).caData!,
        certData: await readFile(join(dir, 'client.crt')),
        keyData: await readFile(join(dir, 'client.key')),
        certFile: join(dir, 'client.crt'),
        keyFile: join(dir, 'client.key'),
        qps: -1,
      });
      const whoami = async (): Promise<string> => {
        const res = await c.request({
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        });
        return (JSON.parse(res.body.toString()) as { status: { userInfo: { username: string } } }).status
          .userInfo.username;
      };
      try {
        expect(await whoami()).toBe('alice');
        await writePair('bob');
        expect(await whoami()).toBe('alice'); // within the 5 minutes: the pair in use
        const now = performance.now();
        clock.mockReturnValue(now + 5 * 60_000 + 1);
        // The request that notices goes out with the current pair; the files are read meanwhile.
        expect(await whoami()).toBe('alice');
        await vi.waitFor(async () => expect(await whoami()).toBe('bob'), { timeout: 5_000 });
      } finally {
        await c.close();
      }
    } finally {
      clock.mockRestore();
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('asks its token source for the bearer token on every request', async () => {
    const accounts = client.resource<ServiceAccount>(SERVICE_ACCOUNTS);
    await accounts.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'sourced', namespace: NS },
    });
    const answer = await accounts.createSubresource<TokenRequest>(
      'sourced',
      'token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec: { audiences: [] } },
      { namespace: NS },
    );
    let current = 'not-a-token';
    let asked = 0;
    const c = new Client({
      ...withIdentity(loadKubeconfig(server.kubeconfigPath), { token: 'unused' }),
      tokenSource: () => {
        asked++;
        return current;
      },
    });
    try {
      const err = await c
        .resource(NAMESPACES)
        .get(NS)
        .catch((e: unknown) => e);
      expect((err as ApiStatusError).code).toBe(401);
      current = answer.status?.token ?? '';
      // The next request carries the new token: no new client, no file.
      expect((await c.resource(NAMESPACES).get(NS)).metadata?.name).toBe(NS);
      expect(asked).toBe(2);
    } finally {
      await c.close();
    }
  });
  it('loads file certificates and token files from a kubeconfig, and in-cluster config', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'client-config-'));
    try {
      const base = loadKubeconfig(server.kubeconfigPath);
      await writeFile(join(dir, 'ca.crt'), base.caData ?? '');
      await writeFile(join(dir, 'client.crt'), base.certData ?? '');
      await writeFile(join(dir, 'client.key'), base.keyData ?? '');
      await writeFile(join(dir, 'token'), 'abc\n');
      const kc = [
        'apiVersion: v1',
        'kind: Config',
        'current-context: c',
        'contexts: [{name: c, context: {cluster: k, user: u}}, {name: t, context: {cluster: k, user: tok}}]',
        `clusters: [{name: k, cluster: {server: "${server.url}", certificate-authority: ca.crt}}]`,
        'users: [{name: u, user: {client-certificate: client.crt, client-key: client.key}}, {name: tok, user: {tokenFile: token}}]',
      ].join('\n');
      await writeFile(join(dir, 'kubeconfig'), kc);
      const fromFiles = new Client(loadKubeconfig(join(dir, 'kubeconfig')));
      try {
        expect((await fromFiles.resource(NAMESPACES).get(NS)).metadata?.name).toBe(NS);
      } finally {
        await fromFiles.close();
      }
      const tok = loadKubeconfig(join(dir, 'kubeconfig'), { context: 't' });
      expect(tok.tokenFile).toBe(join(dir, 'token'));
      expect(tok.certData).toBeUndefined();
      const bad = new Client(tok);
      try {
        const err = await bad
          .resource(NAMESPACES)
          .get(NS)
          .catch((e: unknown) => e);
        expect((err as ApiStatusError).code).toBe(401);
      } finally {
        await bad.close();
      }
      const inCluster = inClusterConfig({
        env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
        dir,
      });
      expect(inCluster.server).toBe('https://10.0.0.1:443');
      expect(inCluster.tokenFile).toBe(join(dir, 'token'));
      expect(() => inClusterConfig({ env: {}, dir })).toThrow(/KUBERNETES_SERVICE_HOST/);
      const swapped = withIdentity(base, { token: 'x' });
      expect(swapped.certData).toBeUndefined();
      expect(swapped.token).toBe('x');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
