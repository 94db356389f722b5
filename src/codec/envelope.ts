/**
 * The protobuf envelope of the Kubernetes API, and watch stream frames.
 *
 * A protobuf body (`application/vnd.kubernetes.protobuf`) is the magic `6B 38 73 00` ("k8s\0")
 * followed by a `runtime.Unknown` message. kube-apiserver's serializer writes its fields as
 * gogo's Marshal does for non-pointer fields: always, in number order:
 *
 *     0a <len> { 0a <len> apiVersion  12 <len> kind }   typeMeta (1)
 *     12 <len> <message bytes of the object>           raw (2)
 *     1a 00                                            contentEncoding (3), empty
 *     22 00                                            contentType (4), empty
 *
 * A watch stream (`application/vnd.kubernetes.protobuf;stream=watch`) is a sequence of frames,
 * each a 4-byte big-endian length and then, with NO magic and no Unknown, a `meta.v1.WatchEvent`
 * `{ type (1): string, object (2): RawExtension { raw (1): <enveloped object> } }`: the watch
 * handler encodes the object with the enveloping serializer and the event with the raw one, and
 * client-go's `LengthDelimitedFramer` splits the frames (apiserver `handlers/watch.go`,
 * apimachinery `serializer/protobuf`).
 */
import { CodecError, malformed } from './errors.js';
import { Reader, varintSize, WIRE_END_GROUP, WIRE_LEN } from './wire.js';

/** `k8s\0`, the prefix of every protobuf body. */
export const PROTOBUF_MAGIC: Uint8Array = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** Media type of protobuf bodies. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** Media type of protobuf watch streams. */
export const PROTOBUF_WATCH_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';

/** A decoded `runtime.Unknown`. */
export interface Envelope {
  readonly apiVersion: string;
  readonly kind: string;
  /** The object's message bytes: a view into the input, not a copy. Empty when absent. */
  readonly raw: Uint8Array;
  /** Empty unless the sender set it (kube never does; it is unsupported). */
  readonly contentEncoding: string;
  /** Empty unless the sender set it (then it names the media type of `raw`). */
  readonly contentType: string;
}

function utf8Length(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function putVarint(out: Uint8Array, pos: number, n: number): number {
  while (n > 0x7f) {
    out[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[pos++] = n;
  return pos;
}

function putString(out: Buffer, pos: number, key: number, s: string, len: number): number {
  out[pos++] = key;
  pos = putVarint(out, pos, len);
  return pos + out.write(s, pos, 'utf8');
}

/**
 * Bytes of the envelope that come before the object's message bytes: the magic, typeMeta,
 * and the key and length of `raw`. The envelope is `envelopeHead(...)`, the message bytes,
 * then {@link ENVELOPE_TAIL}; callers that stream can write the three parts without joining.
 */
export function envelopeHead(apiVersion: string, kind: string, rawLength: number): Uint8Array {
  const av = utf8Length(apiVersion);
  const k = utf8Length(kind);
  const tm = 1 + varintSize(av) + av + 1 + varintSize(k) + k;
  const size = 4 + 1 + varintSize(tm) + tm + 1 + varintSize(rawLength);
  const out = Buffer.allocUnsafe(size);
  out.set(PROTOBUF_MAGIC, 0);
  let pos = 4;
  out[pos++] = 0x0a;
  pos = putVarint(out, pos, tm);
  pos = putString(out, pos, 0x0a, apiVersion, av);
  pos = putString(out, pos, 0x12, kind, k);
  out[pos++] = 0x12;
  putVarint(out, pos, rawLength);
  return out;
}

/** The envelope's last bytes: empty contentEncoding and contentType, as kube writes them. */
export const ENVELOPE_TAIL: Uint8Array = Uint8Array.of(0x1a, 0x00, 0x22, 0x00);

/**
 * Wraps an object's message bytes in the envelope (one allocation, one copy of `raw`).
 * @example encodeEnvelope('v1', 'ConfigMap', codec.encodeMessage('k8s.io.api.core.v1.ConfigMap', cm))
 */
export function encodeEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Uint8Array {
  const head = envelopeHead(apiVersion, kind, raw.length);
  const out = new Uint8Array(head.length + raw.length + ENVELOPE_TAIL.length);
  out.set(head, 0);
  out.set(raw, head.length);
  out.set(ENVELOPE_TAIL, head.length + raw.length);
  return out;
}

/** True when `bytes` start with the protobuf magic. */
export function hasProtobufMagic(bytes: Uint8Array): boolean {
  return (
    bytes.length >= 4 && bytes[0] === 0x6b && bytes[1] === 0x38 && bytes[2] === 0x73 && bytes[3] === 0x00
  );
}

/**
 * Reads an envelope. Unknown fields of `Unknown` are skipped, as Go does; the last occurrence
 * of a repeated singular field wins (typeMeta is merged field by field, as Go merges it).
 * @throws CodecError `PROTOBUF_MISSING_MAGIC` when the prefix is absent (including empty input),
 *   `PROTOBUF_MALFORMED` when nothing follows it or the message is not a valid `Unknown`.
 */
export function decodeEnvelope(bytes: Uint8Array): Envelope {
  if (!hasProtobufMagic(bytes)) {
    throw new CodecError('PROTOBUF_MISSING_MAGIC', 'provided data does not appear to be a protobuf message');
  }
  if (bytes.length === 4) throw malformed('empty body after the protobuf prefix');
  const r = new Reader(bytes, 4);
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array(0);
  let contentEncoding = '';
  let contentType = '';
  while (r.pos < r.end) {
    const key = r.uint32();
    const num = key >>> 3;
    const wt = key & 7;
    if (num === 0) throw malformed('field number 0');
    if (num > 4) {
      if (wt === WIRE_END_GROUP) throw malformed('unexpected end group');
      r.skip(wt);
      continue;
    }
    if (wt !== WIRE_LEN) throw malformed(`runtime.Unknown field ${num} with wire type ${wt}`);
    const end = r.lengthEnd();
    if (num === 1) {
      const saved = r.end;
      r.end = end;
      while (r.pos < end) {
        const k = r.uint32();
        const n = k >>> 3;
        if (n === 0) throw malformed('field number 0');
        if (n === 1 || n === 2) {
          if ((k & 7) !== WIRE_LEN) throw malformed(`runtime.TypeMeta field ${n} with wire type ${k & 7}`);
          const e = r.lengthEnd();
          if (n === 1) apiVersion = r.text(r.pos, e);
          else kind = r.text(r.pos, e);
          r.pos = e;
        } else {
          if ((k & 7) === WIRE_END_GROUP) throw malformed('unexpected end group');
          r.skip(k & 7);
        }
      }
      r.end = saved;
    } else if (num === 2) {
      raw = bytes.subarray(r.pos, end);
    } else if (num === 3) {
      contentEncoding = r.text(r.pos, end);
    } else {
      contentType = r.text(r.pos, end);
    }
    r.pos = end;
  }
  return { apiVersion, kind, raw, contentEncoding, contentType };
}

/**
 * One watch frame: the 4-byte big-endian length, then `WatchEvent{type, object: {raw}}` where
 * `objectEnvelope` is the object already wrapped by {@link encodeEnvelope}.
 * @example encodeWatchFrame('ADDED', encodeEnvelope('v1', 'Pod', podBytes))
 */
export function encodeWatchFrame(type: string, objectEnvelope: Uint8Array): Uint8Array {
  const t = utf8Length(type);
  const ext = 1 + varintSize(objectEnvelope.length) + objectEnvelope.length;
  const event = 1 + varintSize(t) + t + 1 + varintSize(ext) + ext;
  const out = Buffer.allocUnsafe(4 + event);
  out.writeUInt32BE(event, 0);
  let pos = putString(out, 4, 0x0a, type, t);
  out[pos++] = 0x12;
  pos = putVarint(out, pos, ext);
  out[pos++] = 0x0a;
  pos = putVarint(out, pos, objectEnvelope.length);
  out.set(objectEnvelope, pos);
  return out;
}

/** A decoded watch event frame. */
export interface WatchFrame {
  readonly type: string;
  /** The enveloped object (pass to {@link decodeEnvelope}); a view, not a copy. */
  readonly object: Uint8Array;
}

/**
 * Decodes one `WatchEvent` message (a frame without its length prefix).
 * @throws CodecError `PROTOBUF_MALFORMED`
 */
export function decodeWatchEvent(bytes: Uint8Array): WatchFrame {
  const r = new Reader(bytes);
  let type = '';
  let object: Uint8Array = new Uint8Array(0);
  while (r.pos < r.end) {
    const key = r.uint32();
    const num = key >>> 3;
    const wt = key & 7;
    if (num === 0) throw malformed('field number 0');
    if (num > 2) {
      if (wt === WIRE_END_GROUP) throw malformed('unexpected end group');
      r.skip(wt);
      continue;
    }
    if (wt !== WIRE_LEN) throw malformed(`WatchEvent field ${num} with wire type ${wt}`);
    const end = r.lengthEnd();
    if (num === 1) {
      type = r.text(r.pos, end);
    } else {
      const saved = r.end;
      r.end = end;
      while (r.pos < end) {
        const k = r.uint32();
        if (k >>> 3 === 0) throw malformed('field number 0');
        if (k === 0x0a) {
          const e = r.lengthEnd();
          object = bytes.subarray(r.pos, e);
          r.pos = e;
        } else if (k >>> 3 === 1) {
          throw malformed(`RawExtension raw with wire type ${k & 7}`);
        } else {
          if ((k & 7) === WIRE_END_GROUP) throw malformed('unexpected end group');
          r.skip(k & 7);
        }
      }
      r.end = saved;
    }
    r.pos = end;
  }
  return { type, object };
}

/**
 * Splits a protobuf watch stream into frames as chunks arrive (client-go's length-delimited
 * frame reader). Holds at most one partial frame.
 */
export class WatchFrameSplitter {
  #pending: Buffer = Buffer.alloc(0);
  readonly #maxFrame: number;

  /** @param maxFrame largest accepted frame body; a larger length is malformed. */
  constructor(maxFrame = 64 * 1024 * 1024) {
    this.#maxFrame = maxFrame;
  }

  /**
   * Adds a chunk and returns the events completed by it.
   * @throws CodecError `PROTOBUF_MALFORMED` on a frame over the limit or an invalid event.
   */
  push(chunk: Uint8Array): WatchFrame[] {
    this.#pending = this.#pending.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.#pending, chunk]);
    const out: WatchFrame[] = [];
    let pos = 0;
    while (this.#pending.length - pos >= 4) {
      const len = this.#pending.readUInt32BE(pos);
      if (len > this.#maxFrame) throw malformed(`watch frame of ${len} bytes exceeds ${this.#maxFrame}`);
      if (this.#pending.length - pos - 4 < len) break;
      out.push(decodeWatchEvent(this.#pending.subarray(pos + 4, pos + 4 + len)));
      pos += 4 + len;
    }
    this.#pending = this.#pending.subarray(pos);
    return out;
  }

  /** Bytes of an incomplete frame still held (non-zero at end of stream means truncation). */
  get pendingBytes(): number {
    return this.#pending.length;
  }
}
