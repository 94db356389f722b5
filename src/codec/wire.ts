/**
 * Protobuf wire primitives: a growable writer and a bounds-checked reader over one buffer.
 *
 * Written by hand rather than with protobufjs's Writer/Reader: the writer here emits a nested
 * message in place (it reserves one length byte and moves the body only when the length needs
 * more), so encoding an object is one pass with no per-field allocation; protobufjs's Writer
 * queues an operation object per value and re-walks them in `finish()`. See
 * `test/codec/codec.bench.ts` for the figures that decided it.
 *
 * Integers follow Go's generated code: `int32` and `int64` are varints of the 64-bit two's
 * complement (a negative value takes ten bytes); JSON numbers outside the safe integer range
 * were already rounded by `JSON.parse`, so they are written as the integer they round to.
 */
import { malformed } from './errors.js';

const TWO_32 = 4294967296;

/** Wire types. */
export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_LEN = 2;
export const WIRE_START_GROUP = 3;
export const WIRE_END_GROUP = 4;
export const WIRE_FIXED32 = 5;

/** The key of field `number` with wire type `wireType`. */
export function tagOf(number: number, wireType: number): number {
  return number * 8 + wireType;
}

/** Bytes a varint of the unsigned 32-bit value `n` takes. */
export function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/**
 * A growable output buffer. Not reentrant: one encode at a time per writer (encoding is
 * synchronous, so one writer per codec is enough).
 */
export class Writer {
  #buf: Buffer;
  #pos = 0;
  readonly #initialSize: number;

  constructor(initialSize = 8192) {
    this.#initialSize = initialSize;
    this.#buf = Buffer.allocUnsafe(initialSize);
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#pos;
  }

  /**
   * Forgets what was written. Keeps the buffer unless one big encode (a whole list) grew it
   * past 1 MiB: a long-lived codec must not pin that memory.
   */
  reset(): void {
    this.#pos = 0;
    if (this.#buf.length > 1024 * 1024) this.#buf = Buffer.allocUnsafe(this.#initialSize);
  }

  /** A copy of what was written (the writer's buffer is reused by the next encode). */
  finish(): Uint8Array {
    return new Uint8Array(this.#buf.subarray(0, this.#pos));
  }

  #grow(need: number): void {
    let size = this.#buf.length * 2;
    while (size < this.#pos + need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.#buf.copy(next, 0, 0, this.#pos);
    this.#buf = next;
  }

  /** Unsigned varint of a value in [0, 2^32). */
  uint32(n: number): void {
    if (this.#pos + 5 > this.#buf.length) this.#grow(5);
    const buf = this.#buf;
    let pos = this.#pos;
    while (n > 0x7f) {
      buf[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[pos++] = n;
    this.#pos = pos;
  }

  /**
   * Varint of an integer in the int64 range (the caller checks the range). Negative values are
   * written as their 64-bit two's complement, as Go's `uint64(v)` conversion does.
   */
  int64(n: number): void {
    if (n >= 0 && n < TWO_32) {
      this.uint32(n);
      return;
    }
    this.#words(n >>> 0, Math.floor(n / TWO_32) >>> 0);
  }

  /** Varint of a bigint in the int64 or uint64 range (two's complement for negatives). */
  bigInt64(n: bigint): void {
    const u = BigInt.asUintN(64, n);
    this.#words(Number(u & 0xffffffffn), Number(u >> 32n));
  }

  #words(lo: number, hi: number): void {
    if (this.#pos + 10 > this.#buf.length) this.#grow(10);
    const buf = this.#buf;
    let pos = this.#pos;
    while (hi !== 0) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 0x7f) {
      buf[pos++] = (lo & 0x7f) | 0x80;
      lo >>>= 7;
    }
    buf[pos++] = lo;
    this.#pos = pos;
  }

  /** Little-endian IEEE 754 double. */
  double(n: number): void {
    if (this.#pos + 8 > this.#buf.length) this.#grow(8);
    this.#buf.writeDoubleLE(n, this.#pos);
    this.#pos += 8;
  }

  /** Raw bytes, no length prefix. */
  raw(bytes: Uint8Array): void {
    if (this.#pos + bytes.length > this.#buf.length) this.#grow(bytes.length);
    this.#buf.set(bytes, this.#pos);
    this.#pos += bytes.length;
  }

  /** Length-prefixed bytes. */
  bytes(bytes: Uint8Array): void {
    this.uint32(bytes.length);
    this.raw(bytes);
  }

  /** Length-prefixed UTF-8 string. Lone surrogates become U+FFFD, as in any UTF-8 encoder. */
  string(s: string): void {
    const n = s.length;
    // A UTF-16 unit takes at most three UTF-8 bytes, so up to 42 units the length fits one byte:
    // reserve it, copy ASCII directly (the usual case for names and labels) and patch the length.
    if (n <= 42) {
      if (this.#pos + 1 + n * 3 > this.#buf.length) this.#grow(1 + n * 3);
      const buf = this.#buf;
      const start = this.#pos;
      let pos = start + 1;
      for (let i = 0; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) {
          pos = start + 1 + buf.write(s, start + 1, 'utf8');
          break;
        }
        buf[pos++] = c;
      }
      buf[start] = pos - start - 1;
      this.#pos = pos;
      return;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.uint32(len);
    if (this.#pos + len > this.#buf.length) this.#grow(len);
    this.#buf.write(s, this.#pos, 'utf8');
    this.#pos += len;
  }

  /**
   * Starts a length-delimited body: reserves one length byte and returns the mark to pass to
   * {@link endLength}.
   */
  beginLength(): number {
    if (this.#pos + 1 > this.#buf.length) this.#grow(1);
    return this.#pos++;
  }

  /** Ends the body begun at `mark`: writes its length, moving the body when it needs more bytes. */
  endLength(mark: number): void {
    const len = this.#pos - mark - 1;
    if (len < 0x80) {
      this.#buf[mark] = len;
      return;
    }
    const extra = varintSize(len) - 1;
    if (this.#pos + extra > this.#buf.length) this.#grow(extra);
    const buf = this.#buf;
    buf.copyWithin(mark + 1 + extra, mark + 1, this.#pos);
    let pos = mark;
    let n = len;
    while (n > 0x7f) {
      buf[pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[pos] = n;
    this.#pos += extra;
  }
}

/** Reads a 64-bit varint at `pos` of `buf` (below `end`); returns the low and high words. */
export interface Varint64 {
  lo: number;
  hi: number;
}

/**
 * A bounds-checked reader. Every failure is a `PROTOBUF_MALFORMED` CodecError; nothing here
 * can loop without consuming input.
 */
export class Reader {
  readonly buf: Buffer;
  pos: number;
  end: number;

  constructor(bytes: Uint8Array, start = 0, end = bytes.length) {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
    this.end = end;
  }

  /** A varint whose value must fit 32 bits unsigned (tags, lengths); larger values are malformed. */
  uint32(): number {
    const buf = this.buf;
    let pos = this.pos;
    let result = 0;
    let shift = 0;
    for (;;) {
      if (pos >= this.end) throw malformed('unexpected end of data in varint');
      const b = buf[pos++] as number;
      if (shift === 28) {
        // Fifth byte: four more value bits; Go rejects anything past 32 bits for lengths.
        if (b > 0x0f) throw malformed('varint overflows 32 bits');
        result += b * 0x10000000;
        break;
      }
      result |= (b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7;
    }
    this.pos = pos;
    return result >>> 0;
  }

  /** A varint of up to ten bytes as low/high 32-bit words (written into `out`). */
  varint64(out: Varint64): void {
    const buf = this.buf;
    const end = this.end;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    let i = 0;
    for (;;) {
      if (pos >= end) throw malformed('unexpected end of data in varint');
      const b = buf[pos++] as number;
      if (i < 4) lo |= (b & 0x7f) << (i * 7);
      else if (i === 4) {
        lo |= (b & 0x0f) << 28;
        hi |= (b & 0x7f) >> 4;
      } else if (i < 10) hi |= (b & 0x7f) << (i * 7 - 32);
      else throw malformed('varint longer than ten bytes');
      i++;
      if (b < 0x80) break;
    }
    this.pos = pos;
    out.lo = lo >>> 0;
    out.hi = hi >>> 0;
  }

  /** A length prefix, checked against the remaining input; returns the end of the body. */
  lengthEnd(): number {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > this.end) throw malformed('length-delimited field runs past the end of its message');
    return end;
  }

  /** Little-endian double. */
  double(): number {
    if (this.pos + 8 > this.end) throw malformed('unexpected end of data in fixed64');
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** UTF-8 text of `[start, end)`; invalid sequences become U+FFFD, as Go's JSON encoder does. */
  text(start: number, end: number): string {
    const buf = this.buf;
    if (end - start < 24) {
      let s = '';
      for (let i = start; i < end; i++) {
        const c = buf[i] as number;
        if (c >= 0x80) return buf.toString('utf8', start, end);
        s += String.fromCharCode(c);
      }
      return s;
    }
    return buf.toString('utf8', start, end);
  }

  /**
   * Skips one field of wire type `wireType` whose key was just read, including whole groups
   * (which Kubernetes never writes but the format allows).
   */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT: {
        for (;;) {
          if (this.pos >= this.end) throw malformed('unexpected end of data in varint');
          if ((this.buf[this.pos++] as number) < 0x80) return;
        }
      }
      case WIRE_FIXED64:
        this.#advance(8);
        return;
      case WIRE_LEN:
        this.pos = this.lengthEnd();
        return;
      case WIRE_FIXED32:
        this.#advance(4);
        return;
      case WIRE_START_GROUP: {
        let depth = 1;
        while (depth > 0) {
          const key = this.uint32();
          const wt = key & 7;
          if (key >>> 3 === 0) throw malformed('field number 0');
          if (wt === WIRE_START_GROUP) depth++;
          else if (wt === WIRE_END_GROUP) depth--;
          else this.skip(wt);
        }
        return;
      }
      default:
        throw malformed(`unexpected wire type ${wireType}`);
    }
  }

  #advance(n: number): void {
    if (this.pos + n > this.end) throw malformed('unexpected end of data');
    this.pos += n;
  }
}

/** The int64 value of a varint's words, as a JS number (rounded beyond 2^53, like JSON.parse). */
export function int64Value(v: Varint64): number {
  return (v.hi | 0) * TWO_32 + v.lo;
}
