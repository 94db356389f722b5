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
 *    from its last resourceVersion, on another server); one whose client does not read it within
 *    2 s has its HTTP/2 stream reset (NO_ERROR) or its HTTP/1.1 connection destroyed, so a
 *    stalled watch consumer cannot hold its whole connection open (the cause of stops that
 *    waited out the grace period with "1 connections still open");
 * 3. idle HTTP/1.1 connections are closed now, busy ones as soon as their request is answered;
 *    connections that have not finished their TLS handshake carry no request and are dropped;
 * 4. whatever is still open at the deadline is destroyed.
 *
 * A connection with no request in flight never holds the drain up: idle ones are closed with
 * `destroySoon` (a peer that never answers our FIN cannot keep them), and so is the socket of
 * every HTTP/2 session that ended (Node leaves it half-closed, waiting for the peer's FIN); and an HTTP/1.1 request is
 * counted until its response closes, which also covers hijacked replies (watches) that never
 * reach fastify's onResponse.
 */
import {
  constants as h2,
  type Http2SecureServer,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { onClose } from '../http/on-close.js';

/** Verbs and subresources kube-apiserver treats as long-running (no request timeout). */
const LONG_RUNNING_VERBS = new Set(['watch', 'proxy']);
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** kube's floor of the watch drain rate during a graceful shutdown (per second). */
const MIN_WATCH_DRAIN_PER_SECOND = 200;
const PACING_TICK_MS = 10;
/**
 * How long a long-running response ended by the drain may take to reach its client before its
 * stream is reset (HTTP/2, RST_STREAM NO_ERROR as Go's server does for a handler that returned)
 * or its connection destroyed (HTTP/1.1).
 */
const DRAIN_LINGER_MS = 2_000;

/** True when the request info names a long-running request. */
export function isLongRunning(request: FastifyRequest): boolean {
  const info = request.requestInfo;
  return (
    info.isResourceRequest &&
    (LONG_RUNNING_VERBS.has(info.verb) || LONG_RUNNING_SUBRESOURCES.has(info.subresource))
  );
}

/** How long an HTTP/2 connection stays half-closed after its session ended it (ms). */
const HALF_CLOSED_LINGER_MS = 250;

function isH2(socket: Socket): boolean {
  return (socket as Socket & { alpnProtocol?: string | false }).alpnProtocol === 'h2';
}

/** A connection's identity on a listening socket: the peer's address and port. */
function peerKey(socket: Socket): string {
  return `${socket.remoteAddress ?? ''}|${socket.remotePort ?? ''}`;
}

interface EndableResponse {
  end(): unknown;
  once(event: 'close', listener: () => void): unknown;
  readonly writableEnded?: boolean;
  readonly writableFinished?: boolean;
  /** The HTTP/2 stream (Http2ServerResponse). */
  readonly stream?: ServerHttp2Stream;
  /** The HTTP/1.1 connection (ServerResponse). */
  readonly socket?: Socket | null;
}

/**
 * Ends a long-running response and makes sure it lets go of its connection: a client that does
 * not read (a stalled watch consumer, a full flow-control window) would otherwise keep the
 * stream, and with it the HTTP/2 session or HTTP/1.1 connection, open until the grace period
 * ran out. After {@link DRAIN_LINGER_MS} the stream is reset or the connection destroyed.
 */
function endAndRelease(res: EndableResponse): void {
  const stream = res.stream;
  const socket = stream === undefined ? res.socket : undefined;
  res.end();
  // No 'close' listener: a response carries many already; the state says enough.
  const timer = setTimeout(() => {
    if (stream !== undefined) {
      if (!stream.closed && !stream.destroyed) stream.close(h2.NGHTTP2_NO_ERROR);
    } else if (res.writableFinished !== true) {
      socket?.destroy();
    }
  }, DRAIN_LINGER_MS);
  timer.unref();
}

/** See the module comment. One per listening server. */
export class ConnectionTracker {
  /** TCP connections whose TLS handshake has not completed, by peer address and port. */
  readonly #handshaking = new Map<string, Socket>();
  readonly #sockets = new Set<Socket>();
  readonly #sessions = new Set<ServerHttp2Session>();
  /** In-flight HTTP/1.1 requests per connection. */
  readonly #busy = new Map<Socket, number>();
  readonly #longRunning = new Set<EndableResponse>();
  #draining = false;
  /** Requests in flight that are not long-running, and who waits for them to reach zero. */
  #inFlight = 0;
  readonly #idleWaiters: (() => void)[] = [];
  /** The timer ending long-running responses paced during a drain. */
  #pacing: NodeJS.Timeout | undefined;

  /** Starts tracking `server`'s connections (call before it listens). */
  attach(server: Http2SecureServer): void {
    server.on('connection', (raw: Socket) => {
      if (this.#draining) {
        raw.destroy();
        return;
      }
      const key = peerKey(raw);
      this.#handshaking.set(key, raw);
      raw.once('close', () => {
        if (this.#handshaking.get(key) === raw) this.#handshaking.delete(key);
      });
    });
    server.on('secureConnection', (socket: Socket) => {
      const key = peerKey(socket);
      this.#handshaking.delete(key);
      this.#sockets.add(socket);
      if (isH2(socket)) {
        // A closed HTTP/2 session ends its TLS socket and leaves it half-closed until the peer
        // closes its side: a client whose own stream is still open (a watch it stopped reading)
        // never does, and the listener's close() then waits for that socket forever. Nothing
        // reads from it any more: it is destroyed shortly after our FIN went out.
        socket.once('finish', () => setTimeout(() => socket.destroy(), HALF_CLOSED_LINGER_MS).unref());
      }
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

  /**
   * onRequest hook: counts HTTP/1.1 requests until their response closes (hijacked or not) and
   * registers long-running responses.
   */
  onRequest(request: FastifyRequest, reply: FastifyReply): void {
    const socket = request.raw.httpVersionMajor === 1 ? request.raw.socket : undefined;
    if (socket !== undefined) this.#busy.set(socket, (this.#busy.get(socket) ?? 0) + 1);
    const res = reply.raw as unknown as EndableResponse;
    const longRunning = isLongRunning(request);
    if (longRunning) this.#longRunning.add(res);
    else this.#inFlight++;
    onClose(reply.raw, () => {
      if (socket !== undefined) this.#requestDone(socket);
      if (longRunning) this.#longRunning.delete(res);
      else if (--this.#inFlight === 0) for (const wake of this.#idleWaiters.splice(0)) wake();
    });
  }

  /**
   * Resolves once no request that is not long-running is in flight, or after `ms`
   * (`--shutdown-send-retry-after` keeps the listener open until then).
   */
  requestsDrained(ms: number): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** An HTTP/1.1 response closed: a connection left idle while draining is closed. */
  #requestDone(socket: Socket): void {
    const left = (this.#busy.get(socket) ?? 1) - 1;
    if (left > 0) {
      this.#busy.set(socket, left);
      return;
    }
    this.#busy.delete(socket);
    if (this.#draining) socket.destroySoon();
  }

  /** Number of open TLS connections (tests and shutdown logging). */
  get openConnections(): number {
    return this.#sockets.size;
  }

  /**
   * Steps 1–3 of the module comment; idempotent. With `watchGraceMs` > 0
   * (`--shutdown-watch-termination-grace-period`) the long-running responses are ended paced, as
   * kube-apiserver drains its watches: at max(count / grace, 200) per second, all of them within
   * the grace period, so their clients do not all re-watch elsewhere at the same instant.
   */
  beginDrain(watchGraceMs = 0): void {
    this.#draining = true;
    for (const session of this.#sessions) session.close();
    const open = [...this.#longRunning].filter((res) => res.writableEnded !== true);
    this.#longRunning.clear();
    if (watchGraceMs <= 0) for (const res of open) endAndRelease(res);
    else this.#endPaced(open, watchGraceMs);
    for (const raw of this.#handshaking.values()) raw.destroy();
    this.#handshaking.clear();
    for (const socket of this.#sockets) {
      // HTTP/2 connections close with their session; HTTP/1.1 ones when idle.
      if (!isH2(socket) && (this.#busy.get(socket) ?? 0) === 0) socket.destroySoon();
    }
  }

  #endPaced(open: readonly EndableResponse[], graceMs: number): void {
    if (open.length === 0) return;
    const perMs = Math.max(open.length / graceMs, MIN_WATCH_DRAIN_PER_SECOND / 1000);
    const started = Date.now();
    let ended = 0;
    const tick = (): void => {
      const elapsed = Date.now() - started;
      const due = elapsed >= graceMs ? open.length : Math.min(open.length, Math.floor(elapsed * perMs) + 1);
      for (; ended < due; ended++) {
        const res = open[ended];
        if (res !== undefined && res.writableEnded !== true) endAndRelease(res);
      }
      if (ended >= open.length) {
        clearInterval(this.#pacing);
        this.#pacing = undefined;
      }
    };
    this.#pacing = setInterval(tick, PACING_TICK_MS);
    tick();
  }

  /** Step 4: destroys every connection still open. */
  destroyAll(): void {
    clearInterval(this.#pacing);
    for (const raw of this.#handshaking.values()) raw.destroy();
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#sockets) socket.destroy();
  }
}
