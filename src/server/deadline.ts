/**
 * The `deadline` slot of the request pipeline: kube-apiserver's request-deadline and timeout
 * filters. A request that is not long-running (see {@link isLongRunning}) gets a deadline of
 * `--request-timeout`, or of its `?timeout=` query parameter when that is shorter and positive
 * (`0s` means "the server's"); a request still unanswered at the deadline is answered 504
 * `Timeout` and whatever its handler sends (or throws) later is dropped silently. A malformed `?timeout=` is
 * a 400.
 *
 * Unlike kube, the handler is not cancelled: it runs to its end, and its answer goes nowhere.
 */
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../api/errors.js';
import { DurationError, parseDuration } from '../flags/duration.js';
import { onClose } from '../http/on-close.js';
import { endLine } from '../http/json-newline.js';
import type { PipelineStep } from './pipeline.js';

/** What the deadline step needs. */
export interface DeadlineOptions {
  /** `--request-timeout` in milliseconds; 0 or less disables the server's deadline. */
  readonly requestTimeoutMs: number;
  readonly isLongRunning: (request: FastifyRequest) => boolean;
}

/** kube's message for a malformed `?timeout=` (request_deadline.go). */
const INVALID_TIMEOUT = 'invalid timeout specified in the request URL';

/** The 504 kube's timeout filter answers (`apierrors.NewTimeoutError(..., 0)`). */
export function requestTimedOut(): ApiError {
  return new ApiError(
    'Timeout',
    'Timeout: request did not complete within requested timeout - context deadline exceeded',
    {},
  );
}

/** The `?timeout=` value of `url`, or undefined when absent or empty. */
function timeoutParameter(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const value = new URLSearchParams(url.slice(q + 1)).get('timeout');
  return value === null || value === '' ? undefined : value;
}

/**
 * The deadline of a request in milliseconds (undefined: none).
 * @throws ApiError 400 for a malformed `?timeout=`.
 */
export function requestDeadlineMs(url: string, requestTimeoutMs: number): number | undefined {
  const raw = timeoutParameter(url);
  let requested: number | undefined;
  if (raw !== undefined) {
    try {
      requested = parseDuration(raw);
    } catch (err) {
      if (err instanceof DurationError) throw badRequest(`${INVALID_TIMEOUT} - ${err.message}`);
      throw err;
    }
  }
  const server = requestTimeoutMs > 0 ? requestTimeoutMs : undefined;
  if (requested === undefined || requested <= 0) return server;
  return server === undefined ? requested : Math.min(requested, server);
}

const noop = (): void => undefined;
/** The logger of a timed-out request: the handler's late answer or error is no news. */
const SILENT: FastifyBaseLogger = {
  level: 'silent',
  silent: noop,
  trace: noop,
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
  fatal: noop,
  child: () => SILENT,
};

/**
 * Answers `reply` with the 504; later sends on it become no-ops and the request's log goes
 * silent, so the handler that is still running ends without "already sent" or "Promise errored"
 * lines (one per timed-out request otherwise).
 */
function timeOut(request: FastifyRequest, reply: FastifyReply): void {
  if (reply.sent || reply.raw.headersSent) return;
  const status = requestTimedOut().toStatus();
  void reply
    .code(504)
    .type('application/json')
    .send(endLine(JSON.stringify(status)));
  reply.send = function dropped(this: FastifyReply) {
    return this;
  };
  request.log = SILENT;
  reply.log = SILENT;
}

/** Node's longest timer (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The pipeline step; see the module comment. */
export function requestDeadline(options: DeadlineOptions): PipelineStep {
  return (request, reply) => {
    if (options.isLongRunning(request)) return;
    const ms = requestDeadlineMs(request.url, options.requestTimeoutMs);
    if (ms === undefined) return;
    const timer = setTimeout(() => timeOut(request, reply), Math.min(ms, MAX_TIMER_MS));
    onClose(reply.raw, () => clearTimeout(timer));
  };
}
