/**
 * Authorization overhead: GET and create throughput of a regular user (client certificate, not
 * system:masters) at 100 concurrent clients, on a server with `--authorization-mode=Node,RBAC`
 * holding 1,000 extra Roles and 1,000 RoleBindings, against the same load on an `AlwaysAllow`
 * server in the same run. Phases alternate (AlwaysAllow, RBAC, AlwaysAllow, RBAC) so drift on a
 * shared machine hits both; each server runs in this process on an in-memory store.
 *
 *   npm run build && node dist/tools/bench-authz.js [--seconds 3] [--clients 100]
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openMemoryStore } from '../storage/mvcc/index.js';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../src/pki/certificate.js';
import { ServerLog } from '../src/server/log.js';
import { parseServerArgs, type ServerOptions } from '../src/server/options.js';
import { startServer, type RunningServer } from '../src/server/server.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const SECONDS = arg('seconds', 3);
const CLIENTS = arg('clients', 100);
const SESSIONS = 10;
const EXTRA = 1_000;

interface Tls {
  ca: string;
  cert: string;
  key: string;
}

async function start(modes: string): Promise<{ server: RunningServer; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-bench-authz-'));
  const parsed = parseServerArgs([
    '--secure-port=0',
    '--bind-address=127.0.0.1',
    `--data-dir=${dir}`,
    `--authorization-mode=${modes}`,
  ]) as { options: ServerOptions };
  const server = await startServer(parsed.options, {
    store: await openMemoryStore(),
    log: new ServerLog(() => undefined),
  });
  return { server, dir };
}

async function userTls(server: RunningServer, user: string): Promise<Tls> {
  const privateKey = createPrivateKey(server.pki.ca.keyPem);
  const keys = await generateKeyPair();
  const now = Date.now();
  const cert = issueCertificate({
    subject: { commonName: user, organizations: ['bench'] },
    publicKey: keys.publicKey,
    issuer: {
      subjectDer: subjectDerOf(new X509Certificate(server.pki.ca.certPem).raw),
      privateKey,
      publicKey: createPublicKey(privateKey),
    },
    usage: 'client',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
  });
  return { ca: server.pki.servingTrustPem, cert, key: privateKeyPem(keys.privateKey) };
}

function send(session: ClientHttp2Session, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = session.request({
      ':method': method,
      ':path': path,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    });
    let status = 0;
    s.on('response', (h) => (status = Number(h[':status'])));
    s.on('data', () => undefined);
    s.on('end', () => resolve(status));
    s.on('error', reject);
    s.end(body);
  });
}

async function must(p: Promise<number>, want: number): Promise<void> {
  const got = await p;
  if (got !== want) throw new Error(`setup request answered ${got}, want ${want}`);
}

async function prepare(server: RunningServer, rbac: boolean): Promise<ClientHttp2Session[]> {
  const adminTls = {
    ca: server.pki.servingTrustPem,
    cert: server.pki.admin.certPem,
    key: server.pki.admin.keyPem,
  };
  const admin = connect(server.url, adminTls);
  await must(
    send(
      admin,
      'POST',
      '/api/v1/namespaces',
      JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }),
    ),
    201,
  );
  for (let i = 0; i < 100; i++) {
    await must(
      send(
        admin,
        'POST',
        '/api/v1/namespaces/bench/configmaps',
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${i}` },
          data: { k: 'v' },
        }),
      ),
      201,
    );
  }
  if (rbac) {
    const R = '/apis/rbac.authorization.k8s.io/v1/namespaces/bench';
    for (let i = 0; i < EXTRA; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const n = i + j;
          await must(
            send(
              admin,
              'POST',
              `${R}/roles`,
              JSON.stringify({
                apiVersion: 'rbac.authorization.k8s.io/v1',
                kind: 'Role',
                metadata: { name: `r${n}` },
                rules: [
                  { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: [`x${n}`] },
                ],
              }),
            ),
            201,
          );
          await must(
            send(
              admin,
              'POST',
              `${R}/rolebindings`,
              JSON.stringify({
                apiVersion: 'rbac.authorization.k8s.io/v1',
                kind: 'RoleBinding',
                metadata: { name: `b${n}` },
                roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `r${n}` },
                subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: `u${n}` }],
              }),
            ),
            201,
          );
        }),
      );
    }
    await must(
      send(
        admin,
        'POST',
        `${R}/rolebindings`,
        JSON.stringify({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'bench-edit' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
          subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'bench' }],
        }),
      ),
      201,
    );
  }
  admin.close();
  const tls = await userTls(server, 'loader');
  const sessions = Array.from({ length: SESSIONS }, () => {
    const s = connect(server.url, tls);
    s.on('error', () => undefined);
    return s;
  });
  // Wait until the user is allowed (the RBAC index has the binding, the bootstrap is done).
  for (let i = 0; ; i++) {
    if (
      (await send(sessions[0] as ClientHttp2Session, 'GET', '/api/v1/namespaces/bench/configmaps/cm-0')) ===
      200
    )
      break;
    if (i > 400) throw new Error('the load user never became allowed');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return sessions;
}

async function phase(sessions: ClientHttp2Session[], kind: 'get' | 'create'): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const s = sessions[c % sessions.length] as ClientHttp2Session;
      let i = c;
      while (Date.now() < end) {
        const status =
          kind === 'get'
            ? await send(s, 'GET', `/api/v1/namespaces/bench/configmaps/cm-${i++ % 100}`)
            : await send(
                s,
                'POST',
                '/api/v1/namespaces/bench/configmaps',
                JSON.stringify({
                  apiVersion: 'v1',
                  kind: 'ConfigMap',
                  metadata: { generateName: 'load-' },
                  data: { k: 'v' },
                }),
              );
        if (status === (kind === 'get' ? 200 : 201)) done++;
        else failed++;
      }
    }),
  );
  if (failed > 0) throw new Error(`${failed} ${kind} requests failed`);
  return done / SECONDS;
}

async function main(): Promise<void> {
  const allow = await start('AlwaysAllow');
  const rbac = await start('Node,RBAC');
  try {
    const allowSessions = await prepare(allow.server, false);
    const rbacSessions = await prepare(rbac.server, true);
    const results: Record<string, number[]> = {
      'get AlwaysAllow': [],
      'get RBAC': [],
      'create AlwaysAllow': [],
      'create RBAC': [],
    };
    // Warm both servers (JIT, watch caches) before measuring.
    for (const kind of ['get', 'create'] as const) {
      await phase(allowSessions, kind);
      await phase(rbacSessions, kind);
    }
    for (const kind of ['get', 'create'] as const) {
      for (let round = 0; round < 2; round++) {
        results[`${kind} AlwaysAllow`]?.push(await phase(allowSessions, kind));
        results[`${kind} RBAC`]?.push(await phase(rbacSessions, kind));
      }
    }
    const mean = (xs: number[] | undefined): number =>
      (xs ?? []).reduce((a, b) => a + b, 0) / Math.max(1, (xs ?? []).length);
    console.log(
      `clients ${CLIENTS}, ${SECONDS}s phases, RBAC server with ${EXTRA} extra Roles and RoleBindings`,
    );
    for (const kind of ['get', 'create']) {
      const a = mean(results[`${kind} AlwaysAllow`]);
      const r = mean(results[`${kind} RBAC`]);
      console.log(
        `${kind.padEnd(6)} AlwaysAllow ${a.toFixed(0)}/s  Node,RBAC ${r.toFixed(0)}/s  ratio ${((100 * r) / a).toFixed(1)}%`,
      );
    }
    for (const s of [...allowSessions, ...rbacSessions]) s.close();
  } finally {
    await allow.server.shutdown();
    await rbac.server.shutdown();
    rmSync(allow.dir, { recursive: true, force: true });
    rmSync(rbac.dir, { recursive: true, force: true });
  }
}

await main();
