/**
 * Certificate rotation, as kubelet's certificate managers do it (client-go
 * `util/certificate`): kubelet's client certificate with `rotateCertificates`
 * (`--rotate-certificates`) and its serving certificate with `serverTLSBootstrap`
 * (`--rotate-server-certificates`).
 *
 * - The pair in use is `<cert-dir>/<pair>-current.pem` (see cert-store.ts).
 * - The next rotation is due at a jittered 70–90 % of the certificate's lifetime, from its
 *   NotBefore; with no usable certificate (the serving pair before its first request) it is due now,
 *   and also when the certificate in use no longer names what would be requested now (client-go's
 *   `certSatisfiesTemplate`): an agent restarted with another `--node-ip` or node name asks at once
 *   for a serving certificate naming its new addresses. The names are checked again every
 *   {@link TEMPLATE_CHECK_MS}, as client-go does, for callers whose addresses change while running.
 * - A rotation makes a new ECDSA P-256 key, a CertificateSigningRequest (`generateName: csr-`)
 *   for `CN=system:node:<node>, O=system:nodes` with the signer, usages and names given, waits
 *   for its certificate (up to 15 minutes), stores the pair, swaps the symlink and tells the owner.
 * - A failed rotation is retried after 2 s, doubling to 32 s (kubelet's backoff), and logged.
 * - A client certificate that expired while the agent ran (rotations failed until its end) is
 *   requested again with the bootstrap credentials, when there are any.
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
  /**
   * For the client pair: a client to request with once the certificate in use has expired (it no
   * longer authenticates), made for the request and closed after it. kubelet's certificate
   * manager then uses the bootstrap kubeconfig's credentials, as its TLS bootstrap does at start.
   */
  readonly bootstrapClient?: () => Client;
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
/** How often the names of the certificate in use are compared with the requested ones (client-go: 1 s). */
export const TEMPLATE_CHECK_MS = 1_000;

/** An IP address as one spelling (IPv6 compressed, lower case). */
function canonicalIP(ip: string): string {
  return ip.includes(':') ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((v) => y.has(v));
}

/**
 * Whether `certPem` names what a serving-certificate request now would: subject
 * `CN=system:node:<node>, O=system:nodes` and exactly the DNS names and IP addresses of `names`.
 * Without `names` (the client pair) there is nothing to compare.
 */
export function satisfiesRequest(
  certPem: string,
  nodeName: string,
  names: RequestedNames | undefined,
): boolean {
  if (names === undefined) return true;
  const cert = new X509Certificate(certPem);
  const subject = cert.subject.split('\n');
  if (!subject.includes(`CN=system:node:${nodeName}`) || !subject.includes('O=system:nodes')) return false;
  const alt = (cert.subjectAltName ?? '').split(', ').filter((e) => e !== '');
  const dns = alt.filter((e) => e.startsWith('DNS:')).map((e) => e.slice('DNS:'.length));
  const ips = alt
    .filter((e) => e.startsWith('IP Address:'))
    .map((e) => canonicalIP(e.slice('IP Address:'.length)));
  return sameSet(dns, names.dnsNames ?? []) && sameSet(ips, (names.ipAddresses ?? []).map(canonicalIP));
}

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
  #templateTimer: NodeJS.Timeout | undefined;
  #rotating = false;
  /** The names of the last issued request (JSON). */
  #requested: string | undefined;
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
    this.#templateTimer = setInterval(() => {
      // Names changed since the certificate in use was issued: rotate now, unless a rotation is
      // under way or already due (a failed one keeps its backoff).
      const waiting = this.#deadline !== undefined && this.#deadline > Date.now();
      if (!this.#rotating && waiting && this.#current !== undefined && !this.#satisfied(this.#current))
        this.#schedule();
    }, TEMPLATE_CHECK_MS);
    this.#templateTimer.unref();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#templateTimer);
  }

  /**
   * Whether `pair` names what would be requested now. A certificate issued for the very names
   * this manager last asked for counts as satisfying, even when the signer changed them: asking
   * again would only get the same answer.
   */
  #satisfied(pair: CertPair): boolean {
    const names = this.#opts.names?.();
    return (
      satisfiesRequest(pair.cert, this.#opts.nodeName, names) ||
      (this.#requested !== undefined && this.#requested === JSON.stringify(names))
    );
  }

  #schedule(): void {
    if (this.#stopped) return;
    const cur = this.#current;
    if (cur === undefined || !this.#satisfied(cur)) this.#deadline = Date.now();
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
    this.#rotating = true;
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
    } finally {
      this.#rotating = false;
    }
  }

  async #request(): Promise<CertPair> {
    const o = this.#opts;
    const keyPem = privateKeyPem((await generateKeyPair()).privateKey);
    const privateKey = createPrivateKey(keyPem);
    const names = o.names?.();
    const request = createCsr(
      { commonName: `system:node:${o.nodeName}`, organizations: ['system:nodes'] },
      createPublicKey(privateKey),
      privateKey,
      names ?? {},
    );
    const expired = this.#current === undefined || !certValid(this.#current.cert);
    const bootstrap = expired ? o.bootstrapClient?.() : undefined;
    const client = bootstrap ?? o.client;
    try {
      const name = await createSigningRequest(client, {
        request,
        signerName: o.signerName,
        usages: o.usages,
      });
      const by = bootstrap === undefined ? '' : ', with the bootstrap credentials';
      console.log(`agent: waiting for the ${o.pair} certificate (certificate signing request ${name}${by})`);
      const cert = await waitForCertificate(client, name, o.waitTimeoutMs ?? 15 * 60_000);
      this.#requested = JSON.stringify(names);
      return { cert, key: keyPem };
    } finally {
      await bootstrap?.close();
    }
  }
}
