/**
 * The CSR signing controller (kube's `pkg/controller/certificates/signer`): an approved
 * CertificateSigningRequest (Approved, not Denied, not Failed) without a certificate, for one of
 * the signers this controller holds a CA for, is checked against that signer's rules
 * (`validate.ts`) and either gets its certificate in `status.certificate` or a `Failed`
 * condition (reason `SignerValidationFailure`), both written through `/status`. Requests for
 * other signers are left alone. A request that cannot be parsed or signed is retried with
 * backoff, as kube does.
 */
import type { CertificateSigningRequest } from '../../api/types/certificates-v1.js';
import {
  CERTIFICATE_SIGNING_REQUESTS,
  WorkQueue,
  defaultControllerRateLimiter,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import { parseCsr } from '../../pki/csr.js';
import type { ControllerContext } from '../context.js';
import { rfc3339 } from '../shared/meta.js';
import { Authority } from './authority.js';
import { refusal } from './validate.js';
import { startWorkers } from '../shared/workers.js';

/** kube's worker count per signer. */
const WORKERS = 5;

function hasTrue(csr: CertificateSigningRequest, type: string): boolean {
  return (csr.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
}

/** Approved and not denied (kube's `IsCertificateRequestApproved`), and not failed. */
function signable(csr: CertificateSigningRequest): boolean {
  return hasTrue(csr, 'Approved') && !hasTrue(csr, 'Denied') && !hasTrue(csr, 'Failed');
}

/** One running signer over the CAs it was given, by signer name. */
export class CsrSigningController {
  readonly #ctx: ControllerContext;
  readonly #authorities: ReadonlyMap<string, Authority>;
  readonly #ttlMs: number;
  readonly #now: () => Date;
  readonly #queue: WorkQueue<string>;
  readonly #csrs: SharedInformer<CertificateSigningRequest>;
  readonly #client: ResourceClient<CertificateSigningRequest>;

  constructor(
    ctx: ControllerContext,
    authorities: ReadonlyMap<string, Authority>,
    ttlMs: number,
    now: () => Date = () => new Date(),
  ) {
    this.#ctx = ctx;
    this.#authorities = authorities;
    this.#ttlMs = ttlMs;
    this.#now = now;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#csrs = ctx.informers.informer<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
    this.#client = ctx.client.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
    const enqueue = (c: CertificateSigningRequest): void => {
      if (authorities.has(c.spec?.signerName ?? '')) this.#queue.add(c.metadata.name ?? '');
    };
    this.#csrs.addHandler({ add: enqueue, update: (_o, c) => enqueue(c) });
  }

  /** Starts the workers once the cache is synced; they stop when the context's signal aborts. */
  start(): void {
    startWorkers(this.#ctx, 'csrsigning', {
      queue: this.#queue,
      workers: WORKERS,
      sync: (name) => this.sync(name),
    });
  }

  /** Signs, or fails, one request if it is this controller's to sign. */
  async sync(name: string): Promise<void> {
    const csr = this.#csrs.store.get(name);
    if (csr === undefined || (csr.status?.certificate ?? '') !== '') return;
    if (!signable(csr)) return;
    const signerName = csr.spec?.signerName ?? '';
    const authority = this.#authorities.get(signerName);
    if (authority === undefined) return;
    const pem = Buffer.from(csr.spec?.request ?? '', 'base64').toString('utf8');
    const parsed = parseCsr(pem); // a CsrError is retried, as kube retries a parse failure
    const usages = csr.spec?.usages ?? [];
    const refused = refusal(signerName, parsed, usages);
    const status = { ...(csr.status ?? {}) };
    if (refused !== undefined) {
      const now = rfc3339(this.#now().getTime());
      status.conditions = [
        ...(status.conditions ?? []),
        {
          type: 'Failed',
          status: 'True',
          reason: 'SignerValidationFailure',
          message: refused,
          lastUpdateTime: now,
        },
      ];
    } else {
      const ttl = Authority.duration(this.#ttlMs, csr.spec?.expirationSeconds);
      const cert = authority.sign(parsed, usages, ttl, this.#now());
      status.certificate = Buffer.from(cert).toString('base64');
    }
    await this.#client.updateStatus({ ...csr, status });
  }
}
