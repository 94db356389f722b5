/**
 * Users for tests: client certificates for any user and groups, minted with the test server's
 * cluster CA, and a wait for readiness (the RBAC bootstrap policy, when RBAC is on).
 */
import { createPublicKey, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  generateKeyPair,
  issueCertificate,
  privateKeyPem,
  subjectDerOf,
  type Issuer,
} from '../../src/pki/certificate.js';
import { adminFetch, adminTls, type AdminTls, type TestServer } from './server.js';

/** The cluster CA of `server` as an issuer. */
export async function clusterIssuer(server: TestServer): Promise<Issuer> {
  const certPem = await readFile(join(server.certDir, 'ca.crt'), 'utf8');
  const keyPem = await readFile(join(server.certDir, 'ca.key'), 'utf8');
  const privateKey = createPrivateKey(keyPem);
  return {
    subjectDer: subjectDerOf(new X509Certificate(certPem).raw),
    privateKey,
    publicKey: createPublicKey(privateKey),
  };
}

/** TLS credentials of `user` in `groups`, signed by `issuer`. */
export async function clientTls(
  server: TestServer,
  issuer: Issuer,
  user: string,
  groups: readonly string[] = [],
): Promise<Required<AdminTls>> {
  const keys = await generateKeyPair();
  const now = Date.now();
  const cert = issueCertificate({
    subject: { commonName: user, organizations: groups },
    publicKey: keys.publicKey,
    issuer,
    usage: 'client',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
  });
  return { ca: adminTls(server.kubeconfigPath).ca, cert, key: privateKeyPem(keys.privateKey) };
}

/** Waits until `/readyz` answers 200 (the RBAC bootstrap is done). */
export async function waitReady(server: TestServer, timeoutMs = 20_000): Promise<void> {
  const tls = adminTls(server.kubeconfigPath);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await adminFetch(`${server.url}/readyz`, tls);
    if (r.status === 200) return;
    if (Date.now() > deadline) throw new Error(`readyz never became ready: ${r.body}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** TLS credentials of `user` in `groups`, signed by the cluster CA of `server`. */
export async function userTls(
  server: TestServer,
  user: string,
  groups: readonly string[] = [],
): Promise<Required<AdminTls>> {
  return clientTls(server, await clusterIssuer(server), user, groups);
}
