/**
 * kube-apiserver's max-in-flight filter (`--max-requests-inflight`, `--max-mutating-requests-inflight`):
 * at most that many read-only and mutating requests are served at once; one more is answered at
 * once with 429 `TooManyRequests` and `Retry-After: 1`, never queued. As in kube:
 * - long-running requests (watches) are not counted;
 * - requests by `system:masters` are never limited (the admin must reach an overloaded server);
 * - a limit of 0 means no limit for that kind.
 * A slot is held from the flow-control step until the raw response closes, so hijacked and
 * aborted requests give theirs back too.
 *
 * kube-apiserver uses this filter only with `--enable-priority-and-fairness=false`; with APF on
 * (the default) the two limits add up to APF's server concurrency limit (src/flowcontrol/).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../flowcontrol/dispatcher.js';
import { onClose } from '../http/on-close.js';
import { isMutating } from '../metrics/apiserver.js';

/** Limits of {@link InflightLimiter}. */
export interface InflightLimits {
  readonly readOnly: number;
  readonly mutating: number;
  readonly isLongRunning: (request: FastifyRequest) => boolean;
}

/** See the module comment; one per server. */
export class InflightLimiter {
  readonly #limits: InflightLimits;
  #readOnly = 0;
  #mutating = 0;

  constructor(limits: InflightLimits) {
    this.#limits = limits;
  }

  /** Requests now in flight by kind (tests and metrics). */
  get inFlight(): { readonly readOnly: number; readonly mutating: number } {
    return { readOnly: this.#readOnly, mutating: this.#mutating };
  }

  /**
   * The flow-control pipeline step.
   * @throws ApiError TooManyRequests when the request's kind is at its limit.
   */
  readonly admit = (request: FastifyRequest, reply: FastifyReply): void => {
    if (this.#limits.isLongRunning(request)) return;
    if (request.user.groups.includes('system:masters')) return;
    const mutating = isMutating(request.requestInfo);
    const limit = mutating ? this.#limits.mutating : this.#limits.readOnly;
    if (limit <= 0) return;
    if (mutating) {
      if (this.#mutating >= limit) throw tooManyRequests();
      this.#mutating++;
      onClose(reply.raw, () => this.#mutating--);
    } else {
      if (this.#readOnly >= limit) throw tooManyRequests();
      this.#readOnly++;
      onClose(reply.raw, () => this.#readOnly--);
    }
  };
}
