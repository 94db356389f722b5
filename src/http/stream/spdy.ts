/**
 * The client side of SPDY/3.1 framing, as much as Kubernetes' streaming protocols need toward a
 * kubelet (or the node agent, which hands it to the runtime's streaming server): the client
 * opens streams with SYN_STREAM, sends DATA and half-closes with FIN, and receives SYN_REPLY,
 * DATA, RST_STREAM, PING and GOAWAY. The server side of these protocols never opens streams of
 * its own; one it opens anyway is refused (RST_STREAM REFUSED_STREAM).
 *
 * Header blocks: SPDY compresses every header block of a connection with one zlib stream
 * (SPDY/3's dictionary, a sync flush after each block). A zlib stream made of *stored*
 * (uncompressed) deflate blocks is a valid such stream: each header block here is a stored block
 * followed by the empty stored block a sync flush writes (`00 00 00 ff ff`; Go's inflater hands
 * out a stored block's bytes only when the next block starts, so without it the block's end would
 * be read past the frame), so nothing needs the shared compression state or the dictionary (the
 * dictionary only matters to compressed blocks, and the zlib header here does not announce one).
 * The receiver's header blocks (in SYN_REPLY) are not read: nothing in these protocols depends on
 * them.
 *
 * Flow control: the Go implementation every kubelet and runtime uses (spdystream) neither sends
 * nor honours WINDOW_UPDATE, so none is sent and those received are ignored.
 *
 * Frame layouts (big-endian): control `1|version(15) type(16) flags(8) length(24) data`;
 * data `0|stream-id(31) flags(8) length(24) data`.
 */
import type { Duplex } from 'node:stream';
import { attachConnection, whenDrained } from './drain.js';

const VERSION = 3;
const TYPE = { synStream: 1, synReply: 2, rstStream: 3, settings: 4, ping: 6, goAway: 7, headers: 8 };
const FLAG_FIN = 0x01;
/** RST_STREAM status codes used here. */
const REFUSED_STREAM = 3;
const CANCEL = 5;
/** The largest DATA payload sent at once. */
const MAX_DATA_CHUNK = 32 * 1024;

/** The zlib header of the first header block: deflate, 32 KiB window, no dictionary. */
const ZLIB_HEADER = Buffer.from([0x78, 0x01]);

/** Encodes a name/value header block (SPDY/3 section 2.6.10), uncompressed. */
export function nameValueBlock(headers: Readonly<Record<string, string>>): Buffer {
  const parts: Buffer[] = [];
  const count = Buffer.alloc(4);
  const names = Object.keys(headers);
  count.writeUInt32BE(names.length);
  parts.push(count);
  for (const name of names) {
    for (const s of [name.toLowerCase(), headers[name] ?? '']) {
      const bytes = Buffer.from(s, 'utf8');
      const len = Buffer.alloc(4);
      len.writeUInt32BE(bytes.length);
      parts.push(len, bytes);
    }
  }
  return Buffer.concat(parts);
}

/** The empty stored block of a zlib sync flush. */
const SYNC_FLUSH = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff]);

/**
 * A stored (uncompressed, non-final) deflate block holding `data` (under 64 KiB), then a sync
 * flush's empty stored block.
 */
function storedBlock(data: Buffer): Buffer {
  if (data.length > 0xffff) throw new Error(`SPDY header block of ${data.length} bytes is too large`);
  const head = Buffer.alloc(5);
  head[0] = 0x00; // BFINAL 0, BTYPE 00 (stored), padded to the byte
  head.writeUInt16LE(data.length, 1);
  head.writeUInt16LE(~data.length & 0xffff, 3);
  return Buffer.concat([head, data, SYNC_FLUSH]);
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(((flags & 0xff) << 24) | payload.length, 4);
  return Buffer.concat([head, payload]);
}

function dataFrame(streamId: number, flags: number, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(streamId & 0x7fffffff, 0);
  head.writeUInt32BE(((flags & 0xff) << 24) | data.length, 4);
  return Buffer.concat([head, data]);
}

/** What a stream reports. */
export interface SpdyStreamEvents {
  data?(chunk: Buffer): void;
  /** The server half-closed the stream (FIN), or reset it, or the connection ended. */
  end?(): void;
}

/** One stream opened by the client. */
export class SpdyStream {
  readonly id: number;
  readonly #session: SpdySession;
  readonly events: SpdyStreamEvents;
  #replied = false;
  #waiters: (() => void)[] = [];
  #localClosed = false;
  #remoteClosed = false;

  /** @internal made by {@link SpdySession.open}. */
  constructor(session: SpdySession, id: number, events: SpdyStreamEvents) {
    this.#session = session;
    this.id = id;
    this.events = events;
  }

  /** True once the server has ended its side. */
  get remoteClosed(): boolean {
    return this.#remoteClosed;
  }

  /** Resolves when the server has answered the SYN_STREAM (or the stream ended first). */
  replied(): Promise<void> {
    if (this.#replied || this.#remoteClosed) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Sends data; false when the connection's write buffer is full. */
  write(chunk: Uint8Array): boolean {
    if (this.#localClosed) return true;
    let ok = true;
    for (let at = 0; at < chunk.length; at += MAX_DATA_CHUNK) {
      ok = this.#session.write(dataFrame(this.id, 0, chunk.subarray(at, at + MAX_DATA_CHUNK)));
    }
    return ok;
  }

  /** Half-closes the stream (an empty DATA frame with FIN). */
  end(): void {
    if (this.#localClosed) return;
    this.#localClosed = true;
    this.#session.write(dataFrame(this.id, FLAG_FIN, Buffer.alloc(0)));
  }

  /** @internal */
  onReply(): void {
    this.#replied = true;
    for (const w of this.#waiters.splice(0)) w();
  }

  /** @internal */
  onRemoteEnd(): void {
    if (this.#remoteClosed) return;
    this.#remoteClosed = true;
    for (const w of this.#waiters.splice(0)) w();
    this.events.end?.();
  }
}

/** A SPDY/3.1 client session on a connection that has switched protocols. */
export class SpdySession {
  readonly #conn: Duplex;
  readonly #streams = new Map<number, SpdyStream>();
  #nextId = 1;
  #firstHeaders = true;
  #buffer: Buffer = Buffer.alloc(0);
  #closed = false;
  readonly #onClose: () => void;

  /**
   * @param conn the connection after the `101 Switching Protocols` answer
   * @param head bytes already read after that answer
   * @param onClose called once when the connection is gone or the server sent GOAWAY
   */
  constructor(conn: Duplex, head: Buffer, onClose: () => void) {
    this.#conn = conn;
    this.#onClose = onClose;
    attachConnection(
      conn,
      head,
      (chunk) => this.#receive(chunk),
      () => this.#gone(),
    );
  }

  /** True once the connection is gone. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Opens a stream with `headers` (lower-cased names). */
  open(headers: Readonly<Record<string, string>>, events: SpdyStreamEvents = {}): SpdyStream {
    const id = this.#nextId;
    this.#nextId += 2;
    const stream = new SpdyStream(this, id, events);
    this.#streams.set(id, stream);
    let block = storedBlock(nameValueBlock(headers));
    if (this.#firstHeaders) {
      block = Buffer.concat([ZLIB_HEADER, block]);
      this.#firstHeaders = false;
    }
    const fixed = Buffer.alloc(10);
    fixed.writeUInt32BE(id, 0); // stream id
    fixed.writeUInt32BE(0, 4); // associated-to stream id
    fixed[8] = 0; // priority 0 (highest), unused bits
    fixed[9] = 0; // slot
    this.write(controlFrame(TYPE.synStream, 0, Buffer.concat([fixed, block])));
    if (this.#closed) stream.onRemoteEnd();
    return stream;
  }

  /** Writes raw frame bytes; false when the write buffer is full. */
  write(frame: Buffer): boolean {
    if (this.#closed) return true;
    return this.#conn.write(frame);
  }

  /** Resolves when the connection can take more. */
  drained(): Promise<void> {
    return this.#closed ? Promise.resolve() : whenDrained(this.#conn);
  }

  pause(): void {
    this.#conn.pause();
  }

  resume(): void {
    this.#conn.resume();
  }

  /** Ends the session: GOAWAY, then the connection. */
  close(): void {
    if (this.#closed) return;
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(0, 0);
    payload.writeUInt32BE(0, 4);
    this.#conn.end(controlFrame(TYPE.goAway, 0, payload));
    this.#gone();
  }

  /** Drops the connection now. */
  destroy(): void {
    this.#conn.destroy();
    this.#gone();
  }

  #gone(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const s of this.#streams.values()) s.onRemoteEnd();
    this.#onClose();
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 8 && !this.#closed) {
      const length = this.#buffer.readUInt32BE(4) & 0xffffff;
      if (this.#buffer.length < 8 + length) return;
      const frame = this.#buffer.subarray(0, 8 + length);
      this.#buffer = this.#buffer.subarray(8 + length);
      this.#frame(frame);
    }
  }

  #frame(frame: Buffer): void {
    const flags = frame[4] ?? 0;
    const payload = frame.subarray(8);
    if (((frame[0] ?? 0) & 0x80) === 0) {
      const stream = this.#streams.get(frame.readUInt32BE(0) & 0x7fffffff);
      if (stream === undefined) return;
      if (payload.length > 0) stream.events.data?.(Buffer.from(payload));
      if (flags & FLAG_FIN) this.#ended(stream);
      return;
    }
    const type = frame.readUInt16BE(2);
    switch (type) {
      case TYPE.synReply:
      case TYPE.headers: {
        const stream = this.#streams.get(payload.readUInt32BE(0) & 0x7fffffff);
        if (stream === undefined) return;
        stream.onReply();
        if (flags & FLAG_FIN) this.#ended(stream);
        return;
      }
      case TYPE.rstStream: {
        const stream = this.#streams.get(payload.readUInt32BE(0) & 0x7fffffff);
        if (stream !== undefined) this.#ended(stream);
        return;
      }
      case TYPE.synStream: {
        // The server may not open streams in these protocols.
        const reset = Buffer.alloc(8);
        reset.writeUInt32BE(payload.readUInt32BE(0) & 0x7fffffff, 0);
        reset.writeUInt32BE(REFUSED_STREAM, 4);
        this.write(controlFrame(TYPE.rstStream, 0, reset));
        return;
      }
      case TYPE.ping:
        // Answer the server's pings (even ids); ours would be odd, and none are sent.
        if (payload.length >= 4 && payload.readUInt32BE(0) % 2 === 0) {
          this.write(controlFrame(TYPE.ping, 0, Buffer.from(payload.subarray(0, 4))));
        }
        return;
      case TYPE.goAway:
        this.#conn.end();
        this.#gone();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, NOOP: nothing to do (see the module comment).
        return;
    }
  }

  #ended(stream: SpdyStream): void {
    this.#streams.delete(stream.id);
    stream.onRemoteEnd();
  }

  /** Resets a stream (CANCEL): the server drops it. */
  reset(stream: SpdyStream): void {
    const payload = Buffer.alloc(8);
    payload.writeUInt32BE(stream.id, 0);
    payload.writeUInt32BE(CANCEL, 4);
    this.write(controlFrame(TYPE.rstStream, 0, payload));
    this.#ended(stream);
  }
}
