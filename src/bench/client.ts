/**
 * The load generator's HTTP client: HTTP/2 straight on `node:http2`, a small pool of sessions
 * shared round-robin by every simulated client (as client-go shares one connection per host),
 * big flow-control windows so that large lists are not throttled by the client, and no parsing
 * of bodies unless a scenario asks. The point is to measure the server, not this process.
 *
 * Given several servers (the API servers of one HA control plane), the pool holds that many
 * sessions to each, and successive requests go round-robin over all of them, as clients spread
 * by a load balancer in front of the servers would.
 */
import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import type { KubeconfigCredentials } from '../pki/kubeconfig-credentials.js';
import { BenchError } from './errors.js';

/** A whole response. */
export interface BenchResponse {
  readonly status: number;
  /** The body bytes (empty when the request asked to discard them). */
  readonly body: Buffer;
  /** Body length in bytes, counted even when discarded. */
  readonly bytes: number;
  /**
   * The first bytes of the body (at least 4 KiB when the body is longer), kept even when the
   * body is discarded: a list's `metadata` (resourceVersion, continue) comes before its items.
   */
  readonly head: Buffer;
}

/** Options of one request. */
export interface RequestOptions {
  readonly body?: Uint8Array | string;
  /** Request content type (default `application/json` when there is a body). */
  readonly contentType?: string;
  /** Accept header (default `application/json`). */
  readonly accept?: string;
  /** Count the body but keep none of it (lists). */
  readonly discardBody?: boolean;
}

/** A streaming response (a watch): chunks go to the callback until closed. */
export interface BenchStream {
  /** Resolves with the status once the response headers arrive. */
  readonly status: Promise<number>;
  /** Resolves when the stream ends (by either side). */
  readonly ended: Promise<void>;
  close(): void;
}

const WINDOW = 16 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 10_000;
const HEAD_BYTES = 4096;

/** Error codes of a failed connection, for the one-line message. */
function describeConnectError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  return typeof e.code === 'string' ? e.code : typeof e.message === 'string' ? e.message : String(err);
}

/** One server of a pool: where it is and how to authenticate to it. */
interface Target {
  readonly origin: string;
  readonly prefix: string;
  readonly creds: KubeconfigCredentials;
  readonly auth: string | undefined;
}

function targetOf(creds: KubeconfigCredentials): Target {
  const url = new URL(creds.server);
  return {
    origin: url.origin,
    prefix: url.pathname.replace(/\/$/, ''),
    creds,
    auth: creds.token === undefined ? undefined : `Bearer ${creds.token}`,
  };
}

/** A pool of HTTP/2 sessions to one server, or to each of several. */
export class BenchClient {
  readonly #targets: readonly Target[];
  /** Session `i` goes to target `i % targets.length`. */
  readonly #sessions: (ClientHttp2Session | undefined)[];
  #next = 0;
  #closed = false;

  /**
   * @param creds Server URL and credentials (from a kubeconfig), or one per server of an HA
   *   control plane: requests then go round-robin over all of them.
   * @param sessions HTTP/2 connections per server to spread streams over (default 2; at least 1).
   */
  constructor(creds: KubeconfigCredentials | readonly KubeconfigCredentials[], sessions = 2) {
    const all = Array.isArray(creds) ? creds : [creds as KubeconfigCredentials];
    if (all.length === 0) throw new RangeError('BenchClient needs at least one server');
    this.#targets = all.map(targetOf);
    this.#sessions = new Array<ClientHttp2Session | undefined>(
      Math.max(1, sessions) * this.#targets.length,
    ).fill(undefined);
  }

  /** The (first) server's origin, for messages and for finding its process. */
  get origin(): string {
    return (this.#targets[0] as Target).origin;
  }

  /** Every server's origin, in the order given. */
  get origins(): string[] {
    return this.#targets.map((t) => t.origin);
  }

  #session(): { session: ClientHttp2Session; target: Target } {
    if (this.#closed) throw new BenchError('BENCH_UNREACHABLE', 'client closed');
    const i = this.#next++ % this.#sessions.length;
    const target = this.#targets[i % this.#targets.length] as Target;
    const existing = this.#sessions[i];
    if (existing !== undefined && !existing.closed && !existing.destroyed)
      return { session: existing, target };
    const c = target.creds;
    let session: ClientHttp2Session;
    try {
      session = connect(target.origin, {
        ...(c.ca === undefined ? {} : { ca: c.ca }),
        ...(c.cert === undefined ? {} : { cert: c.cert }),
        ...(c.key === undefined ? {} : { key: c.key }),
        rejectUnauthorized: !c.insecureSkipTlsVerify,
        settings: { initialWindowSize: WINDOW, enablePush: false },
      });
    } catch (err) {
      // Node builds the TLS context synchronously: malformed PEM in the kubeconfig fails here.
      throw new BenchError(
        'BENCH_KUBECONFIG',
        `unusable TLS credentials in the kubeconfig: ${describeConnectError(err)}`,
        { cause: err },
      );
    }
    // Only connecting is bounded: a response may take long (big lists, profiles) once connected.
    const connectTimer = setTimeout(
      () => session.destroy(new Error(`ETIMEDOUT: no connection in ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
    session.once('connect', () => {
      clearTimeout(connectTimer);
      session.setLocalWindowSize(WINDOW);
    });
    session.once('close', () => clearTimeout(connectTimer));
    // Errors surface on the streams that fail; an unhandled session 'error' would crash the tool.
    session.on('error', () => undefined);
    session.once('close', () => {
      if (this.#sessions[i] === session) this.#sessions[i] = undefined;
    });
    this.#sessions[i] = session;
    return { session, target };
  }

  #open(
    method: string,
    path: string,
    options: RequestOptions,
  ): { stream: ClientHttp2Stream; origin: string } {
    const { session, target } = this.#session();
    const headers: OutgoingHttpHeaders = {
      [constants.HTTP2_HEADER_METHOD]: method,
      [constants.HTTP2_HEADER_PATH]: target.prefix + path,
      accept: options.accept ?? 'application/json',
    };
    if (target.auth !== undefined) headers['authorization'] = target.auth;
    if (options.body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    const stream = session.request(headers, { endStream: options.body === undefined });
    if (options.body !== undefined) stream.end(options.body);
    return { stream, origin: target.origin };
  }

  /**
   * One request; resolves with the whole response whatever its status.
   * @throws BenchError BENCH_UNREACHABLE when the connection fails or does not open in 10 s, or
   *   the stream ends without a response. There is no limit on the response time itself.
   */
  request(method: string, path: string, options: RequestOptions = {}): Promise<BenchResponse> {
    return new Promise((resolve, reject) => {
      let stream: ClientHttp2Stream;
      let origin: string;
      try {
        ({ stream, origin } = this.#open(method, path, options));
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      const chunks: Buffer[] = [];
      const headChunks: Buffer[] = [];
      let bytes = 0;
      let status = 0;
      const keep = options.discardBody !== true;
      stream.on('response', (h: IncomingHttpHeaders) => {
        status = Number(h[constants.HTTP2_HEADER_STATUS]);
      });
      stream.on('data', (c: Buffer) => {
        if (bytes < HEAD_BYTES) headChunks.push(c);
        bytes += c.length;
        if (keep) chunks.push(c);
      });
      stream.on('end', () => {
        if (status === 0) return; // ended without a response: 'close' rejects
        const body = keep ? Buffer.concat(chunks) : Buffer.alloc(0);
        resolve({ status, body, bytes, head: keep ? body : Buffer.concat(headChunks) });
      });
      stream.on('close', () => {
        if (status === 0) reject(new BenchError('BENCH_UNREACHABLE', `cannot reach ${origin}: no response`));
      });
      stream.on('error', (err: Error) => {
        reject(
          new BenchError('BENCH_UNREACHABLE', `cannot reach ${origin}: ${describeConnectError(err)}`, {
            cause: err,
          }),
        );
      });
    });
  }

  /**
   * A request whose response is expected to be `expected` (or one of them); anything else is a
   * BenchError naming the request and status (BENCH_UNAUTHORIZED for 401 and 403).
   */
  async expect(
    method: string,
    path: string,
    expected: number | readonly number[],
    options: RequestOptions = {},
  ): Promise<BenchResponse> {
    const res = await this.request(method, path, options);
    const ok = typeof expected === 'number' ? res.status === expected : expected.includes(res.status);
    if (!ok) throw statusError(method, path, res);
    return res;
  }

  /**
   * Opens a streaming GET (a watch) whose body chunks go to `onChunk` as they arrive.
   * Stream errors end the stream (`ended` resolves); they never throw.
   */
  stream(path: string, onChunk: (chunk: Buffer) => void, accept = 'application/json'): BenchStream {
    const { stream } = this.#open('GET', path, { accept });
    const status = new Promise<number>((resolve) => {
      stream.once('response', (h: IncomingHttpHeaders) => resolve(Number(h[constants.HTTP2_HEADER_STATUS])));
      stream.once('close', () => resolve(0));
    });
    const ended = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    stream.on('data', onChunk);
    stream.on('error', () => undefined);
    return { status, ended, close: () => stream.close(constants.NGHTTP2_CANCEL) };
  }

  /**
   * Opens every session of the pool (one `GET /version` each), so that a request timed next does
   * not pay for a TLS handshake (after a server restart, say).
   */
  async connectAll(): Promise<void> {
    for (let i = 0; i < this.#sessions.length; i++) await this.request('GET', '/version');
  }

  /** Drops every open session (the next requests connect anew), e.g. after a server restart. */
  reset(): void {
    for (const s of this.#sessions) s?.destroy();
    this.#sessions.fill(undefined);
  }

  /** Closes every session (in-flight streams are cancelled). Idempotent. */
  close(): void {
    this.#closed = true;
    for (const s of this.#sessions) s?.destroy();
    this.#sessions.fill(undefined);
  }
}

/** The BenchError for an unexpected status. */
export function statusError(method: string, path: string, res: BenchResponse): BenchError {
  const reason = statusMessage(res.body);
  const what = `${method} ${path.split('?')[0] ?? path}`;
  if (res.status === 401)
    return new BenchError(
      'BENCH_UNAUTHORIZED',
      `the server refused the credentials (401 Unauthorized) for ${what}`,
    );
  if (res.status === 403)
    return new BenchError(
      'BENCH_UNAUTHORIZED',
      `forbidden (403) for ${what}${reason === '' ? '' : `: ${reason}`}`,
    );
  return new BenchError(
    'BENCH_HTTP_STATUS',
    `${what}: HTTP ${res.status}${reason === '' ? '' : `: ${reason}`}`,
  );
}

/** The `message` of a Status body, if it is one. */
function statusMessage(body: Buffer): string {
  if (body.length === 0 || body.length > 65536) return '';
  try {
    const v = JSON.parse(body.toString('utf8')) as { kind?: unknown; message?: unknown };
    return v.kind === 'Status' && typeof v.message === 'string' ? v.message : '';
  } catch {
    return '';
  }
}
