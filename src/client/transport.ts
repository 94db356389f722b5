/**
 * The wire: one HTTP/2 session over TLS per server (client-go shares one connection per host),
 * with large flow-control windows so that big lists and busy watches are not throttled by the
 * client. A session that closes or receives GOAWAY is dropped and the next request opens a new
 * one; a request the server refused without running it (GOAWAY, REFUSED_STREAM) is retried once
 * on the new session. HTTP/1.1 is never used.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import {
  connect,
  constants,
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
} from 'node:http2';
import type { ClientConfig } from './config.js';

/** A whole response. */
export interface TransportResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** One request. `path` is absolute from the server URL's prefix and includes the query. */
export interface TransportRequest {
  readonly method: string;
  readonly path: string;
  readonly headers?: OutgoingHttpHeaders;
  readonly body?: Buffer | string;
  readonly signal?: AbortSignal;
  /** Overrides the config's timeout; 0: none (watches). */
  readonly timeoutMs?: number;
}

/** The connection failed or the stream broke before a whole response; `code` is stable. */
export class TransportError extends Error {
  readonly code: 'CLIENT_UNREACHABLE' | 'CLIENT_TIMEOUT' | 'CLIENT_CLOSED';
  constructor(code: TransportError['code'], message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TransportError';
    this.code = code;
  }
}

const WINDOW = 32 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 10_000;
/** client-go's cached token source re-reads the file once a minute. */
const TOKEN_FILE_TTL_MS = 60_000;
/** client-go re-reads file-based client certificates every 5 minutes. */
const CERT_FILE_TTL_MS = 5 * 60_000;

/** client-go's HTTP/2 health check defaults (k8s.io/apimachinery/pkg/util/net). */
const READ_IDLE_TIMEOUT_S = 30;
const PING_TIMEOUT_S = 15;

/** A whole number of seconds from the environment variable `name`, in ms; `fallback` s otherwise. */
function envSecondsMs(name: string, fallback: number): number {
  const v = process.env[name];
  const n = v === undefined || !/^\d+$/.test(v) ? fallback : Number(v);
  return n * 1000;
}

function errorCode(err: unknown): string {
  const e = err as { code?: unknown };
  return typeof e.code === 'string' ? e.code : '';
}

/** One session per server for a Client. */
export class Transport {
  readonly #config: ClientConfig;
  readonly #origin: string;
  readonly #prefix: string;
  #session: ClientHttp2Session | undefined;
  #closed = false;
  #token: string | undefined;
  #tokenReadAt = -Infinity;
  #certData: Buffer | undefined;
  #keyData: Buffer | undefined;
  #certReadAt: number;
  readonly #readIdleMs: number;
  readonly #pingTimeoutMs: number;

  constructor(config: ClientConfig) {
    const url = new URL(config.server);
    if (url.protocol !== 'https:')
      throw new TypeError(`client: server ${config.server} is not https (HTTP/2 over TLS only)`);
    this.#config = config;
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/$/, '');
    this.#token = config.token;
    this.#certData = config.certData;
    this.#keyData = config.keyData;
    this.#certReadAt = performance.now();
    this.#readIdleMs =
      config.http2ReadIdleTimeoutMs ?? envSecondsMs('HTTP2_READ_IDLE_TIMEOUT_SECONDS', READ_IDLE_TIMEOUT_S);
    this.#pingTimeoutMs =
      config.http2PingTimeoutMs ?? envSecondsMs('HTTP2_PING_TIMEOUT_SECONDS', PING_TIMEOUT_S);
  }

  /**
   * Re-reads the config's `certFile` and `keyFile` now (a rotation replaced them). When the pair
   * changed, the current session is closed gracefully (requests in flight finish on it) and the
   * next request connects with the new certificate. An unreadable file keeps the last pair.
   */
  reloadClientCertificate(): void {
    const { certFile, keyFile } = this.#config;
    if (certFile === undefined || keyFile === undefined) return;
    this.#certReadAt = performance.now();
    try {
      this.#usePair(readFileSync(certFile), readFileSync(keyFile));
    } catch {
      // a rotation swaps the files atomically; keep the pair that works
    }
  }

  /**
   * Every {@link CERT_FILE_TTL_MS}, re-reads the certificate files in the background: the request
   * that notices goes out with the current pair, and a changed pair serves the next ones.
   */
  #refreshCertificate(): void {
    const { certFile, keyFile } = this.#config;
    if (certFile === undefined || keyFile === undefined) return;
    const now = performance.now();
    if (now - this.#certReadAt < CERT_FILE_TTL_MS) return;
    this.#certReadAt = now;
    Promise.all([readFile(certFile), readFile(keyFile)]).then(
      ([cert, key]) => this.#usePair(cert, key),
      () => {}, // a rotation swaps the files atomically; keep the pair that works
    );
  }

  /** Takes a certificate pair; when it changed, the next request connects with it. */
  #usePair(cert: Buffer, key: Buffer): void {
    if (this.#closed || (this.#certData?.equals(cert) && this.#keyData?.equals(key))) return;
    this.#certData = cert;
    this.#keyData = key;
    const old = this.#session;
    this.#session = undefined;
    if (old !== undefined && !old.closed) old.close();
  }

  /** `https://host:port` of the server, for messages. */
  get origin(): string {
    return this.#origin;
  }

  #authorization(): string | undefined {
    const source = this.#config.tokenSource;
    if (source !== undefined) return `Bearer ${source()}`;
    const file = this.#config.tokenFile;
    if (file !== undefined) {
      const now = performance.now();
      if (now - this.#tokenReadAt > TOKEN_FILE_TTL_MS) {
        try {
          this.#token = readFileSync(file, 'utf8').trim();
          this.#tokenReadAt = now;
        } catch (err) {
          // Keep the last token (a rotation replaces the file atomically, but be tolerant).
          if (this.#token === undefined)
            throw new TransportError('CLIENT_UNREACHABLE', `cannot read token file ${file}`, { cause: err });
        }
      }
    }
    return this.#token === undefined ? undefined : `Bearer ${this.#token}`;
  }

  #connect(): ClientHttp2Session {
    if (this.#closed) throw new TransportError('CLIENT_CLOSED', 'client closed');
    const existing = this.#session;
    if (existing !== undefined && !existing.closed && !existing.destroyed) return existing;
    const c = this.#config;
    let session: ClientHttp2Session;
    try {
      session = connect(this.#origin, {
        ...(c.caData === undefined ? {} : { ca: c.caData }),
        ...(this.#certData === undefined ? {} : { cert: this.#certData }),
        ...(this.#keyData === undefined ? {} : { key: this.#keyData }),
        rejectUnauthorized: c.insecureSkipTlsVerify !== true,
        settings: { initialWindowSize: WINDOW, enablePush: false },
        maxSessionMemory: 64,
      });
    } catch (err) {
      // Node builds the TLS context synchronously: malformed PEM fails here.
      throw new TransportError('CLIENT_UNREACHABLE', `unusable TLS credentials for ${this.#origin}`, {
        cause: err,
      });
    }
    const timer = setTimeout(
      () =>
        session.destroy(new Error(`ETIMEDOUT: no connection to ${this.#origin} in ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
    session.once('connect', () => {
      clearTimeout(timer);
      // The session may be gone by now (the server closed it as it connected: a shutdown).
      if (!session.destroyed && !session.closed) session.setLocalWindowSize(WINDOW);
    });
    const health = this.#healthCheck(session);
    const drop = (): void => {
      clearTimeout(timer);
      clearInterval(health);
      if (this.#session === session) this.#session = undefined;
    };
    // A GOAWAY lets in-flight streams finish, then the session closes; new requests go to a
    // new session.
    session.once('goaway', () => {
      drop();
      if (!session.closed) session.close();
    });
    session.once('close', drop);
    // Errors reach the streams that fail; an unhandled session 'error' would crash the process.
    session.on('error', drop);
    this.#session = session;
    return session;
  }

  /**
   * client-go's HTTP/2 health check: every read-idle period, a PING; a session whose peer does not
   * answer within the ping timeout is destroyed, so its requests fail and its watches end (to
   * resume on a new session) instead of waiting forever on a dead connection: a server that
   * vanished without closing it (a killed host, a partition).
   */
  #healthCheck(session: ClientHttp2Session): NodeJS.Timeout | undefined {
    if (this.#readIdleMs <= 0) return undefined;
    const pingTimeoutMs = this.#pingTimeoutMs;
    const origin = this.#origin;
    let pinging = false;
    const timer = setInterval(() => {
      if (pinging || session.destroyed || session.closed || session.connecting) return;
      pinging = true;
      const deadline = setTimeout(
        () => session.destroy(new Error(`no answer to an HTTP/2 PING from ${origin} in ${pingTimeoutMs} ms`)),
        pingTimeoutMs,
      );
      deadline.unref();
      const sent = session.ping(() => {
        // An error here is the session closing: its own events say so.
        pinging = false;
        clearTimeout(deadline);
      });
      if (!sent) {
        pinging = false;
        clearTimeout(deadline);
      }
    }, this.#readIdleMs);
    timer.unref();
    return timer;
  }

  /**
   * Opens a stream and sends the request (the caller reads the response); for watches.
   * @throws TransportError when no session can be opened.
   */
  open(req: TransportRequest): ClientHttp2Stream {
    const headers: OutgoingHttpHeaders = {
      ...req.headers,
      [constants.HTTP2_HEADER_METHOD]: req.method,
      [constants.HTTP2_HEADER_PATH]: this.#prefix + req.path,
    };
    const auth = this.#authorization();
    if (auth !== undefined) headers['authorization'] = auth;
    if (this.#config.userAgent !== undefined) headers['user-agent'] = this.#config.userAgent;
    this.#refreshCertificate();
    const session = this.#connect();
    const stream = session.request(headers, {
      endStream: req.body === undefined,
      ...(req.signal === undefined ? {} : { signal: req.signal }),
    });
    if (req.body !== undefined) stream.end(req.body);
    return stream;
  }

  /**
   * One request; resolves with the whole response whatever its status.
   * @throws TransportError CLIENT_UNREACHABLE (connection or stream failure), CLIENT_TIMEOUT
   *   (the config's or request's timeout), CLIENT_CLOSED; the signal's reason when aborted.
   */
  async request(req: TransportRequest): Promise<TransportResponse> {
    try {
      return await this.#once(req);
    } catch (err) {
      if (err instanceof RefusedError && req.signal?.aborted !== true) return await this.#once(req);
      throw err;
    }
  }

  #once(req: TransportRequest): Promise<TransportResponse> {
    return new Promise((resolve, reject) => {
      let stream: ClientHttp2Stream;
      try {
        stream = this.open(req);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      const chunks: Buffer[] = [];
      let headers: IncomingHttpHeaders | undefined;
      let timer: NodeJS.Timeout | undefined;
      const timeoutMs = req.timeoutMs ?? this.#config.timeoutMs ?? 0;
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          stream.close(constants.NGHTTP2_CANCEL);
          reject(
            new TransportError(
              'CLIENT_TIMEOUT',
              `${req.method} ${req.path}: no response from ${this.#origin} in ${timeoutMs} ms`,
            ),
          );
        }, timeoutMs);
      }
      stream.on('response', (h: IncomingHttpHeaders) => {
        headers = h;
      });
      stream.on('data', (c: Buffer) => {
        chunks.push(c);
      });
      stream.on('end', () => {
        clearTimeout(timer);
        if (headers === undefined) return; // 'close' rejects
        resolve({
          status: Number(headers[constants.HTTP2_HEADER_STATUS]),
          headers,
          body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks),
        });
      });
      stream.on('close', () => {
        clearTimeout(timer);
        if (headers !== undefined) return;
        if (req.signal?.aborted === true) reject(req.signal.reason as Error);
        else if (stream.rstCode === constants.NGHTTP2_REFUSED_STREAM) reject(new RefusedError());
        else
          reject(
            new TransportError(
              'CLIENT_UNREACHABLE',
              `${req.method} ${req.path}: ${this.#origin} closed the stream without a response`,
            ),
          );
      });
      stream.on('error', (err: Error) => {
        clearTimeout(timer);
        if (req.signal?.aborted === true) reject(req.signal.reason as Error);
        else if (errorCode(err) === 'ERR_HTTP2_GOAWAY_SESSION' && headers === undefined)
          reject(new RefusedError());
        else
          reject(
            new TransportError(
              'CLIENT_UNREACHABLE',
              `${req.method} ${req.path} to ${this.#origin}: ${err.message}`,
              {
                cause: err,
              },
            ),
          );
      });
    });
  }

  /**
   * Drops the current session at once (its streams end, watches see their stream end); the next
   * request opens a new one. For tests of connection loss, and after rotating credentials.
   */
  reset(): void {
    const session = this.#session;
    this.#session = undefined;
    session?.destroy();
  }

  /** Closes the session (in-flight streams end); later requests throw CLIENT_CLOSED. */
  async close(): Promise<void> {
    this.#closed = true;
    const session = this.#session;
    this.#session = undefined;
    if (session === undefined || session.closed || session.destroyed) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => session.destroy(), 1000);
      session.close(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

/** The server refused the stream without running it: safe to send again. */
class RefusedError extends TransportError {
  constructor() {
    super('CLIENT_UNREACHABLE', 'stream refused by the server');
  }
}
