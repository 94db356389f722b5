/**
 * `--cert-dir` as kube-apiserver uses it (issue 19): a serving pair already in
 * `apiserver.crt`/`apiserver.key` that Capstan did not issue (made here by openssl: self-signed,
 * and signed by a CA Capstan never sees, as envtest does) is served exactly as it is (same
 * certificate fingerprint on the wire) and the files are not modified; clients that trust the
 * foreign CA connect; the admin kubeconfig Capstan writes still works with kubectl and (for a
 * self-signed pair) client-node.
 */
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startTestServer, type TestServer } from '../support/server.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'capstan-certdir-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function openssl(args: readonly string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

const SAN = 'subjectAltName=IP:127.0.0.1,DNS:localhost';

/** A self-signed serving pair in `dir`. */
function selfSigned(dir: string): void {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'apiserver.key',
      '-out',
      'apiserver.crt',
      '-days',
      '30',
      '-subj',
      '/CN=foreign-self-signed',
      '-addext',
      SAN,
    ],
    dir,
  );
}

/** A serving pair in `dir` signed by a CA kept in `caDir` (not in `dir`), as envtest does. */
function foreignCa(dir: string, caDir: string): void {
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '30',
      '-subj',
      '/CN=envtest-like-ca',
    ],
    caDir,
  );
  openssl(
    [
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      join(dir, 'apiserver.key'),
      '-out',
      'serving.csr',
      '-subj',
      '/CN=envtest-like-serving',
    ],
    caDir,
  );
  writeFileSync(join(caDir, 'ext.cnf'), `${SAN}\nextendedKeyUsage=serverAuth\n`);
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'serving.csr',
      '-CA',
      'ca.crt',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      join(dir, 'apiserver.crt'),
      '-days',
      '30',
      '-extfile',
      'ext.cnf',
    ],
    caDir,
  );
}

async function digest(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

/** The fingerprint of the certificate the server presents, trusting `ca`. */
function servedFingerprint(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (cert === undefined) reject(new Error('no peer certificate'));
      else resolve(cert.fingerprint256);
    });
    socket.on('error', reject);
  });
}

async function startWith(certDir: string): Promise<TestServer> {
  return startTestServer({ certDir });
}

describe('--cert-dir with a serving pair Capstan did not issue', () => {
  it('a self-signed pair is served unchanged; the admin kubeconfig works (kubectl, client-node)', async () => {
    const certDir = join(root, 'self');
    mkdirSync(certDir);
    selfSigned(certDir);
    const before = [
      await digest(join(certDir, 'apiserver.crt')),
      await digest(join(certDir, 'apiserver.key')),
    ];
    const pem = await readFile(join(certDir, 'apiserver.crt'), 'utf8');
    const expected = new X509Certificate(pem).fingerprint256;
    const server = await startWith(certDir);
    try {
      expect(await servedFingerprint(server.url, pem)).toBe(expected);
      const res = await runKubectl('1.33', ['get', 'namespaces', '-o', 'name'], server.kubeconfigPath);
      expect(res.stderr).toBe('');
      expect(res.stdout).toContain('namespace/default');
      const core = server.kubeConfig.makeApiClient(k8s.CoreV1Api);
      const list = await core.listNamespace();
      expect(list.items.map((n) => n.metadata?.name)).toContain('default');
    } finally {
      await server.close();
    }
    expect([
      await digest(join(certDir, 'apiserver.crt')),
      await digest(join(certDir, 'apiserver.key')),
    ]).toEqual(before);
    // And again after a restart: still the same pair.
    const again = await startWith(certDir);
    try {
      expect(await servedFingerprint(again.url, pem)).toBe(expected);
    } finally {
      await again.close();
    }
  });

  it('a pair signed by a foreign CA is served unchanged; clients trusting that CA connect', async () => {
    const certDir = join(root, 'envtest');
    const caDir = join(root, 'envtest-ca');
    mkdirSync(certDir);
    mkdirSync(caDir);
    foreignCa(certDir, caDir);
    // A tool's own CA certificate beside the pair (no key): left as it is too.
    copyFileSync(join(caDir, 'ca.crt'), join(certDir, 'ca.crt'));
    const before = [
      await digest(join(certDir, 'apiserver.crt')),
      await digest(join(certDir, 'apiserver.key')),
      await digest(join(certDir, 'ca.crt')),
    ];
    const caPem = await readFile(join(caDir, 'ca.crt'), 'utf8');
    const expected = new X509Certificate(await readFile(join(certDir, 'apiserver.crt'), 'utf8'))
      .fingerprint256;
    const server = await startWith(certDir);
    try {
      // What envtest's client does: trust its own CA.
      expect(await servedFingerprint(server.url, caPem)).toBe(expected);
      // kubectl (Go) with Capstan's admin kubeconfig, which can only carry the certificate itself.
      const res = await runKubectl('1.33', ['get', 'namespaces', '-o', 'name'], server.kubeconfigPath);
      expect(res.stderr).toBe('');
      expect(res.stdout).toContain('namespace/default');
      // A kubeconfig that trusts the foreign CA and uses Capstan's admin client certificate.
      const kc = new k8s.KubeConfig();
      kc.loadFromFile(server.kubeconfigPath);
      const cluster = kc.getCurrentCluster();
      if (cluster === null) throw new Error('no cluster in the admin kubeconfig');
      const user = kc.getCurrentUser();
      const trusting = new k8s.KubeConfig();
      trusting.loadFromOptions({
        clusters: [{ ...cluster, caData: Buffer.from(caPem).toString('base64'), caFile: undefined }],
        users: user === null ? [] : [user],
        contexts: [{ name: 'c', cluster: cluster.name, user: user?.name ?? '' }],
        currentContext: 'c',
      });
      const list = await trusting.makeApiClient(k8s.CoreV1Api).listNamespace();
      expect(list.items.map((n) => n.metadata?.name)).toContain('default');
    } finally {
      await server.close();
    }
    expect([
      await digest(join(certDir, 'apiserver.crt')),
      await digest(join(certDir, 'apiserver.key')),
      await digest(join(certDir, 'ca.crt')),
    ]).toEqual(before);
  });

  it('a missing pair is still generated, and reused on restart', async () => {
    const certDir = join(root, 'fresh');
    const first = await startWith(certDir);
    const fp = new X509Certificate(await readFile(join(certDir, 'apiserver.crt'), 'utf8')).fingerprint256;
    await first.close();
    const second = await startWith(certDir);
    try {
      const ca = await readFile(join(certDir, 'ca.crt'), 'utf8');
      expect(await servedFingerprint(second.url, ca)).toBe(fp);
    } finally {
      await second.close();
    }
  });
});
