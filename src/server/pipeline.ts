/**
 * The request pipeline: the onRequest hooks every request passes before its route handler, in
 * the fixed order of the architecture:
 *
 * ```
 * request info -> authentication -> audit -> flow control -> impersonation -> authorization -> deadline
 * ```
 *
 * This version fills the first two; the others are named slots that later issues fill (audit and
 * flow control usually add their own onResponse hooks as well). Fastify runs hooks in
 * registration order, so installing the slots here, in order, fixes the order for good.
 */
import type { FastifyInstance, FastifyRequest, FastifyReply } from 'fastify';
import { badRequest } from '../http/errors.js';
import { parseRequestInfo, type QueryValues } from '../http/request-info.js';
import type { Authenticator } from './authentication.js';

/** A pipeline step: throw an ApiError to reject the request. */
export type PipelineStep = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

/** The steps after authentication; unset slots cost nothing. */
export interface PipelineSlots {
  readonly audit?: PipelineStep;
  readonly flowControl?: PipelineStep;
  readonly impersonation?: PipelineStep;
  readonly authorization?: PipelineStep;
  readonly deadline?: PipelineStep;
}

/** Order of the slots after authentication (exported for tests and documentation). */
export const SLOT_ORDER = ['audit', 'flowControl', 'impersonation', 'authorization', 'deadline'] as const;

/** Installs the pipeline on `app` (before any route is registered). */
export function installRequestPipeline(
  app: FastifyInstance,
  authenticator: Authenticator,
  slots: PipelineSlots = {},
): void {
  // Shape-stable request objects: declare the fields before hooks assign them.
  app.decorateRequest('requestInfo', null as never);
  app.decorateRequest('user', null as never);

  app.addHook('onRequest', (request, _reply, done) => {
    const info = parseRequestInfo(request.method, request.url, request.query as QueryValues);
    if (info === undefined) {
      done(badRequest(`malformed request path ${JSON.stringify(request.url.split('?')[0])}`));
      return;
    }
    request.requestInfo = info;
    done();
  });

  app.addHook('onRequest', (request, _reply, done) => {
    try {
      request.user = authenticator.authenticate(request);
      done();
    } catch (err) {
      done(err as Error);
    }
  });

  for (const name of SLOT_ORDER) {
    const step = slots[name];
    if (step === undefined) continue;
    // Callback style: a step that answers synchronously costs no promise.
    app.addHook('onRequest', (request, reply, done) => {
      let pending: void | Promise<void>;
      try {
        pending = step(request, reply);
      } catch (err) {
        done(err as Error);
        return;
      }
      if (pending instanceof Promise)
        pending.then(
          () => done(),
          (err: unknown) => done(err as Error),
        );
      else done();
    });
  }
}
