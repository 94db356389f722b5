/**
 * One HTTP/2 connection to one etcd member, carrying gRPC calls (unary ones, and the
 * bidirectional streams of watches): a small HTTP/2 client written for exactly that, on a plain
 * `net`/`tls` socket.
 *
 * Why not `node:http2`: its client stream costs ~40 µs of CPU per call before a byte is sent
 * (`ClientHttp2Session.request` wraps every request in an `AsyncResource` whose `bind` builds
 * two deprecation wrappers), plus a Duplex stream and its events per call. Profiled under 100
 * clients creating ConfigMaps on etcd, that was about a tenth of the server's CPU. A unary call
 * needs far less: one HEADERS and one DATA frame out, HEADERS, DATA and trailers back.
 *
 * What it does of HTTP/2 (RFC 9113): the preface and SETTINGS exchange, PINGs (answered, and
 * sent as keepalive while calls are open), GOAWAY,
 * RST_STREAM, CONTINUATION, padding, flow control both ways (windows from the peer's SETTINGS
 * and WINDOW_UPDATEs for sending; windows of {@link STREAM_WINDOW}/{@link SESSION_WINDOW} for
 * receiving, replenished at half), the peer's concurrent-stream limit, and HPACK (`hpack.ts`).
 * Writes are batched. A write to a loopback socket costs ~50 µs of CPU here (the kernel runs the
 * receiver's side of TCP in the sender's call), so while other calls are out, frames queued
 * during one pass of the event loop go out in one write after the pass's I/O callbacks
 * (`setImmediate`): one write carries the calls of every request that arrived in the pass. A call
 * on an idle connection goes out as soon as the current job ends (`process.nextTick`): at one
 * client, waiting for the pass cost 0.78 ms at p50 per create in a 3-round comparison.
 *
 * Failures: a call ends with a {@link GrpcFailure} carrying a gRPC status code. A call that
 * cannot have reached etcd, or whose connection failed (a connection that could not even be
 * started included), ends with UNAVAILABLE; the caller decides whether to try elsewhere (writes
 * are never repeated).
 */
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { encodeHeaders, HpackDecoder, type HeaderList } from './hpack.js';

/**
 * A call's end other than success: a gRPC status code and its message. `notSent` is true when
 * the request certainly never reached etcd (the connection was never made, the call's bytes were
 * never handed to it, or etcd refused the stream: GOAWAY below its id, REFUSED_STREAM), so it may
 * be sent to another member whatever it does (grpc-go's transparent retry).
 */
export class GrpcFailure extends Error {
  constructor(
    readonly code: number,
    readonly details: string,
    readonly notSent = false,
  ) {
    super(`gRPC status ${code}: ${details}`);
    this.name = 'GrpcFailure';
  }
}

export const GRPC_CANCELLED = 1;
export const GRPC_UNKNOWN = 2;
export const GRPC_DEADLINE_EXCEEDED = 4;
export const GRPC_INTERNAL = 13;
export const GRPC_UNAVAILABLE = 14;

/** Where to connect, and the TLS material when the member is `https`. */
export interface SessionTarget {
  readonly host: string;
  readonly port: number;
  readonly tls?: { readonly ca?: Buffer; readonly cert?: Buffer; readonly key?: Buffer };
  /** Keepalive: how often to ping while calls are open, and how long to wait for the answer (ms). */
  readonly keepalive?: { readonly intervalMs: number; readonly timeoutMs: number };
}

/**
 * Keepalive as the etcd3 client had it (grpc-js `keepalive_time_ms`/`keepalive_timeout_ms`): a
 * silently dead connection fails its calls (the watches re-open elsewhere) instead of hanging.
 * Pings go only while calls are open: etcd answers pings on an idle connection with GOAWAY.
 */
const KEEPALIVE = { intervalMs: 30_000, timeoutMs: 10_000 };

/** Receive windows: per call, and for the connection (bytes). Large lists must not stall on them. */
export const STREAM_WINDOW = 4 << 20;
export const SESSION_WINDOW = 16 << 20;
const DEFAULT_WINDOW = 65_535;
const DEFAULT_MAX_FRAME = 16_384;
const MAX_STREAM_ID = 2 ** 31 - 1;

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

const DATA = 0x0;
const HEADERS = 0x1;
const RST_STREAM = 0x3;
const SETTINGS = 0x4;
const PUSH_PROMISE = 0x5;
const PING = 0x6;
const GOAWAY = 0x7;
const WINDOW_UPDATE = 0x8;
const CONTINUATION = 0x9;

const END_STREAM = 0x1;
const ACK = 0x1;
const END_HEADERS = 0x4;
const PADDED = 0x8;
const PRIORITY = 0x20;

const SETTINGS_ENABLE_PUSH = 0x2;
const SETTINGS_MAX_CONCURRENT_STREAMS = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE = 0x4;
const SETTINGS_MAX_FRAME_SIZE = 0x5;

const PROTOCOL_ERROR = 0x1;
const CANCEL = 0x8;
const REFUSED_STREAM = 0x7;

/** gRPC's mapping of a non-200 HTTP status (from gRPC's HTTP-to-gRPC status document). */
function httpStatusCode(status: number): number {
  if (status === 401) return 16;
  if (status === 403) return 7;
  if (status === 404) return 12;
  if (status === 429 || status === 502 || status === 503 || status === 504) return GRPC_UNAVAILABLE;
  if (status === 400) return GRPC_INTERNAL;
  return GRPC_UNKNOWN;
}

/** What a call does with what arrives: a unary call gathers its one message, a stream passes each on. */
interface CallSink {
  data(chunk: Buffer): void;
  /** The call ended: `failure` is undefined when it ended with gRPC status 0. */
  end(failure: GrpcFailure | undefined): void;
}

/** One call (one HTTP/2 stream) on the connection. */
class Call {
  /** What is left to send (its HEADERS went out already); undefined when nothing waits. */
  pending: Buffer | undefined;
  /** The request side ends after `pending` (END_STREAM on its last frame). */
  endAfterPending = false;
  /** Some of its frames were handed to the socket (before that, etcd cannot have seen it). */
  written = false;
  sendWindow: number;
  unacked = 0;
  status: string | undefined;
  statusMessage = '';
  httpStatus: string | undefined;

  constructor(
    readonly id: number,
    readonly sink: CallSink,
    sendWindow: number,
  ) {
    this.sendWindow = sendWindow;
  }

  /** Takes in a header block: the response headers, then the trailers. */
  headers(list: HeaderList): void {
    for (const [name, value] of list) {
      if (name === ':status') this.httpStatus = value;
      else if (name === 'grpc-status') this.status = value;
      else if (name === 'grpc-message') this.statusMessage = decodeGrpcMessage(value);
    }
  }

  /** The stream ended: tells the sink how. */
  finish(): void {
    if (this.httpStatus !== undefined && this.httpStatus !== '200' && this.status === undefined) {
      this.sink.end(
        new GrpcFailure(httpStatusCode(Number(this.httpStatus)), `HTTP status ${this.httpStatus}`),
      );
    } else if (this.status === undefined) {
      this.sink.end(new GrpcFailure(GRPC_UNAVAILABLE, 'call ended without a status'));
    } else {
      const code = Number(this.status);
      this.sink.end(code === 0 ? undefined : new GrpcFailure(code, this.statusMessage));
    }
  }
}

/** A unary call's sink: one length-prefixed response message. */
function unarySink(resolve: (body: Buffer) => void, reject: (err: GrpcFailure) => void): CallSink {
  const chunks: Buffer[] = [];
  return {
    data: (chunk) => chunks.push(chunk),
    end: (failure) => {
      if (failure !== undefined) {
        reject(failure);
        return;
      }
      const data = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      if (data.length < 5 || data[0] !== 0 || data.readUInt32BE(1) !== data.length - 5) {
        reject(new GrpcFailure(GRPC_INTERNAL, 'malformed response message'));
        return;
      }
      resolve(data.subarray(5));
    },
  };
}

/** What a streaming call's owner hears: each response message, then how the call ended. */
export interface StreamHandlers {
  message(bytes: Buffer): void;
  /** `failure` is undefined when the server ended the call with status 0. */
  end(failure: GrpcFailure | undefined): void;
}

/** The owner's side of a streaming call. */
export interface StreamCall {
  /** Sends one request message. */
  write(message: Uint8Array): void;
  /** Resets the stream; no handler is called after this. */
  cancel(): void;
}

/** A streaming call's sink: splits the bytes into length-prefixed messages. */
function streamSink(handlers: StreamHandlers): CallSink & { closed: boolean } {
  let buffered: Buffer | undefined;
  const sink = {
    closed: false,
    data(chunk: Buffer): void {
      let buf = buffered === undefined ? chunk : Buffer.concat([buffered, chunk]);
      buffered = undefined;
      while (!sink.closed && buf.length >= 5) {
        const length = buf.readUInt32BE(1);
        if (buf.length < 5 + length) break;
        if (buf[0] !== 0) {
          sink.end(new GrpcFailure(GRPC_INTERNAL, 'compressed message, which this client did not ask for'));
          return;
        }
        handlers.message(buf.subarray(5, 5 + length));
        buf = buf.subarray(5 + length);
      }
      if (buf.length > 0) buffered = buf;
    },
    end(failure: GrpcFailure | undefined): void {
      if (sink.closed) return;
      sink.closed = true;
      handlers.end(failure);
    },
  };
  return sink;
}

/** An HTTP/2 connection carrying gRPC calls (see the module comment). */
export class GrpcSession {
  /** Undefined when the connection could not be started (the session is failed from the start). */
  readonly #socket: Socket | undefined;
  readonly #authority: string;
  readonly #scheme: string;
  readonly #decoder = new HpackDecoder();
  /** Encoded request headers per method path (they never change). */
  readonly #requestHeaders = new Map<string, Buffer>();
  readonly #calls = new Map<number, Call>();
  /** Calls waiting for a stream slot (the peer's MAX_CONCURRENT_STREAMS). */
  readonly #queued: (() => void)[] = [];
  /** Calls with request bytes waiting for send window. */
  readonly #blocked = new Set<Call>();
  #nextId = 1;
  #peerInitialWindow = DEFAULT_WINDOW;
  #peerMaxFrame = DEFAULT_MAX_FRAME;
  #peerMaxStreams = Infinity;
  #sendWindow = DEFAULT_WINDOW;
  #unacked = 0;
  /** Unparsed bytes from the socket (less than one frame). */
  #input: Buffer | undefined;
  /** A header block awaiting CONTINUATION frames. */
  #headerBlock: { id: number; parts: Buffer[]; endStream: boolean } | undefined;
  #out: Buffer[] = [];
  #flushScheduled = false;
  /** Why the connection can take no more calls (GOAWAY, ids used up, closed); undefined while it can. */
  #ended: string | undefined;
  #failed = false;
  #keepalive: NodeJS.Timeout | undefined;
  #pingTimer: NodeJS.Timeout | undefined;
  /**
   * etcd's HTTP/2 preface (its first SETTINGS) arrived. grpc-go sends no call on a connection
   * before that; here calls may be written earlier, but one whose connection ends first never
   * reached etcd's gRPC server (a connection accepted by a stopping member and closed unread).
   */
  #connected = false;

  constructor(target: SessionTarget) {
    this.#authority = `${target.host}:${target.port}`;
    this.#scheme = target.tls === undefined ? 'http' : 'https';
    const socket = connectSocket(target);
    if (socket instanceof Error) {
      // Bad TLS material, say: the session fails like one whose connection failed.
      this.#fail(`cannot connect: ${socket.message}`);
      return;
    }
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    socket.on('error', (err: Error) => this.#fail(err.message));
    socket.on('close', () => this.#fail('connection closed'));
    const settings = Buffer.alloc(18);
    settings.writeUInt16BE(SETTINGS_ENABLE_PUSH, 0);
    settings.writeUInt32BE(0, 2);
    settings.writeUInt16BE(SETTINGS_INITIAL_WINDOW_SIZE, 6);
    settings.writeUInt32BE(STREAM_WINDOW, 8);
    settings.writeUInt16BE(SETTINGS_MAX_CONCURRENT_STREAMS, 12);
    settings.writeUInt32BE(0, 14); // the server may not open streams to us
    this.#send(PREFACE);
    this.#frame(SETTINGS, 0, 0, settings);
    this.#windowUpdate(0, SESSION_WINDOW - DEFAULT_WINDOW);
    const keepalive = target.keepalive ?? KEEPALIVE;
    this.#keepalive = setInterval(() => this.#ping(keepalive.timeoutMs), keepalive.intervalMs).unref();
  }

  /** Pings while calls are open; no answer in `timeoutMs` closes the connection. */
  #ping(timeoutMs: number): void {
    if (this.#calls.size === 0 || this.#pingTimer !== undefined) return;
    this.#frame(PING, 0, 0, Buffer.alloc(8));
    this.#pingTimer = setTimeout(() => this.destroy('keepalive ping not answered'), timeoutMs).unref();
  }

  #pingAnswered(): void {
    clearTimeout(this.#pingTimer);
    this.#pingTimer = undefined;
  }

  /** False once the connection takes no new calls: make a new session. */
  get usable(): boolean {
    return this.#ended === undefined;
  }

  /**
   * Calls `path` with one request message (its protobuf bytes) and resolves with the response
   * message's bytes. `timeoutMs` is sent as `grpc-timeout`; the caller keeps its own timer and
   * calls `cancel` when it fires (the call then ends with CANCELLED and its stream is reset).
   */
  unary(
    path: string,
    message: Uint8Array,
    timeoutMs?: number,
  ): { done: Promise<Buffer>; cancel: () => void } {
    let cancel = (): void => {};
    const done = new Promise<Buffer>((resolve, reject) => {
      const sink = unarySink(resolve, reject);
      cancel = this.#open(path, sink, timeoutMs, [], (call) => this.#write(call, grpcFrame(message), true));
    });
    return { done, cancel: () => cancel() };
  }

  /**
   * Opens a streaming call (a bidirectional gRPC stream) on `path`, with `metadata` as extra
   * request headers. A connection failure ends it with UNAVAILABLE through `handlers.end`.
   */
  stream(path: string, handlers: StreamHandlers, metadata: HeaderList = []): StreamCall {
    const sink = streamSink(handlers);
    let call: Call | undefined;
    const early: Buffer[] = [];
    const cancelOpen = this.#open(path, sink, undefined, metadata, (started) => {
      call = started;
      for (const bytes of early.splice(0)) this.#write(started, bytes, false);
    });
    return {
      write: (message) => {
        if (sink.closed) return;
        if (call === undefined) early.push(grpcFrame(message));
        else this.#write(call, grpcFrame(message), false);
      },
      cancel: () => {
        if (sink.closed) return;
        sink.closed = true; // no handler after a cancel
        cancelOpen();
      },
    };
  }

  /** Closes the connection; calls still open end with UNAVAILABLE. */
  destroy(reason = 'session closed'): void {
    this.#fail(reason);
    this.#socket?.destroy();
  }

  /**
   * Starts a call once a stream slot is free: sends its HEADERS and hands it to `started`.
   * Returns the cancel function (which also takes a queued call off the queue).
   */
  #open(
    path: string,
    sink: CallSink,
    timeoutMs: number | undefined,
    metadata: HeaderList,
    started: (call: Call) => void,
  ): () => void {
    let call: Call | undefined;
    const start = (): void => {
      if (this.#ended !== undefined) {
        sink.end(new GrpcFailure(GRPC_UNAVAILABLE, this.#ended, true));
        return;
      }
      call = this.#start(path, sink, timeoutMs, metadata);
      started(call);
    };
    if (this.#ended === undefined && this.#calls.size >= this.#peerMaxStreams) this.#queued.push(start);
    else start();
    return () => {
      if (call !== undefined) {
        this.#cancel(call);
        return;
      }
      const i = this.#queued.indexOf(start);
      if (i >= 0) this.#queued.splice(i, 1);
      sink.end(new GrpcFailure(GRPC_CANCELLED, 'call cancelled'));
    };
  }

  #start(path: string, sink: CallSink, timeoutMs: number | undefined, metadata: HeaderList): Call {
    const id = this.#nextId;
    this.#nextId += 2;
    if (this.#nextId > MAX_STREAM_ID) this.#ended = 'stream ids used up';
    const call = new Call(id, sink, this.#peerInitialWindow);
    this.#calls.set(id, call);
    let block = this.#requestHeaders.get(path);
    if (block === undefined) {
      block = encodeHeaders([
        [':method', 'POST'],
        [':scheme', this.#scheme],
        [':path', path],
        [':authority', this.#authority],
        ['content-type', 'application/grpc'],
        ['te', 'trailers'],
      ]);
      this.#requestHeaders.set(path, block);
    }
    if (timeoutMs !== undefined) {
      block = Buffer.concat([block, encodeHeaders([['grpc-timeout', `${timeoutMs}m`]])]);
    }
    if (metadata.length > 0) block = Buffer.concat([block, encodeHeaders(metadata)]);
    this.#frame(HEADERS, END_HEADERS, id, block);
    return call;
  }

  /** Queues request bytes on a call; `end` closes its request side after them. */
  #write(call: Call, bytes: Buffer, end: boolean): void {
    if (this.#calls.get(call.id) !== call) return;
    call.pending = call.pending === undefined ? bytes : Buffer.concat([call.pending, bytes]);
    call.endAfterPending = end;
    this.#sendData(call);
  }

  /** Sends as much of the call's pending bytes as the windows allow. */
  #sendData(call: Call): void {
    let rest = call.pending;
    while (rest !== undefined) {
      const size = Math.min(rest.length, this.#peerMaxFrame, call.sendWindow, this.#sendWindow);
      if (size <= 0 && rest.length > 0) break;
      const last = size === rest.length;
      this.#frame(DATA, last && call.endAfterPending ? END_STREAM : 0, call.id, rest.subarray(0, size));
      call.sendWindow -= size;
      this.#sendWindow -= size;
      rest = last ? undefined : rest.subarray(size);
    }
    call.pending = rest;
    if (rest === undefined) this.#blocked.delete(call);
    else this.#blocked.add(call);
  }

  #cancel(call: Call): void {
    if (this.#calls.get(call.id) !== call) return;
    const code = Buffer.alloc(4);
    code.writeUInt32BE(CANCEL, 0);
    this.#frame(RST_STREAM, 0, call.id, code);
    this.#end(call, new GrpcFailure(GRPC_CANCELLED, 'call cancelled'));
  }

  /**
   * Takes `call` off the connection (nothing more is sent for it) and ends it: with `failure`, or
   * as its status said. Then starts a queued call, or closes a connection that takes no new calls
   * once its last call is done.
   */
  #end(call: Call, failure?: GrpcFailure): void {
    this.#calls.delete(call.id);
    this.#blocked.delete(call);
    if (failure === undefined) call.finish();
    else call.sink.end(failure);
    const next = this.#queued.shift();
    if (next !== undefined) next();
    else if (this.#ended !== undefined && this.#calls.size === 0 && !this.#failed) this.#socket?.end();
  }

  // --- input ---------------------------------------------------------------------------------

  #receive(chunk: Buffer): void {
    let buf = this.#input === undefined ? chunk : Buffer.concat([this.#input, chunk]);
    this.#input = undefined;
    try {
      while (buf.length >= 9) {
        const length = buf.readUIntBE(0, 3);
        if (length > DEFAULT_MAX_FRAME) throw new Error(`frame of ${length} bytes over the maximum`);
        if (buf.length < 9 + length) break;
        const type = buf[3] as number;
        const flags = buf[4] as number;
        const id = buf.readUInt32BE(5) & 0x7fffffff;
        this.#onFrame(type, flags, id, buf.subarray(9, 9 + length));
        buf = buf.subarray(9 + length);
      }
    } catch (err) {
      this.#protocolError((err as Error).message);
      return;
    }
    if (buf.length > 0) this.#input = buf;
  }

  #onFrame(type: number, flags: number, id: number, payload: Buffer): void {
    if (this.#headerBlock !== undefined && (type !== CONTINUATION || id !== this.#headerBlock.id)) {
      throw new Error('expected CONTINUATION');
    }
    switch (type) {
      case DATA:
        return this.#onData(flags, id, payload);
      case HEADERS: {
        let fragment = unpad(flags, payload);
        if (flags & PRIORITY) fragment = fragment.subarray(5);
        this.#headerBlock = { id, parts: [fragment], endStream: (flags & END_STREAM) !== 0 };
        if (flags & END_HEADERS) this.#onHeaderBlock();
        return;
      }
      case CONTINUATION: {
        const block = this.#headerBlock;
        if (block === undefined) throw new Error('CONTINUATION without HEADERS');
        block.parts.push(payload);
        if (flags & END_HEADERS) this.#onHeaderBlock();
        return;
      }
      case RST_STREAM: {
        const call = this.#calls.get(id);
        if (call === undefined) return;
        const code = payload.length >= 4 ? payload.readUInt32BE(0) : PROTOCOL_ERROR;
        const refused = code === REFUSED_STREAM;
        this.#end(
          call,
          new GrpcFailure(GRPC_UNAVAILABLE, `call reset by etcd (HTTP/2 code ${code})`, refused),
        );
        return;
      }
      case SETTINGS:
        if (flags & ACK) return;
        this.#connected = true;
        this.#onSettings(payload);
        this.#frame(SETTINGS, ACK, 0, Buffer.alloc(0));
        return;
      case PUSH_PROMISE:
        throw new Error('PUSH_PROMISE, which this client disabled');
      case PING:
        if (!(flags & ACK)) this.#frame(PING, ACK, 0, payload);
        else this.#pingAnswered();
        return;
      case GOAWAY:
        return this.#onGoaway(payload);
      case WINDOW_UPDATE: {
        const increment = payload.readUInt32BE(0) & 0x7fffffff;
        if (id === 0) this.#sendWindow += increment;
        else {
          const call = this.#calls.get(id);
          if (call !== undefined) call.sendWindow += increment;
        }
        for (const call of [...this.#blocked]) this.#sendData(call);
        return;
      }
      default:
        return; // PRIORITY and unknown frame types are ignored
    }
  }

  #onData(flags: number, id: number, payload: Buffer): void {
    // Padding counts against flow control too.
    this.#unacked += payload.length;
    if (this.#unacked >= SESSION_WINDOW / 2) {
      this.#windowUpdate(0, this.#unacked);
      this.#unacked = 0;
    }
    const call = this.#calls.get(id);
    if (call === undefined) return; // cancelled: the bytes still count for the connection
    call.sink.data(unpad(flags, payload));
    if (flags & END_STREAM) {
      this.#end(call);
      return;
    }
    call.unacked += payload.length;
    if (call.unacked >= STREAM_WINDOW / 2) {
      this.#windowUpdate(id, call.unacked);
      call.unacked = 0;
    }
  }

  #onHeaderBlock(): void {
    const block = this.#headerBlock as { id: number; parts: Buffer[]; endStream: boolean };
    this.#headerBlock = undefined;
    // Every block is decoded, even one for a call already gone: the HPACK table must stay in step.
    const list = this.#decoder.decode(
      block.parts.length === 1 ? (block.parts[0] as Buffer) : Buffer.concat(block.parts),
    );
    const call = this.#calls.get(block.id);
    if (call === undefined) return;
    call.headers(list);
    if (block.endStream) this.#end(call);
  }

  #onSettings(payload: Buffer): void {
    for (let at = 0; at + 6 <= payload.length; at += 6) {
      const id = payload.readUInt16BE(at);
      const value = payload.readUInt32BE(at + 2);
      if (id === SETTINGS_INITIAL_WINDOW_SIZE) {
        const delta = value - this.#peerInitialWindow;
        this.#peerInitialWindow = value;
        for (const call of this.#calls.values()) call.sendWindow += delta;
      } else if (id === SETTINGS_MAX_FRAME_SIZE) {
        this.#peerMaxFrame = value;
      } else if (id === SETTINGS_MAX_CONCURRENT_STREAMS) {
        this.#peerMaxStreams = value;
      }
    }
    for (const call of [...this.#blocked]) this.#sendData(call);
  }

  #onGoaway(payload: Buffer): void {
    const lastId = payload.readUInt32BE(0) & 0x7fffffff;
    const code = payload.readUInt32BE(4);
    this.#ended = `etcd closed the connection (GOAWAY, HTTP/2 code ${code})`;
    // Calls etcd did not take may be tried again elsewhere; the others finish on this connection.
    const failure = new GrpcFailure(GRPC_UNAVAILABLE, this.#ended, true);
    for (const [id, call] of [...this.#calls]) if (id > lastId) this.#end(call, failure);
    for (const start of this.#queued.splice(0)) start();
    if (this.#calls.size === 0) this.#socket?.end();
  }

  #protocolError(message: string): void {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(this.#nextId > 1 ? this.#nextId - 2 : 0, 0);
    payload.writeUInt32BE(PROTOCOL_ERROR, 4);
    this.#frame(GOAWAY, 0, 0, payload);
    this.#flush();
    this.destroy(`HTTP/2 protocol error from etcd: ${message}`);
  }

  /** The connection failed: every open and queued call ends with UNAVAILABLE. */
  #fail(reason: string): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#ended ??= reason;
    clearInterval(this.#keepalive);
    clearTimeout(this.#pingTimer);
    const calls = [...this.#calls.values()];
    this.#calls.clear();
    this.#blocked.clear();
    for (const call of calls) {
      const notSent = !this.#connected || !call.written;
      call.sink.end(new GrpcFailure(GRPC_UNAVAILABLE, reason, notSent));
    }
    for (const start of this.#queued.splice(0)) start();
  }

  // --- output --------------------------------------------------------------------------------

  #windowUpdate(id: number, increment: number): void {
    const payload = Buffer.allocUnsafe(4);
    payload.writeUInt32BE(increment, 0);
    this.#frame(WINDOW_UPDATE, 0, id, payload);
  }

  #frame(type: number, flags: number, id: number, payload: Uint8Array): void {
    const header = Buffer.allocUnsafe(9);
    header.writeUIntBE(payload.length, 0, 3);
    header[3] = type;
    header[4] = flags;
    header.writeUInt32BE(id, 5);
    this.#send(header);
    if (payload.length > 0) this.#send(payload);
  }

  /** Queues bytes; everything queued in one pass of the event loop goes out in one write. */
  #send(bytes: Uint8Array): void {
    if (this.#failed) return;
    this.#out.push(bytes as Buffer);
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    if (this.#calls.size > 1) setImmediate(this.#flushNow);
    else process.nextTick(this.#flushNow);
  }

  readonly #flushNow = (): void => this.#flush();

  #flush(): void {
    this.#flushScheduled = false;
    const out = this.#out;
    if (out.length === 0) return;
    this.#out = [];
    if (this.#failed) return;
    // Every open call's HEADERS was queued before this write: once the write is taken by the
    // kernel (its callback without an error), etcd may have seen each of them. A write that fails
    // (EPIPE, ECONNRESET: the peer was gone) delivered nothing of its own bytes.
    const handed: Call[] = [];
    for (const call of this.#calls.values()) if (!call.written) handed.push(call);
    this.#socket?.write(out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out), (err) => {
      if (err !== null && err !== undefined) return;
      for (const call of handed) call.written = true;
    });
  }
}

/** The socket to `target`, or the error that kept it from starting. */
function connectSocket(target: SessionTarget): Socket | Error {
  const host = target.host.replace(/^\[(.*)\]$/, '$1');
  try {
    if (target.tls === undefined) return netConnect({ host, port: target.port });
    return tlsConnect({
      host,
      port: target.port,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ...(target.tls.ca === undefined ? {} : { ca: target.tls.ca }),
      ...(target.tls.cert === undefined ? {} : { cert: target.tls.cert }),
      ...(target.tls.key === undefined ? {} : { key: target.tls.key }),
      ALPNProtocols: ['h2'],
    });
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** A gRPC message on the wire: uncompressed flag, 4-byte length, the message. */
function grpcFrame(message: Uint8Array): Buffer {
  const body = Buffer.allocUnsafe(5 + message.byteLength);
  body[0] = 0;
  body.writeUInt32BE(message.byteLength, 1);
  body.set(message, 5);
  return body;
}

/** A frame's payload without its padding (the PADDED flag: one length octet, then padding at the end). */
function unpad(flags: number, payload: Buffer): Buffer {
  if (!(flags & PADDED)) return payload;
  const padding = payload[0] as number;
  if (padding >= payload.length) throw new Error('padding longer than the frame');
  return payload.subarray(1, payload.length - padding);
}

/** `grpc-message` is percent-encoded. */
function decodeGrpcMessage(m: string): string {
  try {
    return decodeURIComponent(m);
  } catch {
    return m;
  }
}
