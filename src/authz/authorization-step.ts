/**
 * The pipeline's authorization step: the request's attributes (from the request info parsed
 * once) go to the authorizer chain; anything but allow is kube's 403 Status.
 */
import type { FastifyRequest } from 'fastify';
import { internalError } from '../api/errors.js';
import { attributesOf } from './attributes.js';
import { forbiddenError, type AuthorizerChain } from './authorizer.js';

/** The step over `chain`. */
export function authorizationStep(chain: AuthorizerChain): (request: FastifyRequest) => Promise<void> {
  return async (request) => {
    const attrs = attributesOf(request.user, request.requestInfo);
    const answer = await chain.authorize(attrs);
    if (answer.decision === 'allow') return;
    if (answer.decision === 'noOpinion' && answer.failed !== undefined) throw internalError(answer.failed);
    throw forbiddenError(attrs, answer.reason);
  };
}
