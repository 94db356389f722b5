/**
 * The CSR approving controller (kube's `pkg/controller/certificates/approver`): a kubelet
 * client request not yet approved, denied or signed is approved (`Approved`, reason
 * `AutoApproved`) when a recogniser matches and a SubjectAccessReview says its requester may
 * `create` `certificatesigningrequests/<selfnodeclient|nodeclient>`. A recognised request whose
 * requester lacks that permission is retried with backoff (a binding may follow). Requests it
 * cannot parse or does not recognise are left for others.
 */
import type { CertificateSigningRequest } from '../../api/types/certificates-v1.js';
import type { SubjectAccessReview } from '../../api/types/authorization-v1.js';
import {
  CERTIFICATE_SIGNING_REQUESTS,
  SUBJECT_ACCESS_REVIEWS,
  WorkQueue,
  defaultControllerRateLimiter,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import { CsrError, parseCsr, type ParsedCsr } from '../../pki/csr.js';
import type { ControllerContext } from '../context.js';
import { rfc3339 } from '../shared/meta.js';
import { RECOGNIZERS, type Recognizer } from './recognize.js';
import { startWorkers } from '../shared/workers.js';

/**
 * A recognised request whose requester may not have it approved (yet): retried with backoff, as
 * kube's ignorable error, since a binding may come later; not logged.
 */
class NotAuthorizedYet extends Error {
  constructor(name: string, tried: readonly string[]) {
    super(`recognized csr "${name}" as [${tried.join(' ')}] but subject access review was not approved`);
    this.name = 'NotAuthorizedYet';
  }
}

function decided(csr: CertificateSigningRequest): boolean {
  if ((csr.status?.certificate ?? '') !== '') return true;
  return (csr.status?.conditions ?? []).some((c) => c.type === 'Approved' || c.type === 'Denied');
}

/** One running approver. */
export class CsrApprovingController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #csrs: SharedInformer<CertificateSigningRequest>;
  readonly #client: ResourceClient<CertificateSigningRequest>;
  readonly #reviews: ResourceClient<SubjectAccessReview>;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#csrs = ctx.informers.informer<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
    this.#client = ctx.client.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
    this.#reviews = ctx.client.resource<SubjectAccessReview>(SUBJECT_ACCESS_REVIEWS);
    const enqueue = (c: CertificateSigningRequest): void => {
      if (!decided(c)) this.#queue.add(c.metadata.name ?? '');
    };
    this.#csrs.addHandler({ add: enqueue, update: (_o, c) => enqueue(c) });
  }

  /** Starts the workers once the cache is synced; they stop when the context's signal aborts. */
  start(): void {
    startWorkers(this.#ctx, 'csrapproving', {
      queue: this.#queue,
      workers: 5,
      sync: (name) => this.sync(name),
      onError: (message, err) => {
        if (!(err instanceof NotAuthorizedYet)) this.#ctx.log.error(message, err);
      },
    });
  }

  async #allowed(csr: CertificateSigningRequest, r: Recognizer): Promise<boolean> {
    const spec = csr.spec ?? {};
    // kube-apiserver always records the requester; without one there is nobody to authorize.
    if ((spec.username ?? '') === '' && (spec.groups ?? []).length === 0) return false;
    const review = await this.#reviews.create({
      metadata: {},
      spec: {
        user: spec.username ?? '',
        uid: spec.uid ?? '',
        groups: spec.groups ?? [],
        ...(spec.extra === undefined ? {} : { extra: spec.extra }),
        resourceAttributes: {
          group: 'certificates.k8s.io',
          resource: 'certificatesigningrequests',
          verb: 'create',
          subresource: r.subresource,
        },
      },
    });
    return review.status?.allowed === true;
  }

  /** Approves one request if kube would. */
  async sync(name: string): Promise<void> {
    const csr = this.#csrs.store.get(name);
    if (csr === undefined || decided(csr)) return;
    let parsed: ParsedCsr;
    try {
      parsed = parseCsr(Buffer.from(csr.spec?.request ?? '', 'base64').toString('utf8'));
    } catch (err) {
      if (err instanceof CsrError) return; // not ours to judge; the signer reports it
      throw err;
    }
    const tried: string[] = [];
    for (const r of RECOGNIZERS) {
      if (!r.recognize(csr, parsed)) continue;
      tried.push(r.subresource);
      if (!(await this.#allowed(csr, r))) continue;
      const now = rfc3339(Date.now());
      const conditions = [
        ...(csr.status?.conditions ?? []),
        {
          type: 'Approved',
          status: 'True',
          reason: 'AutoApproved',
          message: r.message,
          lastUpdateTime: now,
          lastTransitionTime: now,
        },
      ];
      await this.#client.updateSubresource(name, 'approval', {
        ...csr,
        status: { ...(csr.status ?? {}), conditions },
      });
      return;
    }
    if (tried.length > 0) throw new NotAuthorizedYet(name, tried);
  }
}
