/**
 * A signing CA and kube's signing policy for CertificateSigningRequests: the certificate keeps
 * the request's subject, subject alternative names and public key, takes the requested usages,
 * is backdated 5 minutes (only its start when it lives under 8 hours), lives the cluster
 * signing duration or the shorter `spec.expirationSeconds` (never under 10 minutes), and never
 * outlives the CA.
 */
import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { issueCertificate, subjectDerOf, type CertKeyPair, type Issuer } from '../../pki/certificate.js';
import type { ParsedCsr } from '../../pki/csr.js';
import { keyUsagesOf } from './usages.js';

const MINUTE_MS = 60_000;
const BACKDATE_MS = 5 * MINUTE_MS;
/** Certificates shorter than this are not backdated at the end (5 minutes is ~1 % of 8 h). */
const SHORT_MS = 8 * 60 * MINUTE_MS;
/** The shortest lifetime granted, whatever `spec.expirationSeconds` asks (2 × the backdate). */
export const MIN_DURATION_MS = 10 * MINUTE_MS;

/** A CA that issues certificates for requests. */
export class Authority {
  readonly #issuer: Issuer;
  readonly #notAfter: Date;

  /** @throws Error when the certificate or key does not parse or they do not match. */
  constructor(pair: CertKeyPair) {
    const cert = new X509Certificate(pair.certPem);
    const privateKey = createPrivateKey(pair.keyPem);
    if (!cert.checkPrivateKey(privateKey)) throw new Error('the CA key does not match its certificate');
    this.#issuer = { subjectDer: subjectDerOf(cert.raw), privateKey, publicKey: createPublicKey(privateKey) };
    this.#notAfter = new Date(cert.validTo);
  }

  /**
   * Loads the CA from PEM files (the first certificate of the certificate file).
   * @throws Error naming the file that cannot be read or used.
   */
  static async fromFiles(certFile: string, keyFile: string): Promise<Authority> {
    if (certFile === '' || keyFile === '') throw new Error('both a certificate and a key file are required');
    const read = async (file: string, what: string): Promise<string> => {
      try {
        return await readFile(file, 'utf8');
      } catch (err) {
        throw new Error(`error reading CA ${what} file "${file}": ${(err as Error).message}`, { cause: err });
      }
    };
    const certPem = await read(certFile, 'cert');
    const keyPem = await read(keyFile, 'key');
    const first = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(certPem)?.[0];
    if (first === undefined) throw new Error(`error reading CA cert file "${certFile}": no certificate`);
    return new Authority({ certPem: `${first}\n`, keyPem });
  }

  /**
   * The certificate's lifetime: `certTtlMs`, or `expirationSeconds` when shorter, never under
   * {@link MIN_DURATION_MS}.
   */
  static duration(certTtlMs: number, expirationSeconds: number | undefined): number {
    if (expirationSeconds === undefined) return certTtlMs;
    const requested = expirationSeconds * 1000;
    if (requested > certTtlMs) return certTtlMs;
    return Math.max(requested, MIN_DURATION_MS);
  }

  /**
   * Issues the PEM certificate for a parsed request.
   * @throws UsageError for a usage kube does not know; Error when the CA has expired.
   */
  sign(csr: ParsedCsr, usages: readonly string[], ttlMs: number, now: Date): string {
    const keyUsages = keyUsagesOf(usages);
    const notBefore = new Date(now.getTime() - BACKDATE_MS);
    let notAfter = new Date((ttlMs < SHORT_MS ? now.getTime() : notBefore.getTime()) + ttlMs);
    const stamp = this.#notAfter.toISOString();
    if (notAfter.getTime() >= this.#notAfter.getTime()) notAfter = this.#notAfter;
    if (notBefore.getTime() >= this.#notAfter.getTime())
      throw new Error(`the signer has expired: NotAfter=${stamp}`);
    if (now.getTime() >= this.#notAfter.getTime()) {
      throw new Error(`refusing to sign a certificate that expired in the past: NotAfter=${stamp}`);
    }
    return issueCertificate({
      subject: { commonName: csr.subject.commonName },
      subjectDer: csr.subjectDer,
      publicKey: csr.publicKey,
      issuer: this.#issuer,
      usage: keyUsages,
      notBefore,
      notAfter,
      dnsNames: csr.dnsNames,
      emailAddresses: csr.emailAddresses,
      ipAddresses: csr.ipAddresses,
      uris: csr.uris,
    });
  }
}
