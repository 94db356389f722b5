/**
 * The one place errors become `Status` bodies. ApiErrors keep their reason and code; storage
 * errors that escape a handler are mapped to their API meaning; fastify's own client errors
 * (bad JSON, body too large, unsupported media type) keep their 4xx; anything else is a 500 with a
 * generic message (details go to the log, never to the client).
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { endLine } from './json-newline.js';
import {
  ApiError,
  badRequest,
  internalError,
  requestEntityTooLarge,
  unsupportedMediaType,
  type StatusBody,
} from '../api/errors.js';
import { storageApiError } from '../api/storage-errors.js';

/** Body size limit for requests, as kube-apiserver's 3 MiB. */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Maps any thrown value to the ApiError the client sees. */
export function toApiError(err: unknown): ApiError {
  const known = storageApiError(err);
  if (known !== undefined) return known;
  const fe = err as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return requestEntityTooLarge(MAX_REQUEST_BODY_BYTES);
    if (fe.statusCode === 415) return unsupportedMediaType();
    return badRequest(fe.message ?? 'bad request');
  }
  return internalError();
}

/**
 * Whether a path no route serves is answered as the API answers, with a JSON `Status`, rather
 * than with Go's plain `404 page not found`. kube-apiserver splits them so: paths under `/api`,
 * `/version`, `/openid` and the API groups it serves get the Status; any other path (an unknown
 * group, `/logs/x`, `/livez/x`, `/metrics/x`) gets the plain text of its last handler.
 */
export type ApiPathTest = (path: string) => boolean;

/** Go's `http.NotFound`: the plain-text 404. */
export function plainNotFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('x-content-type-options', 'nosniff')
    .type('text/plain; charset=utf-8')
    .send('404 page not found\n');
}

/** Installs the Status-producing error and not-found handlers on `app` (see {@link ApiPathTest}). */
export function installErrorHandler(app: FastifyInstance, isApiPath: ApiPathTest = () => true): void {
  app.setErrorHandler((err, request, reply) => {
    const apiError = toApiError(err);
    if (apiError.code >= 500) request.log.error({ err }, 'request failed');
    const body: StatusBody = apiError.toStatus();
    if (body.details?.retryAfterSeconds !== undefined) {
      void reply.header('Retry-After', String(body.details.retryAfterSeconds));
    }
    return reply
      .code(apiError.code)
      .type('application/json')
      .send(endLine(JSON.stringify(body)));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?', 1)[0] ?? '';
    if (!isApiPath(path)) return plainNotFound(reply);
    const body = new ApiError('NotFound', 'the server could not find the requested resource', {}).toStatus();
    return reply
      .code(404)
      .type('application/json')
      .send(endLine(JSON.stringify(body)));
  });
}
