/**
 * The signer of `kubernetes.io/kube-apiserver-client` (kube-controller-manager's csrsigning
 * controller, run in the server): an approved, not denied or failed CertificateSigningRequest
 * for that signer without a certificate gets one, issued by the cluster CA for the request's
 * subject (user = common name, groups = organizations) and public key, valid for
 * `spec.expirationSeconds` (at least 10 minutes) or one year. A request that cannot be parsed
 * gets a `Failed` condition. Runs off a list and watch of the CSR keys.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import type { Store, WatchEvent } from '../../storage/interface.js';
import { ConflictError, NotFoundError } from '../../storage/errors.js';
import { issueCertificate, subjectDerOf, type CertKeyPair, type Issuer } from '../pki/certificate.js';
import { CsrError, parseCsr } from '../pki/csr.js';

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
const PREFIX = '/certificatesigningrequests/';
const DEFAULT_DURATION_S = 365 * 24 * 3600;
const MIN_DURATION_S = 600;

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
}
interface Csr {
  spec?: { signerName?: string; request?: string; expirationSeconds?: number; usages?: string[] };
  status?: { conditions?: Condition[] | null; certificate?: string };
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function has(csr: Csr, type: string): boolean {
  return (csr.status?.conditions ?? []).some((c) => c.type === type && (c.status ?? 'True') === 'True');
}

/** Signs approved client CSRs with the cluster CA. */
export class ClientSigner {
  readonly #store: Store;
  readonly #issuer: Issuer;
  readonly #caPem: string;
  readonly #now: () => Date;
  readonly #logError: (message: string, err?: unknown) => void;
  #watch: { close(): void } | undefined;
  #closed = false;

  constructor(
    store: Store,
    ca: CertKeyPair,
    now: () => Date,
    logError: (message: string, err?: unknown) => void,
  ) {
    this.#store = store;
    const privateKey = createPrivateKey(ca.keyPem);
    this.#issuer = {
      subjectDer: subjectDerOf(new X509Certificate(ca.certPem).raw),
      privateKey,
      publicKey: createPublicKey(privateKey),
    };
    this.#caPem = ca.certPem;
    this.#now = now;
    this.#logError = logError;
  }

  start(): void {
    void this.#run();
  }

  stop(): void {
    this.#closed = true;
    this.#watch?.close();
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      try {
        const list = await this.#store.range({ prefix: PREFIX });
        for (const kv of list.items) await this.#consider(kv.key);
        const watch = this.#store.watch({ prefix: PREFIX }, { fromRevision: list.revision + 1n });
        this.#watch = watch;
        for await (const ev of watch as AsyncIterable<WatchEvent>) {
          if (ev.type === 'put') await this.#consider(ev.kv.key);
        }
      } catch (err) {
        if (this.#closed) return;
        this.#logError('certificate signer: storage watch failed', err);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  async #consider(key: string): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { kv } = await this.#store.get(key);
      if (kv === undefined) return;
      const csr = JSON.parse(decoder.decode(kv.value)) as Csr & Record<string, unknown>;
      if (csr.spec?.signerName !== KUBE_APISERVER_CLIENT_SIGNER) return;
      if (!has(csr, 'Approved') || has(csr, 'Denied') || has(csr, 'Failed')) return;
      if ((csr.status?.certificate ?? '') !== '') return;
      const status = { ...(csr.status ?? {}) };
      try {
        status.certificate = Buffer.from(this.#sign(csr)).toString('base64');
      } catch (err) {
        const now = this.#now()
          .toISOString()
          .replace(/\.\d{3}Z$/, 'Z');
        const message = err instanceof CsrError ? err.message : String(err);
        status.conditions = [
          ...(status.conditions ?? []),
          {
            type: 'Failed',
            status: 'True',
            reason: 'SignerValidationFailure',
            message,
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
        ];
      }
      try {
        await this.#store.update(key, encoder.encode(JSON.stringify({ ...csr, status })), {
          ifModRevision: kv.modRevision,
        });
        return;
      } catch (err) {
        if (err instanceof ConflictError) continue;
        if (err instanceof NotFoundError) return;
        throw err;
      }
    }
  }

  #sign(csr: Csr): string {
    const request = Buffer.from(csr.spec?.request ?? '', 'base64').toString('utf8');
    const parsed = parseCsr(request);
    if (parsed.subject.commonName === '') throw new CsrError('subject common name is required');
    const usages = csr.spec?.usages ?? [];
    if (!usages.includes('client auth') || usages.includes('server auth')) {
      throw new CsrError(
        'invalid usages for kubernetes.io/kube-apiserver-client: "client auth" is required and "server auth" is not allowed',
      );
    }
    const seconds = Math.max(MIN_DURATION_S, csr.spec?.expirationSeconds ?? DEFAULT_DURATION_S);
    const now = this.#now();
    const notAfter = new Date(
      Math.min(now.getTime() + seconds * 1000, Date.parse(new X509Certificate(this.#caPem).validTo)),
    );
    return issueCertificate({
      subject: { commonName: parsed.subject.commonName, organizations: parsed.subject.organizations },
      publicKey: parsed.publicKey,
      issuer: this.#issuer,
      usage: 'client',
      notBefore: new Date(now.getTime() - 5 * 60_000),
      notAfter,
    });
  }
}
