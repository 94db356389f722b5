/**
 * The pipeline's authorization step: the request's attributes (from the request info parsed
 * once) go to the authorizer chain; anything but allow is kube's 403 Status.
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
    if (answer instanceof Promise) return answer.then((a) => check(attrs, a));
    check(attrs, answer);
    return undefined;
  };
}

function check(attrs: Attributes, answer: Authorization): void {
  if (answer.decision === 'allow') return;
  // An authorizer that failed (a webhook, whatever its failure policy) is kube's 500.
  if (answer.failed !== undefined) throw internalError(answer.failed);
  throw forbiddenError(attrs, answer.reason);
}
