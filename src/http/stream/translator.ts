/**
 * Exec and attach for WebSocket clients speaking `v5.channel.k8s.io` (kubectl 1.30 and later),
 * translated to SPDY toward the node agent, as kube-apiserver's stream translator does (feature
 * `TranslateStreamCloseWebsocketRequests`, on by default since 1.30): container runtimes'
 * streaming servers do not speak v5, and many not WebSockets at all.
 *
 * Client side (WebSocket, binary messages): the first byte of a message is its channel — 0
 * stdin, 1 stdout, 2 stderr, 3 error (a `Status` in JSON, written once at the end), 4 resize
 * (terminal sizes in JSON), 255 close (its second byte names the channel the client will not
 * write any more: v5's half-close of stdin). Right after the handshake the server sends an
 * empty message on the lowest channel it writes (stdout, else stderr, else error), so the
 * client knows the session is up.
 *
 * Agent side (SPDY/3.1, `v4.channel.k8s.io`): one stream per channel, named by its `streamtype`
 * header (error, stdin, stdout, stderr, resize), opened by us in that order; stdin is
 * half-closed when the client closes channel 0. The session is over when the agent has ended
 * stdout, stderr and the error stream; the error stream holds the agent's Status, which becomes
 * the client's final Status: Success, or `NonZeroExitCode` with the exit code as an `ExitCode`
 * cause (what kubectl turns into its own exit status), or an InternalError with the agent's
 * message. Then the server sends the WebSocket close and waits for the client to close the
 * connection (at most 15 minutes), so output still in flight is not cut off.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { SpdySession, type SpdyStream } from './spdy.js';
import {
  dialUpstream,
  forwardedHeaders,
  plainResponse,
  readResponseHead,
  readRest,
  requestHead,
  type UpstreamTarget,
} from './upstream.js';
import {
  handshakeProblem,
  handshakeResponse,
  isWebSocketRequest,
  offeredSubprotocols,
  WebSocketConnection,
} from './websocket.js';

/** The WebSocket subprotocol translated here. */
export const STREAM_PROTOCOL_V5 = 'v5.channel.k8s.io';
/** The SPDY protocol asked of the agent. */
const SPDY_PROTOCOL = 'v4.channel.k8s.io';

const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, error: 3, resize: 4, close: 255 } as const;

/** How long the client gets to close the connection after the final Status (kube's 15 min). */
const FINISH_TIMEOUT_MS = 15 * 60_000;

/** The streams a session has (from the request's stdin/stdout/stderr/tty options). */
export interface StreamOptions {
  readonly stdin: boolean;
  readonly stdout: boolean;
  readonly stderr: boolean;
  readonly tty: boolean;
}

/** True for a WebSocket request offering `v5.channel.k8s.io` (the ones translated). */
export function wantsStreamTranslation(headers: IncomingHttpHeaders): boolean {
  return isWebSocketRequest(headers) && offeredSubprotocols(headers).includes(STREAM_PROTOCOL_V5);
}

/** A `Status` as kube's JSON encoding writes it. */
type Status = Record<string, unknown>;

const SUCCESS: Status = { metadata: {}, status: 'Success' };

function internalError(message: string): Status {
  return {
    metadata: {},
    status: 'Failure',
    message: `Internal error occurred: ${message}`,
    reason: 'InternalError',
    details: { causes: [{ message }] },
    code: 500,
  };
}

function exitStatus(code: number): Status {
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: command terminated with exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/** The client's final Status from what the agent wrote on the error stream (v4 semantics). */
export function finalStatus(errorStream: Buffer): Status {
  if (errorStream.length === 0) return SUCCESS;
  let status: {
    status?: string;
    reason?: string;
    message?: string;
    details?: { causes?: { reason?: string; message?: string }[] };
  };
  try {
    status = JSON.parse(errorStream.toString('utf8')) as typeof status;
  } catch (err) {
    return internalError(
      `error stream protocol error: ${(err as Error).message} in ${JSON.stringify(errorStream.toString('utf8'))}`,
    );
  }
  if (status.status === 'Success') return SUCCESS;
  if (status.status !== 'Failure') return internalError('error stream protocol error: unknown error');
  if (status.reason !== 'NonZeroExitCode') return internalError(status.message ?? '');
  const cause = status.details?.causes?.find((c) => c.reason === 'ExitCode');
  if (cause === undefined) return internalError('error stream protocol error: no ExitCode cause given');
  const code = /^\d+$/.test(cause.message ?? '') ? Number(cause.message) : NaN;
  if (!(code >= 0 && code <= 255)) {
    return internalError(
      `error stream protocol error: invalid exit code value ${JSON.stringify(cause.message)}`,
    );
  }
  return exitStatus(code);
}

/** The agent's error answer (not a 101) as a Status: its own Status if it sent one. */
function upgradeFailure(body: Buffer): Status {
  const text = body.toString('utf8').trim();
  try {
    const parsed = JSON.parse(text) as { kind?: string; status?: string };
    if (parsed.kind === 'Status' && parsed.status === 'Failure') return parsed;
  } catch {
    // plain text
  }
  return internalError(`unable to upgrade connection: ${text}`);
}

/**
 * Serves one exec or attach session: the client's WebSocket on `client` (the request's
 * connection, taken from the HTTP layer, with `head` its bytes after the request) to the
 * agent's SPDY at `target` + `path`. Resolves when both sides are closed, with the HTTP code
 * kube's `apiserver_stream_translator_requests_total` counts the session under (200 when the
 * command ran, whatever its exit code; 400 for a bad handshake; else the final Status's code);
 * never rejects.
 */
export async function translateStream(
  client: { readonly connection: Duplex; readonly head: Buffer },
  request: { readonly method: string; readonly headers: IncomingHttpHeaders; readonly rawHeaders: string[] },
  target: UpstreamTarget,
  path: string,
  opts: StreamOptions,
): Promise<number> {
  const { connection } = client;
  const problem = handshakeProblem(request.method, request.headers);
  if (problem !== undefined) {
    connection.end(plainResponse(400, 'Bad Request', 'text/plain; charset=utf-8', `${problem}\n`));
    return 400;
  }
  connection.write(handshakeResponse(request.headers['sec-websocket-key'] ?? '', STREAM_PROTOCOL_V5));
  const session = new TranslatedSession(client, opts);
  const status = await session.run(target, path, request.rawHeaders);
  return typeof status['code'] === 'number' ? status['code'] : 200;
}

/** One translated session (see the module comment). */
class TranslatedSession {
  readonly #opts: StreamOptions;
  readonly #ws: WebSocketConnection;
  #spdy: SpdySession | undefined;
  #stdin: SpdyStream | undefined;
  #resize: SpdyStream | undefined;
  /** Client input that arrived before the agent's streams were ready. */
  #pending: Buffer[] = [];
  #ready = false;
  #stdinClosed = false;
  #clientGone = false;
  readonly #clientClosed: Promise<void>;

  constructor(client: { readonly connection: Duplex; readonly head: Buffer }, opts: StreamOptions) {
    this.#opts = opts;
    let closed!: () => void;
    this.#clientClosed = new Promise((resolve) => (closed = resolve));
    this.#ws = new WebSocketConnection(
      client.connection,
      {
        message: (data) => this.#fromClient(data),
        closed: () => {
          this.#clientGone = true;
          this.#spdy?.destroy();
          closed();
        },
      },
      client.head,
    );
    const first = opts.stdout ? CHANNEL.stdout : opts.stderr ? CHANNEL.stderr : CHANNEL.error;
    this.#ws.send(Buffer.from([first]));
  }

  /** Runs the session; answers the final Status. */
  async run(target: UpstreamTarget, path: string, rawHeaders: readonly string[]): Promise<Status> {
    let status: Status;
    try {
      status = await this.#exchange(target, path, rawHeaders);
    } catch (err) {
      status = internalError((err as Error).message);
    }
    this.#spdy?.close();
    await this.#finish(status);
    return status;
  }

  /** Talks to the agent until its streams end; answers the final Status. */
  async #exchange(target: UpstreamTarget, path: string, rawHeaders: readonly string[]): Promise<Status> {
    const upstream = await dialUpstream(target);
    if (this.#clientGone) {
      upstream.destroy();
      return SUCCESS;
    }
    const drop = (h: string): boolean =>
      h === 'connection' ||
      h === 'upgrade' ||
      h === 'content-length' ||
      h === 'x-stream-protocol-version' ||
      h.startsWith('sec-websocket-');
    upstream.write(
      requestHead('POST', path, `${target.host}:${target.port}`, [
        ...forwardedHeaders(rawHeaders, drop),
        ['Connection', 'Upgrade'],
        ['Upgrade', 'SPDY/3.1'],
        ['X-Stream-Protocol-Version', SPDY_PROTOCOL],
        ['Content-Length', '0'],
      ]),
    );
    const head = await readResponseHead(upstream);
    if (head.status !== 101) return upgradeFailure(await readRest(upstream, head.rest));
    const chosen = head.headers.get('x-stream-protocol-version')?.[0] ?? '';
    if (chosen !== SPDY_PROTOCOL) {
      upstream.destroy();
      return internalError(`unsupported streaming protocol version: ${JSON.stringify(chosen)}`);
    }

    const errorChunks: Buffer[] = [];
    let open = 0;
    let allEnded!: () => void;
    const ended = new Promise<void>((resolve) => (allEnded = resolve));
    const spdy = new SpdySession(upstream, head.rest, () => undefined);
    this.#spdy = spdy;
    // A client gone while the agent answered: its command is not left running.
    if (this.#clientGone) spdy.destroy();
    const output = (type: string, onData: (chunk: Buffer) => void): SpdyStream => {
      open++;
      return spdy.open(
        { streamtype: type },
        {
          data: onData,
          end: () => {
            if (--open === 0) allEnded();
          },
        },
      );
    };
    const streams: SpdyStream[] = [output('error', (c) => errorChunks.push(c))];
    if (this.#opts.stdin) {
      this.#stdin = spdy.open({ streamtype: 'stdin' });
      streams.push(this.#stdin);
    }
    if (this.#opts.stdout) streams.push(output('stdout', (c) => this.#toClient(CHANNEL.stdout, c)));
    if (this.#opts.stderr && !this.#opts.tty) {
      streams.push(output('stderr', (c) => this.#toClient(CHANNEL.stderr, c)));
    }
    if (this.#opts.tty) {
      this.#resize = spdy.open({ streamtype: 'resize' });
      streams.push(this.#resize);
    }
    await Promise.all(streams.map((s) => s.replied()));
    this.#ready = true;
    for (const message of this.#pending.splice(0)) this.#fromClient(message);
    await ended;
    return finalStatus(Buffer.concat(errorChunks));
  }

  /** Agent output to the client, with back-pressure on the agent's connection. */
  #toClient(channel: number, chunk: Buffer): void {
    if (!this.#ws.send(Buffer.concat([Buffer.from([channel]), chunk]))) {
      this.#spdy?.pause();
      void this.#ws.drained().then(() => this.#spdy?.resume());
    }
  }

  #fromClient(message: Buffer): void {
    const spdy = this.#spdy;
    if (message.length === 0) return;
    if (!this.#ready || spdy === undefined) {
      // Held until the agent has answered every stream (at most 1,024 messages).
      if (this.#pending.length < 1024) this.#pending.push(message);
      return;
    }
    const channel = message[0];
    const data = message.subarray(1);
    if (channel === CHANNEL.stdin && this.#stdin !== undefined && !this.#stdinClosed) {
      if (!this.#stdin.write(data)) {
        this.#ws.pause();
        void spdy.drained().then(() => this.#ws.resume());
      }
    } else if (channel === CHANNEL.resize && this.#resize !== undefined) {
      this.#resize.write(data);
    } else if (channel === CHANNEL.close && data[0] === CHANNEL.stdin && this.#stdin !== undefined) {
      this.#stdinClosed = true;
      this.#stdin.end();
    }
  }

  /** Writes the final Status, closes the WebSocket and waits for the client to close. */
  async #finish(status: Status): Promise<void> {
    if (this.#clientGone) return;
    this.#ws.send(Buffer.concat([Buffer.from([CHANNEL.error]), Buffer.from(JSON.stringify(status))]));
    this.#ws.close();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#clientClosed,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, FINISH_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    this.#ws.destroy();
  }
}
