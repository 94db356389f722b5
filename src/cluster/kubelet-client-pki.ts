/**
 * The API server's client certificate for the node agent in `capstan cluster`, laid out as
 * kubeadm does: `<cert-dir>/apiserver-kubelet-client.crt`/`.key`, `CN=kube-apiserver-kubelet-client`,
 * signed by the cluster CA, which the agent trusts as its `--client-ca-file`. The server gets
 * them as `--kubelet-client-certificate`/`--kubelet-client-key`; the agent authorizes its
 * requests through SubjectAccessReviews. The certificate is in `system:masters`, as kubeadm
 * issued it before v1.29 (later kubeadm uses its own `kubeadm:cluster-admins` group, bound to
 * cluster-admin, which Capstan's bootstrap policy does not create).
 *
 * The pair is reused while it verifies against the CA and has more than a day left.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../pki/certificate.js';
import { ensureServerPki } from '../pki/server-pki.js';
import type { ServerOptions } from '../server/options.js';
import { serverPkiOptions } from '../server/server.js';

/** kubeadm's name for the API server's identity towards kubelets. */
export const KUBELET_CLIENT_USER = 'kube-apiserver-kubelet-client';
const DAY_MS = 24 * 3600 * 1000;

/** The files the server and the agent are started with. */
export interface KubeletClientFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** The cluster CA, for the agent's `--client-ca-file`. */
  readonly clientCAFile: string;
}

function reusable(certFile: string, keyFile: string, ca: X509Certificate): boolean {
  if (!existsSync(certFile) || !existsSync(keyFile)) return false;
  try {
    const cert = new X509Certificate(readFileSync(certFile));
    return (
      cert.verify(ca.publicKey) &&
      cert.checkPrivateKey(createPrivateKey(readFileSync(keyFile))) &&
      Date.parse(cert.validTo) - Date.now() > DAY_MS
    );
  } catch {
    return false;
  }
}

/**
 * Makes sure the server's PKI exists (the server reuses it when it starts) and issues the
 * kubelet client pair when needed; writes the CA to `clientCAFile` for the agent.
 * @throws PkiError for unusable certificate files (as the server would).
 */
export async function ensureKubeletClientPki(
  options: ServerOptions,
  clientCAFile: string,
): Promise<KubeletClientFiles> {
  const pki = await ensureServerPki(serverPkiOptions(options));
  const certFile = join(options.certDir, 'apiserver-kubelet-client.crt');
  const keyFile = join(options.certDir, 'apiserver-kubelet-client.key');
  const ca = new X509Certificate(pki.ca.certPem);
  if (!reusable(certFile, keyFile, ca)) {
    const caKey = createPrivateKey(pki.ca.keyPem);
    const keys = await generateKeyPair();
    const now = Date.now();
    const certPem = issueCertificate({
      subject: { commonName: KUBELET_CLIENT_USER, organizations: ['system:masters'] },
      publicKey: keys.publicKey,
      issuer: { subjectDer: subjectDerOf(ca.raw), privateKey: caKey, publicKey: createPublicKey(caKey) },
      usage: 'client',
      notBefore: new Date(now - 5 * 60_000),
      notAfter: new Date(Math.min(now + 365 * DAY_MS, Date.parse(ca.validTo))),
    });
    await writeFile(keyFile, privateKeyPem(keys.privateKey), { mode: 0o600 });
    await writeFile(certFile, certPem, { mode: 0o644 });
  }
  await mkdir(dirname(clientCAFile), { recursive: true });
  await writeFile(clientCAFile, pki.ca.certPem, { mode: 0o644 });
  return { certFile, keyFile, clientCAFile };
}
