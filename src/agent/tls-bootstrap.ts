/**
 * TLS bootstrap of the agent's client certificate, as kubelet does it with
 * `--bootstrap-kubeconfig` (pkg/kubelet/certificate/bootstrap):
 *
 * 1. A `--kubeconfig` that loads and whose client certificate (if any) has not expired is used
 *    as is.
 * 2. Else a valid `<cert-dir>/kubelet-client-current.pem` (certificate and key) is used: the
 *    kubeconfig is written to point at it.
 * 3. Else, with the bootstrap kubeconfig's credentials (a bootstrap token): an ECDSA P-256 key,
 *    kept in `<cert-dir>/kubelet-client.key.tmp` until done (so a restart reuses the request), a
 *    CertificateSigningRequest named `node-csr-<digest of key and subject>` for
 *    `CN=system:node:<node>, O=system:nodes`, signer
 *    `kubernetes.io/kube-apiserver-client-kubelet`, usages digital signature and client auth;
 *    then the wait for its certificate (approved by the controller manager's csrapproving, signed
 *    by csrsigning). A Denied or Failed request is an error with the server's reason.
 * 4. The certificate and key go to `<cert-dir>/kubelet-client-<timestamp>.pem` (mode 0600), the
 *    symlink `kubelet-client-current.pem` points at it, and the kubeconfig names that symlink
 *    for both certificate and key, with the bootstrap kubeconfig's server and CA.
 */
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Client, loadKubeconfig } from '../client/index.js';
import {
  certValid,
  createSigningRequest,
  currentPairPath,
  storePair,
  waitForCertificate,
} from './cert-store.js';
import { generateKeyPair, privateKeyPem } from '../pki/certificate.js';
import { createCsr } from '../pki/csr.js';
import { readKubeconfigCredentials } from '../pki/kubeconfig-credentials.js';

/** What the bootstrap needs. */
export interface TlsBootstrapOptions {
  /** Where the agent's kubeconfig is (read, or written). */
  readonly kubeconfig: string;
  readonly bootstrapKubeconfig: string;
  readonly certDir: string;
  readonly nodeName: string;
  /** How long to wait for the certificate (kubelet: 15 min). */
  readonly timeoutMs?: number;
}

/** The User-Agent of the agent's API clients. */
export const AGENT_USER_AGENT = 'capstan-agent/v1.33 (linux)';

/**
 * A client with the bootstrap kubeconfig's credentials (a bootstrap token): for the first client
 * certificate, and again when the one in use has expired (cert-manager.ts). Close it after use.
 */
export function bootstrapClient(bootstrapKubeconfig: string): Client {
  return new Client({ ...loadKubeconfig(bootstrapKubeconfig), userAgent: AGENT_USER_AGENT });
}

/** kubelet's signer for its client certificate. */
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
/** kubelet's usages for its client certificate (an ECDSA key). */
export const CLIENT_USAGES = ['digital signature', 'client auth'];
const KEY_TMP = 'kubelet-client.key.tmp';

function kubeconfigUsable(path: string): boolean {
  if (!existsSync(path)) return false;
  try {
    const c = loadKubeconfig(path);
    return c.certData === undefined || certValid(c.certData);
  } catch {
    return false;
  }
}

/** The request's name: kubelet's digest of the public key, the subject and the usages. */
function requestName(spkiDer: Buffer, commonName: string, organization: string): string {
  const h = createHash('sha512');
  for (const part of [spkiDer, commonName, organization, ...CLIENT_USAGES]) {
    h.update(part);
    h.update('\0');
  }
  return `node-csr-${h.digest('base64url').slice(0, 43)}`;
}

async function writeKubeconfig(path: string, server: string, caPem: string | undefined, certFile: string) {
  const q = JSON.stringify;
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: default-cluster',
    '  cluster:',
    `    server: ${q(server)}`,
    ...(caPem ? [`    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`] : []),
    'contexts:',
    '- name: default-context',
    '  context: {cluster: default-cluster, namespace: default, user: default-auth}',
    'current-context: default-context',
    'users:',
    '- name: default-auth',
    '  user:',
    `    client-certificate: ${q(certFile)}`,
    `    client-key: ${q(certFile)}`,
    '',
  ].join('\n');
  await mkdir(dirname(path), { recursive: true });
  await writeFile(`${path}.tmp`, text, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

/**
 * Makes sure `opts.kubeconfig` holds a usable client identity (see the module comment).
 * @throws Error naming what failed (the bootstrap kubeconfig, the request, the wait).
 */
export async function bootstrapClientCertificate(opts: TlsBootstrapOptions): Promise<void> {
  if (kubeconfigUsable(opts.kubeconfig)) return;
  const boot = readKubeconfigCredentials(opts.bootstrapKubeconfig);
  const current = currentPairPath(opts.certDir, 'kubelet-client');
  if (existsSync(current) && certValid(readFileSync(current))) {
    await writeKubeconfig(opts.kubeconfig, boot.server, boot.ca, current);
    return;
  }
  await mkdir(opts.certDir, { recursive: true });
  const keyPath = join(opts.certDir, KEY_TMP);
  let keyPem: string;
  if (existsSync(keyPath)) keyPem = readFileSync(keyPath, 'utf8');
  else {
    keyPem = privateKeyPem((await generateKeyPair()).privateKey);
    await writeFile(keyPath, keyPem, { mode: 0o600 });
  }
  const privateKey = createPrivateKey(keyPem);
  const publicKey = createPublicKey(privateKey);
  const commonName = `system:node:${opts.nodeName}`;
  const request = createCsr({ commonName, organizations: ['system:nodes'] }, publicKey, privateKey);
  const name = requestName(publicKey.export({ format: 'der', type: 'spki' }), commonName, 'system:nodes');
  const client = bootstrapClient(opts.bootstrapKubeconfig);
  let certPem: string;
  try {
    // A restart with the same key makes the same request (the name is the key's digest).
    await createSigningRequest(client, {
      name,
      request,
      signerName: KUBELET_CLIENT_SIGNER,
      usages: CLIENT_USAGES,
    });
    console.log(`agent: waiting for the client certificate (certificate signing request ${name})`);
    certPem = await waitForCertificate(client, name, opts.timeoutMs ?? 15 * 60_000);
  } finally {
    await client.close();
  }
  await storePair(opts.certDir, 'kubelet-client', certPem, keyPem);
  await writeKubeconfig(opts.kubeconfig, boot.server, boot.ca, current);
  await rm(keyPath, { force: true });
}
