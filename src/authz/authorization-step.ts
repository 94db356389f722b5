/**
 * The pipeline's authorization step: the request's attributes (from the request info parsed
 * once) go to the authorizer chain; anything but allow is kube's 403 Status. The decision and
 * its reason become the request's audit annotations (`authorization.k8s.io/decision` allow or
 * forbid, `authorization.k8s.io/reason`), as kube's authorization filter records them.
 */
import type { FastifyRequest } from 'fastify';
import { internalError } from '../api/errors.js';
import { attributesOf, type Attributes } from './attributes.js';
import { forbiddenError, type Authorization, type AuthorizerChain } from './authorizer.js';

/** The step over `chain`. */
export function authorizationStep(chain: AuthorizerChain): (request: FastifyRequest) => void | Promise<void> {
  return (request) => {
    const attrs = attributesOf(request.user, request.requestInfo);
    const answer = chain.authorize(attrs);
    if (answer instanceof Promise) return answer.then((a) => check(request, attrs, a));
    check(request, attrs, answer);
    return undefined;
  };
}

/** Audit annotation keys of the decision (kube's). */
export const DECISION_ANNOTATION = 'authorization.k8s.io/decision';
export const REASON_ANNOTATION = 'authorization.k8s.io/reason';

/**
 * The annotations of AlwaysAllow alone, where no step runs (installed only when auditing: kube
 * still runs its authorization filter then).
 */
export function allowAllAnnotationStep(request: FastifyRequest): void {
  if (request.audit === null) return;
  const notes = (request.auditAnnotations ??= {});
  notes[DECISION_ANNOTATION] = 'allow';
  notes[REASON_ANNOTATION] = '';
}

function check(request: FastifyRequest, attrs: Attributes, answer: Authorization): void {
  if (answer.decision === 'allow') {
    annotate(request, 'allow', answer.reason);
    return;
  }
  // An authorizer that failed (a webhook, whatever its failure policy) is kube's 500.
  if (answer.failed !== undefined) {
    annotate(request, undefined, 'internal error');
    throw internalError(answer.failed);
  }
  annotate(request, 'forbid', answer.reason);
  throw forbiddenError(attrs, answer.reason);
}

/**
 * Records the decision (undefined: none) and reason, only for a request the audit policy
 * audits (`request.audit`, set by the audit step before this one): an unaudited request
 * allocates nothing here.
 */
function annotate(request: FastifyRequest, decision: 'allow' | 'forbid' | undefined, reason: string): void {
  if (request.audit === null) return;
  const notes = (request.auditAnnotations ??= {});
  if (decision !== undefined) notes[DECISION_ANNOTATION] = decision;
  notes[REASON_ANNOTATION] = reason;
}
