/**
 * The one place errors become `Status` bodies. ApiErrors keep their reason and code; storage
 * errors that escape a handler are mapped to their API meaning; fastify's own client errors
 * (bad JSON, body too large, unsupported media type) keep their 4xx; anything else is a 500 with a
 * generic message (details go to the log, never to the client).
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { isStorageError, RevisionTooLargeError } from '../../storage/errors.js';
import {
  ApiError,
  badRequest,
  expired,
  internalError,
  requestEntityTooLarge,
  serviceUnavailable,
  tooLargeResourceVersion,
  unsupportedMediaType,
  type StatusBody,
} from './errors.js';

/** Body size limit for requests, as kube-apiserver's 3 MiB. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Maps any thrown value to the ApiError the client sees. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof RevisionTooLargeError) {
    return tooLargeResourceVersion(err.requestedRevision, err.currentRevision);
  }
  if (isStorageError(err)) {
    switch (err.code) {
      case 'STORAGE_COMPACTED':
        return expired(`The resourceVersion for the provided list is too old.`);
      case 'STORAGE_INVALID_CONTINUE':
        return badRequest(`continue key is not valid: ${err.message}`);
      case 'STORAGE_UNAVAILABLE':
        return serviceUnavailable('storage is unavailable');
      case 'STORAGE_LEASE_NOT_FOUND':
        // An event lease revoked behind our back; kube-apiserver answers etcd's refusal the same way.
        return internalError('storage lease not found');
      default:
        // NotFound, AlreadyExists and Conflict carry no resource name here: handlers must map
        // them with context. Reaching this line is a handler bug.
        return internalError('unexpected storage outcome');
    }
  }
  const fe = err as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
    if (fe.statusCode === 415) return unsupportedMediaType(String(fe.message));
    return badRequest(fe.message ?? 'bad request');
  }
  return internalError();
}

/** Installs the Status-producing error and not-found handlers on `app`. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err);
    if (apiError.code >= 500) request.log.error({ err }, 'request failed');
    const body: StatusBody = apiError.toStatus();
    if (body.details?.retryAfterSeconds !== undefined) {
      void reply.header('Retry-After', String(body.details.retryAfterSeconds));
    }
    return reply.code(apiError.code).type('application/json').send(JSON.stringify(body));
  });
  app.setNotFoundHandler((request, reply) => {
    const body = new ApiError('NotFound', 'the server could not find the requested resource', {}).toStatus();
    void request;
    return reply.code(404).type('application/json').send(JSON.stringify(body));
  });
}
