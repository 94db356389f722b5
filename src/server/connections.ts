/**
 * Connection bookkeeping for graceful shutdown. Node's HTTP/2 server (which also carries the
 * HTTP/1.1 clients) does not close keep-alive connections or long-running responses on
 * `close()`, so a server with a connected kubectl or an open watch would never stop. This
 * tracker knows every TLS connection, every HTTP/2 session, the in-flight requests of each
 * HTTP/1.1 connection, and the long-running responses (watches), and drains them in kube's
 * order:
 *
 * 1. HTTP/2 sessions get GOAWAY (their open streams finish; clients reconnect elsewhere);
 * 2. long-running responses are ended cleanly (a watch client sees the stream end and resumes
 *    from its last resourceVersion, on another server);
 * 3. idle HTTP/1.1 connections are closed now, busy ones as soon as their request is answered;
 * 4. whatever is still open at the deadline is destroyed.
 */
import type { Http2SecureServer, ServerHttp2Session } from 'node:http2';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Verbs and subresources kube-apiserver treats as long-running (no request timeout). */
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** True when the request info names a long-running request. */
export function isLongRunning(request: FastifyRequest): boolean {
  const info = request.requestInfo;
  return (
    info.isResourceRequest &&
    (LONG_RUNNING_VERBS.has(info.verb) || LONG_RUNNING_SUBRESOURCES.has(info.subresource))
  );
}

interface EndableResponse {
  end(): unknown;
  once(event: 'close', listener: () => void): unknown;
  readonly writableEnded?: boolean;
}

/** See the module comment. One per listening server. */
export class ConnectionTracker {
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();
  /** In-flight HTTP/1.1 requests per connection. */
  readonly #busy = new Map<Socket, number>();
  readonly #longRunning = new Set<EndableResponse>();
  #draining = false;

  /** Starts tracking `server`'s connections (call before it listens). */
  attach(server: Http2SecureServer): void {
    server.on('secureConnection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => {
        this.#sockets.delete(socket);
        this.#busy.delete(socket);
      });
    });
    server.on('session', (session: ServerHttp2Session) => {
      this.#sessions.add(session);
      session.once('close', () => this.#sessions.delete(session));
      if (this.#draining) session.close();
    });
  }

  /** onRequest hook: counts HTTP/1.1 requests and registers long-running responses. */
  onRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (request.raw.httpVersionMajor === 1) {
      const socket = request.raw.socket;
      this.#busy.set(socket, (this.#busy.get(socket) ?? 0) + 1);
    }
    if (isLongRunning(request)) {
      const res = reply.raw as unknown as EndableResponse;
      this.#longRunning.add(res);
      res.once('close', () => this.#longRunning.delete(res));
    }
  }

  /** onResponse hook: an HTTP/1.1 connection that is idle while draining is closed. */
  onResponse(request: FastifyRequest): void {
    if (request.raw.httpVersionMajor !== 1) return;
    const socket = request.raw.socket;
    const left = (this.#busy.get(socket) ?? 1) - 1;
    if (left > 0) {
      this.#busy.set(socket, left);
      return;
    }
    this.#busy.delete(socket);
    if (this.#draining) socket.end();
  }

  /** Number of open TLS connections (tests and shutdown logging). */
  get openConnections(): number {
    return this.#sockets.size;
  }

  /** Steps 1–3 of the module comment; idempotent. */
  beginDrain(): void {
    this.#draining = true;
    for (const session of this.#sessions) session.close();
    for (const res of this.#longRunning) {
      if (res.writableEnded !== true) res.end();
    }
    this.#longRunning.clear();
    for (const socket of this.#sockets) {
      // HTTP/2 connections close with their session; HTTP/1.1 ones when idle.
      const isH2 = (socket as Socket & { alpnProtocol?: string | false }).alpnProtocol === 'h2';
      if (!isH2 && (this.#busy.get(socket) ?? 0) === 0) socket.end();
    }
  }

  /** Step 4: destroys every connection still open. */
  destroyAll(): void {
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
  }
}
