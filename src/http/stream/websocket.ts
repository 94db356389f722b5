/**
 * The server side of WebSocket (RFC 6455) on a raw connection, as much of it as Kubernetes'
 * streaming protocols use: the opening handshake (`Sec-WebSocket-Accept`, one chosen
 * subprotocol), message framing (fragmented messages reassembled, client frames unmasked), ping
 * answered with pong, and the closing handshake. No extensions (no permessage-deflate): none is
 * offered back, which RFC 6455 allows whatever the client asks.
 *
 * @example
 * ```ts
 * connection.write(handshakeResponse(key, 'v5.channel.k8s.io'));
 * const ws = new WebSocketConnection(connection, {
 *   message: (data) => console.log(data[0], data.subarray(1)),
 *   closed: () => console.log('gone'),
 * });
 * ws.send(Buffer.from([1, ...Buffer.from('hello')]));
 * ```
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { attachConnection, whenDrained } from './drain.js';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Frame opcodes. */
export const OPCODE = { continuation: 0, text: 1, binary: 2, close: 8, ping: 9, pong: 10 } as const;

/** Close status codes used here. */
export const CLOSE_NORMAL = 1000;
const CLOSE_PROTOCOL_ERROR = 1002;
const CLOSE_TOO_BIG = 1009;

/** A message larger than this ends the connection (1009): no Kubernetes client sends one. */
const MAX_MESSAGE_BYTES = 32 * 1024 * 1024;

/** True for a WebSocket opening handshake (`Upgrade: websocket`). */
export function isWebSocketRequest(headers: IncomingHttpHeaders): boolean {
  return (headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/** The subprotocols the client offers (`Sec-WebSocket-Protocol`, in its order). */
export function offeredSubprotocols(headers: IncomingHttpHeaders): string[] {
  const raw = headers['sec-websocket-protocol'];
  const joined = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
  return joined
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/**
 * Why a handshake cannot be accepted, or undefined when it can: the method must be GET, the
 * version 13 and the key present (RFC 6455 section 4.2.1).
 */
export function handshakeProblem(method: string, headers: IncomingHttpHeaders): string | undefined {
  if (method !== 'GET') return 'websocket: the client is not using the websocket protocol: method is not GET';
  if (headers['sec-websocket-version'] !== '13') return 'websocket: unsupported version: 13 not found';
  if (!headers['sec-websocket-key'])
    return "websocket: not a websocket handshake: 'Sec-WebSocket-Key' missing";
  return undefined;
}

/** The `101 Switching Protocols` answer to a handshake with `key`, choosing `protocol`. */
export function handshakeResponse(key: string, protocol: string | undefined): string {
  const accept = createHash('sha1')
    .update(key + GUID)
    .digest('base64');
  const lines = [
    'HTTP/1.1 101 Switching Protocols',
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Accept: ${accept}`,
  ];
  if (protocol !== undefined && protocol !== '') lines.push(`Sec-WebSocket-Protocol: ${protocol}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Encodes one unmasked (server to client) frame. */
export function encodeFrame(opcode: number, payload: Uint8Array, fin = true): Buffer {
  const len = payload.length;
  const first = (fin ? 0x80 : 0) | opcode;
  let header: Buffer;
  if (len < 126) {
    header = Buffer.from([first, len]);
  } else if (len < 0x10000) {
    header = Buffer.alloc(4);
    header[0] = first;
    header[1] = 126;
    header.writeUInt16BE(len, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = first;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(len), 2);
  }
  return Buffer.concat([header, payload]);
}

/** What a {@link WebSocketConnection} reports. */
export interface WebSocketEvents {
  /** A whole data message (text or binary). */
  message(data: Buffer, opcode: number): void;
  /** The connection is gone (closing handshake done, peer vanished, or protocol error). */
  closed(): void;
}

/**
 * A WebSocket connection after the handshake. Writes are queued on the connection; `send`
 * answers false when the connection's buffer is full (wait for {@link drained}).
 */
export class WebSocketConnection {
  readonly #conn: Duplex;
  readonly #events: WebSocketEvents;
  #buffer: Buffer = Buffer.alloc(0);
  /** Fragments of the message being received, and its opcode. */
  #fragments: Buffer[] = [];
  #fragmentBytes = 0;
  #fragmentOpcode = 0;
  #closeSent = false;
  #closed = false;

  constructor(conn: Duplex, events: WebSocketEvents, head: Buffer = Buffer.alloc(0)) {
    this.#conn = conn;
    this.#events = events;
    attachConnection(
      conn,
      head,
      (chunk) => this.#receive(chunk),
      () => this.#gone(),
    );
  }

  /** True once the connection is gone or our close frame went out. */
  get closing(): boolean {
    return this.#closed || this.#closeSent;
  }

  /** Sends one binary (default) or text message; false when the write buffer is full. */
  send(data: Uint8Array, opcode: number = OPCODE.binary): boolean {
    if (this.closing) return true;
    return this.#conn.write(encodeFrame(opcode, data));
  }

  /** Resolves when the connection can take more (after `send` answered false). */
  drained(): Promise<void> {
    return this.#closed ? Promise.resolve() : whenDrained(this.#conn);
  }

  /** Pauses reading from the client (back-pressure toward it). */
  pause(): void {
    this.#conn.pause();
  }

  resume(): void {
    this.#conn.resume();
  }

  /**
   * Starts the closing handshake: our close frame goes out, the client answers with its own and
   * closes the connection (client-go does, once it has read everything before the close).
   */
  close(code = CLOSE_NORMAL, reason = ''): void {
    if (this.closing) return;
    this.#closeSent = true;
    const payload = Buffer.alloc(2 + Buffer.byteLength(reason));
    payload.writeUInt16BE(code, 0);
    payload.write(reason, 2);
    this.#conn.write(encodeFrame(OPCODE.close, payload));
  }

  /** Drops the connection now. */
  destroy(): void {
    this.#conn.destroy();
    this.#gone();
  }

  #gone(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#events.closed();
  }

  #fail(code: number): void {
    this.close(code);
    this.#conn.end();
    this.#gone();
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    for (;;) {
      const frame = this.#nextFrame();
      if (frame === undefined || this.#closed) return;
      this.#handle(frame.fin, frame.opcode, frame.payload);
    }
  }

  /** Cuts the next whole frame off the buffer, unmasked; undefined when it is not all here. */
  #nextFrame(): { fin: boolean; opcode: number; payload: Buffer } | undefined {
    const buf = this.#buffer;
    if (buf.length < 2) return undefined;
    const b0 = buf[0] ?? 0;
    const b1 = buf[1] ?? 0;
    let len = b1 & 0x7f;
    let offset = 2;
    if (len === 126) {
      if (buf.length < 4) return undefined;
      len = buf.readUInt16BE(2);
      offset = 4;
    } else if (len === 127) {
      if (buf.length < 10) return undefined;
      const big = buf.readBigUInt64BE(2);
      if (big > BigInt(MAX_MESSAGE_BYTES)) {
        this.#fail(CLOSE_TOO_BIG);
        return undefined;
      }
      len = Number(big);
      offset = 10;
    }
    const masked = (b1 & 0x80) !== 0;
    const maskAt = offset;
    if (masked) offset += 4;
    if (buf.length < offset + len) return undefined;
    const payload = Buffer.from(buf.subarray(offset, offset + len));
    if (masked) {
      for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (buf[maskAt + (i % 4)] ?? 0);
    }
    this.#buffer = buf.subarray(offset + len);
    return { fin: (b0 & 0x80) !== 0, opcode: b0 & 0x0f, payload };
  }

  #handle(fin: boolean, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case OPCODE.ping:
        if (!this.closing) this.#conn.write(encodeFrame(OPCODE.pong, payload));
        return;
      case OPCODE.pong:
        return;
      case OPCODE.close:
        // The client's close: answer it (unless ours already went out) and end the connection.
        if (!this.#closeSent) {
          this.#closeSent = true;
          this.#conn.write(encodeFrame(OPCODE.close, payload.subarray(0, 2)));
        }
        this.#conn.end();
        this.#gone();
        return;
      case OPCODE.continuation:
        if (this.#fragments.length === 0) return this.#fail(CLOSE_PROTOCOL_ERROR);
        break;
      case OPCODE.text:
      case OPCODE.binary:
        if (this.#fragments.length > 0) return this.#fail(CLOSE_PROTOCOL_ERROR);
        this.#fragmentOpcode = opcode;
        break;
      default:
        return this.#fail(CLOSE_PROTOCOL_ERROR);
    }
    this.#fragments.push(payload);
    this.#fragmentBytes += payload.length;
    if (this.#fragmentBytes > MAX_MESSAGE_BYTES) return this.#fail(CLOSE_TOO_BIG);
    if (!fin) return;
    const message = this.#fragments.length === 1 ? payload : Buffer.concat(this.#fragments);
    this.#fragments = [];
    this.#fragmentBytes = 0;
    this.#events.message(message, this.#fragmentOpcode);
  }
}
