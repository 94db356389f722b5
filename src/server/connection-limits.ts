/**
 * Per-connection policies of kube-apiserver's generic server:
 *
 * - `--goaway-chance`: an HTTP/2 request that is not long-running gets its connection closed
 *   gracefully (GOAWAY once its response is sent) with this probability, so that clients behind a
 *   load balancer spread over the API servers again (kube's `WithProbabilisticGoaway`; kube caps
 *   the chance at 0.02);
 * - `--max-connection-bytes-per-sec`: the long-running responses (watches) of one connection
 *   together send at most this many bytes per second (a token bucket per connection, one second
 *   of burst): a write the budget does not cover is held back until it does, and the watch
 *   stream waits meanwhile through its usual backpressure.
 */
import type { ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isLongRunning } from './connections.js';

/** kube's upper bound of `--goaway-chance`. */
export const MAX_GOAWAY_CHANCE = 0.02;

/** The flags' check, with kube-apiserver's message; undefined when valid. */
export function goawayChanceError(chance: number): string | undefined {
  return chance < 0 || chance > MAX_GOAWAY_CHANCE || Number.isNaN(chance)
    ? '--goaway-chance can not be less than 0 or greater than 0.02'
    : undefined;
}

/** A token bucket of `rate` bytes per second holding at most one second's worth. */
export class ByteBudget {
  readonly #rate: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(bytesPerSecond: number, now: () => number = () => performance.now()) {
    this.#rate = bytesPerSecond;
    this.#now = now;
    this.#tokens = bytesPerSecond;
    this.#at = now();
  }

  /** Spends `bytes`; returns how long (ms) the sender must wait before sending more. */
  take(bytes: number): number {
    const now = this.#now();
    this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#at) * this.#rate) / 1000);
    this.#at = now;
    this.#tokens -= bytes;
    return this.#tokens >= 0 ? 0 : (-this.#tokens * 1000) / this.#rate;
  }
}

interface WritableResponse {
  write(chunk: unknown, ...rest: unknown[]): boolean;
  end(...args: unknown[]): unknown;
  emit(event: 'drain'): boolean;
  readonly stream?: { readonly session?: ServerHttp2Session };
  readonly socket?: Socket | null;
}

function byteLength(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}

/** What the policies need; both off when zero. */
export interface ConnectionLimitOptions {
  readonly goawayChance: number;
  readonly maxConnectionBytesPerSec: number;
  /** Test hook: a number in [0, 1). */
  readonly random?: () => number;
}

/** The onRequest hook of both policies, or undefined when both are off. */
export function connectionLimits(
  options: ConnectionLimitOptions,
): ((request: FastifyRequest, reply: FastifyReply) => void) | undefined {
  const { goawayChance, maxConnectionBytesPerSec: rate } = options;
  if (goawayChance <= 0 && rate <= 0) return undefined;
  const random = options.random ?? Math.random;
  // One budget per connection: the HTTP/2 session or the HTTP/1.1 socket.
  const budgets = new WeakMap<object, ByteBudget>();
  return (request, reply) => {
    const res = reply.raw as unknown as WritableResponse;
    const session = res.stream?.session;
    const longRunning = isLongRunning(request);
    if (goawayChance > 0 && session !== undefined && !longRunning && random() < goawayChance) {
      // GOAWAY after this response: the session takes no new stream, open ones finish.
      reply.raw.once('finish', () => {
        if (!session.closed && !session.destroyed) session.close();
      });
    }
    if (rate > 0 && longRunning) {
      const connection: object | null | undefined = session ?? res.socket;
      if (connection === null || connection === undefined) return;
      let budget = budgets.get(connection);
      if (budget === undefined) budgets.set(connection, (budget = new ByteBudget(rate)));
      throttle(res, budget);
    }
  };
}

/**
 * Holds back each write of `res` until `budget` covers it (in order), reporting backpressure
 * meanwhile and 'drain' once nothing is held; `end()` waits for the held writes.
 */
function throttle(res: WritableResponse, budget: ByteBudget): void {
  const write = res.write.bind(res);
  const end = res.end.bind(res);
  let held = 0;
  let ending: unknown[] | undefined;
  res.write = (chunk: unknown, ...rest: unknown[]): boolean => {
    const wait = budget.take(byteLength(chunk));
    if (wait <= 0 && held === 0) return write(chunk, ...rest);
    held++;
    setTimeout(() => {
      write(chunk, ...rest);
      if (--held > 0) return;
      if (ending !== undefined) end(...ending);
      else res.emit('drain');
    }, wait).unref();
    return false;
  };
  res.end = (...args: unknown[]): unknown => {
    if (held === 0) return end(...args);
    ending = args;
    return res;
  };
}
