/**
 * Certificate rotation, as kubelet's certificate managers do it (client-go
 * `util/certificate`): kubelet's client certificate with `rotateCertificates`
 * (`--rotate-certificates`) and its serving certificate with `serverTLSBootstrap`
 * (`--rotate-server-certificates`).
 *
 * - The pair in use is `<cert-dir>/<pair>-current.pem` (see cert-store.ts).
 * - The next rotation is due at a jittered 70–90 % of the certificate's lifetime, from its
 *   NotBefore; with no usable certificate (the serving pair before its first request) it is due now.
 * - A rotation makes a new ECDSA P-256 key, a CertificateSigningRequest (`generateName: csr-`)
 *   for `CN=system:node:<node>, O=system:nodes` with the signer, usages and names given, waits
 *   for its certificate (up to 15 minutes), stores the pair, swaps the symlink and tells the owner.
 * - A failed rotation is retried after 2 s, doubling to 32 s (kubelet's backoff), and logged.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import type { Client } from '../client/index.js';
import { generateKeyPair, privateKeyPem } from '../pki/certificate.js';
import { createCsr, type RequestedNames } from '../pki/csr.js';
import {
  certValid,
  createSigningRequest,
  loadCurrentPair,
  storePair,
  waitForCertificate,
  type CertPair,
  type PairName,
} from './cert-store.js';

/** kubelet's signer and usages for its serving certificate (an ECDSA key). */
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const SERVING_USAGES = ['digital signature', 'server auth'];

/** What a manager rotates, and for whom. */
export interface CertificateManagerOptions {
  readonly certDir: string;
  readonly pair: PairName;
  readonly nodeName: string;
  readonly signerName: string;
  readonly usages: readonly string[];
  /** The client requests are made with (for the client pair: the identity being rotated). */
  readonly client: Client;
  /** The subject alternative names to request (the serving certificate's node addresses). */
  readonly names?: () => RequestedNames;
  /** Called with the new pair once it is stored and current. */
  readonly rotated: (pair: CertPair) => void;
  /** How long to wait for a certificate (kubelet: 15 minutes). */
  readonly waitTimeoutMs?: number;
}

/** setTimeout's longest delay; longer waits are taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const FIRST_RETRY_MS = 2_000;
const MAX_RETRY_MS = 32_000;

/**
 * When a certificate valid from `notBefore` to `notAfter` is due for rotation: at 70 % of its
 * lifetime plus up to 20 % jitter (`random` in [0, 1)).
 */
export function rotationDeadline(notBefore: number, notAfter: number, random = Math.random()): number {
  const total = notAfter - notBefore;
  return notBefore + total * (0.7 + 0.2 * random);
}

/** One certificate pair kept current (see the module comment). */
export class CertificateManager {
  readonly #opts: CertificateManagerOptions;
  #current: CertPair | undefined;
  #deadline: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #retryMs = FIRST_RETRY_MS;
  #stopped = false;

  constructor(opts: CertificateManagerOptions) {
    this.#opts = opts;
    const stored = loadCurrentPair(opts.certDir, opts.pair);
    this.#current = stored && certValid(stored.cert) ? stored : undefined;
  }

  /** The pair in use; undefined before the first certificate was issued. */
  current(): CertPair | undefined {
    return this.#current;
  }

  /** When the next rotation is due (ms since the epoch); undefined before {@link start}. */
  nextRotationDeadline(): number | undefined {
    return this.#deadline;
  }

  /** Schedules the rotations. */
  start(): void {
    this.#schedule();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    if (this.#stopped) return;
    const cur = this.#current;
    if (cur === undefined) this.#deadline = Date.now();
    else {
      const cert = new X509Certificate(cur.cert);
      this.#deadline = rotationDeadline(Date.parse(cert.validFrom), Date.parse(cert.validTo));
    }
    this.#wait(this.#deadline - Date.now());
  }

  #wait(ms: number): void {
    clearTimeout(this.#timer);
    if (this.#stopped) return;
    if (ms > MAX_TIMER_MS) {
      this.#timer = setTimeout(() => this.#wait(ms - MAX_TIMER_MS), MAX_TIMER_MS);
      return;
    }
    this.#timer = setTimeout(() => void this.#rotate(), Math.max(0, ms));
  }

  async #rotate(): Promise<void> {
    if (this.#stopped) return;
    const { pair, nodeName } = this.#opts;
    try {
      const next = await this.#request();
      if (this.#stopped) return;
      await storePair(this.#opts.certDir, pair, next.cert, next.key);
      this.#current = next;
      this.#retryMs = FIRST_RETRY_MS;
      const cert = new X509Certificate(next.cert);
      console.log(`agent: ${pair} certificate for ${nodeName} rotated (valid until ${cert.validTo})`);
      this.#opts.rotated(next);
      this.#schedule();
    } catch (err) {
      if (this.#stopped) return;
      console.error(
        `agent: rotating the ${pair} certificate: ${(err as Error).message}; retrying in ${this.#retryMs / 1000} s`,
      );
      this.#wait(this.#retryMs);
      this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    }
  }

  async #request(): Promise<CertPair> {
    const o = this.#opts;
    const keyPem = privateKeyPem((await generateKeyPair()).privateKey);
    const privateKey = createPrivateKey(keyPem);
    const request = createCsr(
      { commonName: `system:node:${o.nodeName}`, organizations: ['system:nodes'] },
      createPublicKey(privateKey),
      privateKey,
      o.names?.() ?? {},
    );
    const name = await createSigningRequest(o.client, {
      request,
      signerName: o.signerName,
      usages: o.usages,
    });
    console.log(`agent: waiting for the ${o.pair} certificate (certificate signing request ${name})`);
    const cert = await waitForCertificate(o.client, name, o.waitTimeoutMs ?? 15 * 60_000);
    return { cert, key: keyPem };
  }
}
