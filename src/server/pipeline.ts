/**
 * The request pipeline: the onRequest hook every request passes before its route handler, in
 * the fixed order of the architecture:
 *
 * ```
 * (audit init) -> request info -> (observe) -> authentication -> audit -> flow control -> impersonation -> authorization -> deadline
 * ```
 *
 * Once the request info is parsed, a request that asks for pretty JSON gets a reply that indents
 * it (src/http/pretty.ts).
 *
 * `auditInit` (kube's `WithAuditInit`) hands every request its audit ID, first, so that even a
 * request refused for a malformed path answers with an `Audit-ID` header.
 *
 * `observe` (metrics) sees every request that has request info, rejected ones included; it must
 * not throw or wait.
 *
 * Request info and authentication (src/authn/) are filled here; the slots after them are given
 * by the server (src/server/app.ts). All of it runs in a single onRequest hook, authentication
 * and then the slots in {@link SLOT_ORDER}, one after another; a step that throws or rejects
 * ends the pipeline with its error.
 */
import type { FastifyInstance, FastifyRequest, FastifyReply } from 'fastify';
import { badRequest } from '../api/errors.js';
import { prettyWhenAsked } from '../http/pretty.js';
import { parseRequestInfo, type QueryValues } from '../http/request-info.js';
import type { RequestAuthenticator } from '../authn/request-authenticator.js';

/** A pipeline step: throw an ApiError to reject the request. */
export type PipelineStep = (request: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

/** The steps after authentication; unset slots cost nothing. */
export interface PipelineSlots {
  /** Runs synchronously first, for every request (the audit ID); never rejects a request. */
  readonly auditInit?: (request: FastifyRequest, reply: FastifyReply) => void;
  /** Runs synchronously right after request info (metrics); never rejects a request. */
  readonly observe?: (request: FastifyRequest, reply: FastifyReply) => void;
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
  authenticator: RequestAuthenticator,
  slots: PipelineSlots = {},
): void {
  // Shape-stable request objects: declare the fields before hooks assign them.
  app.decorateRequest('requestInfo', null as never);
  app.decorateRequest('user', null as never);
  app.decorateRequest('auditAnnotations', null);

  // Authentication is the first step. Certificate, proxy and cached-token requests are decided
  // synchronously (no promise); only a token the cache does not know waits for its authenticators.
  const authenticate: PipelineStep = (request) => {
    const outcome = authenticator.authenticate(request);
    if (!(outcome instanceof Promise)) {
      request.user = outcome;
      return undefined;
    }
    return outcome.then((user) => {
      request.user = user;
    });
  };
  const steps: PipelineStep[] = [authenticate];
  for (const name of SLOT_ORDER) {
    const step = slots[name];
    if (step !== undefined) steps.push(step);
  }
  const { auditInit, observe } = slots;

  // One hook for the whole pipeline: fastify's hook runner costs its own turn per hook on every
  // request.
  app.addHook('onRequest', (request, reply, done) => {
    auditInit?.(request, reply);
    const info = parseRequestInfo(request.method, request.url, request.query as QueryValues);
    if (info === undefined) {
      done(badRequest(`malformed request path ${JSON.stringify(request.url.split('?')[0])}`));
      return;
    }
    request.requestInfo = info;
    prettyWhenAsked(request, reply, info);
    observe?.(request, reply);
    runSteps(steps, 0, request, reply, done);
  });
}

/**
 * Runs `steps` from index `i` in order, then calls `done` once: with the first error a step
 * throws or rejects with, else with none. Callback style: steps that answer synchronously cost
 * no promise and no closure.
 */
function runSteps(
  steps: readonly PipelineStep[],
  i: number,
  request: FastifyRequest,
  reply: FastifyReply,
  done: (err?: Error) => void,
): void {
  for (; i < steps.length; i++) {
    let pending: void | Promise<void>;
    try {
      pending = (steps[i] as PipelineStep)(request, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (pending instanceof Promise) {
      const next = i + 1;
      pending.then(
        () => runSteps(steps, next, request, reply, done),
        (err: unknown) => done(err as Error),
      );
      return;
    }
  }
  done();
}
