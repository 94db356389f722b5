/**
 * The agent's serving certificate: `--tls-cert-file`/`--tls-private-key-file` when given, else,
 * as kubelet does, a self-signed CA and a certificate it signs for the node's name and IP,
 * written once to `<cert-dir>/kubelet.crt` (the certificate then the CA) and `kubelet.key`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../pki/certificate.js';

/** Loads or makes the serving certificate and key (PEM). */
export async function servingCertificate(opts: {
  certFile: string;
  keyFile: string;
  certDir: string;
  nodeName: string;
  nodeIP: string;
}): Promise<{ cert: string; key: string }> {
  if (opts.certFile && opts.keyFile)
    return { cert: readFileSync(opts.certFile, 'utf8'), key: readFileSync(opts.keyFile, 'utf8') };
  const certPath = join(opts.certDir, 'kubelet.crt');
  const keyPath = join(opts.certDir, 'kubelet.key');
  if (existsSync(certPath) && existsSync(keyPath))
    return { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') };
  const now = new Date();
  const notAfter = new Date(now.getTime() + 365 * 24 * 3600 * 1000);
  const ca = await generateKeyPair();
  const caPem = issueCertificate({
    subject: { commonName: `${opts.nodeName}-ca@${Math.floor(now.getTime() / 1000)}` },
    publicKey: ca.publicKey,
    selfSigningKey: ca.privateKey,
    usage: 'ca',
    notBefore: now,
    notAfter,
  });
  const caDer = Buffer.from(caPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const leaf = await generateKeyPair();
  const leafPem = issueCertificate({
    subject: { commonName: `${opts.nodeName}@${Math.floor(now.getTime() / 1000)}` },
    publicKey: leaf.publicKey,
    issuer: { subjectDer: subjectDerOf(caDer), privateKey: ca.privateKey, publicKey: ca.publicKey },
    usage: 'server',
    notBefore: now,
    notAfter,
    dnsNames: [opts.nodeName],
    ipAddresses: [opts.nodeIP],
  });
  const cert = `${leafPem}${caPem}`;
  const key = privateKeyPem(leaf.privateKey);
  await mkdir(opts.certDir, { recursive: true });
  await writeFile(certPath, cert, { mode: 0o644 });
  await writeFile(keyPath, key, { mode: 0o600 });
  return { cert, key };
}
