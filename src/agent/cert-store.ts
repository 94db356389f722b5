/**
 * The agent's certificate files and CertificateSigningRequests, as kubelet keeps them in
 * `--cert-dir` (client-go's file store): a pair `<name>-<timestamp>.pem` (certificate then key,
 * mode 0600) and the symlink `<name>-current.pem` that points at the pair in use, swapped
 * atomically; `<name>` is `kubelet-client` or `kubelet-server`.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CertificateSigningRequest } from '../api/types/certificates-v1.js';
import { CERTIFICATE_SIGNING_REQUESTS, isAlreadyExists, type Client } from '../client/index.js';

/** kubelet's pair names in `--cert-dir`. */
export type PairName = 'kubelet-client' | 'kubelet-server';

/** A certificate and its key, PEM. */
export interface CertPair {
  readonly cert: string;
  readonly key: string;
}

/** `<certDir>/<pair>-current.pem`. */
export function currentPairPath(certDir: string, pair: PairName): string {
  return join(certDir, `${pair}-current.pem`);
}

/** The first certificate of a PEM text is valid now (false when there is none or it fails to parse). */
export function certValid(pem: string | Buffer | undefined): boolean {
  if (pem === undefined) return false;
  try {
    const cert = new X509Certificate(pem);
    return Date.parse(cert.validTo) > Date.now() && Date.parse(cert.validFrom) <= Date.now() + 60_000;
  } catch {
    return false;
  }
}

/** The current pair when its file exists and holds a certificate and a key; undefined otherwise. */
export function loadCurrentPair(certDir: string, pair: PairName): CertPair | undefined {
  const path = currentPairPath(certDir, pair);
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, 'utf8');
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----\n?/g;
  const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----\n?/.exec(text);
  const certs = text.match(cert);
  if (!certs || !key) return undefined;
  return { cert: certs.join(''), key: key[0] };
}

function stamp(d: Date): string {
  return d.toISOString().slice(0, 19).replace('T', '-').replace(/:/g, '-');
}

/**
 * Writes a new pair file and points `<pair>-current.pem` at it (a rename, so readers see the
 * old pair or the new one). Older pair files are kept, as kubelet keeps them.
 * @returns the current pair's path.
 */
export async function storePair(
  certDir: string,
  pair: PairName,
  certPem: string,
  keyPem: string,
): Promise<string> {
  await mkdir(certDir, { recursive: true });
  const current = currentPairPath(certDir, pair);
  let file = join(certDir, `${pair}-${stamp(new Date())}.pem`);
  // Two rotations within a second (a retry) must not overwrite the pair in use.
  for (let i = 1; existsSync(file); i++) file = join(certDir, `${pair}-${stamp(new Date())}.${i}.pem`);
  await writeFile(file, `${certPem.trimEnd()}\n${keyPem.trimEnd()}\n`, { mode: 0o600 });
  await unlink(`${current}.tmp`).catch(() => undefined);
  await symlink(file, `${current}.tmp`);
  await rename(`${current}.tmp`, current);
  return current;
}

/** What a CertificateSigningRequest asks for. */
export interface SigningRequest {
  /** A fixed name (the bootstrap's `node-csr-…`); absent: `generateName: csr-`, as kubelet's rotations. */
  readonly name?: string;
  /** The PKCS#10 request, PEM. */
  readonly request: string;
  readonly signerName: string;
  readonly usages: readonly string[];
}

/**
 * Creates the request; an existing request of the same fixed name (a restart with the same
 * key) is reused. @returns its name.
 */
export async function createSigningRequest(client: Client, req: SigningRequest): Promise<string> {
  const csrs = client.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
  const body: CertificateSigningRequest = {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: req.name === undefined ? { generateName: 'csr-' } : { name: req.name },
    spec: {
      request: Buffer.from(req.request).toString('base64'),
      signerName: req.signerName,
      usages: [...req.usages],
    },
  };
  try {
    return (await csrs.create(body)).metadata.name ?? '';
  } catch (err) {
    if (req.name !== undefined && isAlreadyExists(err)) return req.name;
    throw err;
  }
}

/** Waits for the request's certificate. @throws Error when denied, failed or late. */
export async function waitForCertificate(client: Client, name: string, timeoutMs: number): Promise<string> {
  const csrs = client.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const csr = await csrs.get(name);
    const bad = csr.status?.conditions?.find(
      (c) => (c.type === 'Denied' || c.type === 'Failed') && c.status !== 'False',
    );
    if (bad)
      throw new Error(
        `certificate request ${name} was ${(bad.type ?? '').toLowerCase()}: ${bad.reason ?? ''} ${bad.message ?? ''}`,
      );
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    if (Date.now() > deadline)
      throw new Error(`certificate request ${name} not signed within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
