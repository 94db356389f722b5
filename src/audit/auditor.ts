/**
 * The request side of auditing (kube's `WithAuditInit`, `WithAudit` and
 * `WithFailedAuthenticationAudit` filters), as fastify hooks:
 * - {@link Auditor.init} (first in the pipeline, every request): the audit ID — the incoming
 *   `Audit-ID` header or a new UUID — answered in the `Audit-ID` response header;
 * - {@link Auditor.step} (the pipeline's audit slot, after authentication): evaluates the policy
 *   and sends RequestReceived; when that cannot be stored (blocking-strict), the request fails
 *   with kube's 500 `failed to store audit event`;
 * - an onSend hook: notes the request and response bodies and sends ResponseComplete before the
 *   reply goes out (Panic for an unexpected error); 401s from authentication get their
 *   ResponseStarted event there;
 * - long-running requests (watches) send ResponseStarted when their headers are written and
 *   ResponseComplete when the response closes; a request whose client went away before any
 *   reply gets kube's `Connection closed early` status.
 *
 * Annotations are `request.auditAnnotations` (authorization's decision and reason, admission's
 * annotations, the deprecated-APIs hook's of src/server/deprecated-apis.ts, which runs after
 * RequestReceived as kube's handler does).
 */
import { randomUUID } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, internalError } from '../api/errors.js';
import { isRequestBody } from '../http/body.js';
import type { AuditBackend, PluginErrorLog } from './backend.js';
import { evaluatePolicy, type AuditPolicy, type AuditStage } from './policy.js';
import { auditUser, RequestAudit } from './request-audit.js';
import { MicroClock, type AuditUser } from './event.js';
import type { UserInfo } from '../api/user.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's audit record when the policy audits it (src/audit/auditor.ts); else null. */
    audit: RequestAudit | null;
  }
}

/** What the auditor is built from. */
export interface AuditorOptions {
  /** Undefined (with no backend): only audit IDs are handed out. */
  readonly policy: AuditPolicy | undefined;
  readonly backend: AuditBackend | undefined;
  readonly isLongRunning: (request: FastifyRequest) => boolean;
  readonly log: PluginErrorLog;
}

const AUDIT_ID = 'audit-id';
/** Larger streamed bodies are not kept as response objects (the event would be truncated anyway). */
const MAX_STREAMED_OBJECT = 64 << 20;
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json/;

function authMethods(request: FastifyRequest): string {
  const methods: string[] = [];
  const auth = (request.headers.authorization ?? '').trim();
  const [scheme = '', cred] = auth.split(' ');
  if (scheme.toLowerCase() === 'basic' && cred !== undefined) methods.push('basic');
  if (scheme.toLowerCase() === 'bearer' && cred !== undefined) methods.push('bearer');
  const q = (request.query as Record<string, unknown> | undefined)?.['access_token'];
  if (typeof q === 'string' && q.trim() !== '') methods.push('access_token');
  try {
    const socket = request.raw.socket as { getPeerCertificate?: () => { raw?: Buffer } } | null;
    if (socket?.getPeerCertificate?.().raw !== undefined) methods.push('x509');
  } catch {
    // Not TLS.
  }
  return methods.length > 0
    ? `Authentication failed, attempted: ${methods.join(', ')}`
    : 'Authentication failed, no credentials provided';
}

function parsePayload(reply: FastifyReply, payload: unknown): unknown {
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !JSON_TYPE.test(type)) return undefined;
  try {
    if (typeof payload === 'string') return JSON.parse(payload) as unknown;
    if (Buffer.isBuffer(payload)) return JSON.parse(payload.toString('utf8')) as unknown;
  } catch {
    // Not JSON after all: nothing to note.
  }
  return undefined;
}

/** See the module comment. One per server. */
export class Auditor {
  /** True when a policy and a backend are configured. */
  readonly enabled: boolean;
  readonly #policy: AuditPolicy | undefined;
  readonly #backend: AuditBackend | undefined;
  readonly #options: AuditorOptions;
  readonly #env = {
    clock: new MicroClock(),
    peers: new WeakMap<object, string>(),
    users: new WeakMap<UserInfo, AuditUser>(),
  };

  constructor(options: AuditorOptions) {
    this.#options = options;
    this.#policy = options.policy;
    this.#backend = options.backend;
    this.enabled = options.policy !== undefined && options.backend !== undefined;
  }

  /** The pipeline's first step, for every request: the audit ID and its response header. */
  readonly init = (request: FastifyRequest, reply: FastifyReply): void => {
    const incoming = request.headers[AUDIT_ID];
    const id = typeof incoming === 'string' && incoming !== '' ? incoming : randomUUID();
    // On the raw response, so that hijacked replies (watches) carry it too.
    reply.raw.setHeader(AUDIT_ID, id);
  };

  /** The pipeline's audit slot (install only when {@link enabled}). */
  readonly step = (request: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    const policy = this.#policy;
    if (policy === undefined) return undefined;
    const config = evaluatePolicy(policy, request.user, request.requestInfo);
    if (config.level === 'None') return undefined;
    const ctx = new RequestAudit(
      request,
      config,
      this.#auditId(reply),
      this.#options.isLongRunning(request),
      this.#env,
    );
    request.audit = ctx;
    const raw = reply.raw;
    if (ctx.longRunning) {
      const writeHead = raw.writeHead.bind(raw);
      raw.writeHead = ((...args: Parameters<typeof writeHead>) => {
        this.#started(request, ctx, args[0]);
        return writeHead(...args);
      }) as typeof writeHead;
      // A watch response already has many close listeners (metrics, connections, the watch).
      raw.setMaxListeners(raw.getMaxListeners() + 1);
      raw.once('close', () => this.#closed(request, reply, ctx));
    }
    const stored = this.#process(request, ctx, 'RequestReceived');
    const refuse = (ok: boolean): void => {
      if (ok) return;
      ctx.completed = true;
      throw internalError('failed to store audit event');
    };
    if (stored instanceof Promise) return stored.then(refuse);
    refuse(stored);
    return undefined;
  };

  /** Hooks onSend (the response stages) and onError (Panic); call before routes are added. */
  install(app: FastifyInstance): void {
    app.decorateRequest('audit', null);
    if (!this.enabled) return;
    // The body as the client sent it: handlers fill in uid and resourceVersion in place.
    app.addHook('preHandler', (request, _reply, done) => {
      const ctx = request.audit;
      const body: unknown = request.body;
      if (ctx !== null && isRequestBody(body) && typeof body.value === 'object' && body.value !== null) {
        if (!('decode' in body.value)) ctx.logRequestBody(body.value, body.patchType !== undefined);
      }
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      const ctx = request.audit;
      if (ctx !== null && !ctx.completed) this.#closed(request, null, ctx);
      done();
    });
    app.addHook('onError', (request, _reply, error, done) => {
      // An error nobody meant (no ApiError, no 4xx of fastify's own) is kube's panic.
      const status = (error as { statusCode?: number }).statusCode ?? 500;
      if (request.audit !== null && !(error instanceof ApiError) && status >= 500)
        request.audit.panic = error;
      done();
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      const ctx = request.audit;
      if (ctx === null) {
        if (reply.statusCode === 401 && (request.user as unknown) === null) {
          const pending = this.#failedAuthentication(request, reply);
          if (pending instanceof Promise) {
            pending.then(
              () => done(null, payload),
              () => done(null, payload),
            );
            return;
          }
        }
        done(null, payload);
        return;
      }
      if (ctx.completed) {
        done(null, payload);
        return;
      }
      if (payload instanceof Readable && ctx.config.level === 'RequestResponse' && !ctx.longRunning) {
        done(null, this.#completeAfterStream(request, reply, ctx, payload));
        return;
      }
      const pending = this.#complete(request, reply, ctx, payload);
      if (pending instanceof Promise)
        pending.then(
          () => done(null, payload),
          () => done(null, payload),
        );
      else done(null, payload);
    });
  }

  /** Flushes and closes the backends. */
  async shutdown(): Promise<void> {
    await this.#backend?.shutdown();
  }

  #auditId(reply: FastifyReply): string {
    const h = reply.raw.getHeader(AUDIT_ID);
    return typeof h === 'string' ? h : randomUUID();
  }

  #process(request: FastifyRequest, ctx: RequestAudit, stage: AuditStage): boolean | Promise<boolean> {
    if (ctx.config.omitStages.has(stage)) return true;
    const backend = this.#backend;
    if (backend === undefined) return true;
    return backend.processEvents([ctx.snapshot(stage, request.auditAnnotations)]);
  }

  #noteBodies(request: FastifyRequest, reply: FastifyReply, ctx: RequestAudit, payload: unknown): void {
    const code = reply.statusCode;
    ctx.setCode(code);
    if (code >= 300 || ctx.config.level === 'RequestResponse') {
      const value = parsePayload(reply, payload);
      if (value !== undefined) ctx.logResponseBody(value, code);
    }
    this.#noteImpersonation(request, ctx);
  }

  #noteImpersonation(request: FastifyRequest, ctx: RequestAudit): void {
    const now = request.user as typeof ctx.authenticated | null;
    if (
      now !== null &&
      now !== undefined &&
      now !== ctx.authenticated &&
      ctx.impersonatedUser === undefined
    ) {
      ctx.impersonatedUser = auditUser(now);
    }
  }

  #complete(
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: RequestAudit,
    payload: unknown,
  ): boolean | Promise<boolean> {
    this.#noteBodies(request, reply, ctx, payload);
    if (ctx.longRunning) return true; // ResponseStarted at writeHead, ResponseComplete at close.
    ctx.completed = true;
    if (ctx.panic !== undefined) {
      ctx.setPanic();
      return this.#process(request, ctx, 'Panic');
    }
    return this.#process(request, ctx, 'ResponseComplete');
  }

  /**
   * A streamed body (JSON lists) at RequestResponse: copied through as it goes, parsed at its
   * end for the response object; ResponseComplete then.
   */
  #completeAfterStream(
    request: FastifyRequest,
    reply: FastifyReply,
    ctx: RequestAudit,
    body: Readable,
  ): Readable {
    const chunks: Buffer[] = [];
    let size = 0;
    const copy = new PassThrough();
    body.on('data', (c: Buffer | string) => {
      const b = typeof c === 'string' ? Buffer.from(c) : c;
      size += b.length;
      if (size <= MAX_STREAMED_OBJECT) chunks.push(b);
    });
    body.once('end', () => {
      const text = size <= MAX_STREAMED_OBJECT ? Buffer.concat(chunks) : undefined;
      void this.#complete(request, reply, ctx, text);
    });
    body.once('error', (err) => copy.destroy(err));
    body.pipe(copy);
    return copy;
  }

  #started(request: FastifyRequest, ctx: RequestAudit, code: number): void {
    if (ctx.started || ctx.completed) return;
    ctx.started = true;
    ctx.setCode(code);
    this.#noteImpersonation(request, ctx);
    void this.#process(request, ctx, 'ResponseStarted');
  }

  #closed(request: FastifyRequest, reply: FastifyReply | null, ctx: RequestAudit): void {
    if (ctx.completed) return;
    ctx.completed = true;
    if (reply?.raw.headersSent !== true && ctx.responseStatus === undefined) {
      ctx.responseStatus = { metadata: {}, status: 'Success', message: 'Connection closed early', code: 200 };
      if (ctx.longRunning && !ctx.started) {
        ctx.started = true;
        void this.#process(request, ctx, 'ResponseStarted');
      }
    }
    this.#noteImpersonation(request, ctx);
    void this.#process(request, ctx, 'ResponseComplete');
  }

  #failedAuthentication(request: FastifyRequest, reply: FastifyReply): boolean | Promise<boolean> {
    const policy = this.#policy;
    if (policy === undefined) return true;
    const config = evaluatePolicy(policy, undefined, request.requestInfo);
    if (config.level === 'None') return true;
    const ctx = new RequestAudit(request, config, this.#auditId(reply), false, this.#env);
    ctx.responseStatus = { metadata: {}, message: authMethods(request), code: reply.statusCode };
    ctx.completed = true;
    return this.#process(request, ctx, 'ResponseStarted');
  }
}
