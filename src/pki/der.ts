/**
 * A minimal DER (ASN.1 Distinguished Encoding Rules) writer: exactly the constructs an X.509 v3
 * certificate needs (`certificate.ts`). Each function returns the complete encoding (tag, length,
 * contents) of one value, so values compose by concatenation.
 *
 * Why not an ASN.1 library: the installed `@peculiar/x509` needs a `reflect-metadata` polyfill on
 * the global `Reflect` and costs ~130 ms to import, on the start path of a fresh server; these
 * few dozen lines plus `node:crypto` produce the same certificates in a few milliseconds.
 */

function lengthBytes(n: number): Uint8Array {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** A value with `tag` (one byte, class and constructed bit included) around `contents`. */
export function tlv(tag: number, ...contents: readonly Uint8Array[]): Uint8Array {
  const body = Buffer.concat(contents);
  return Buffer.concat([Uint8Array.of(tag), lengthBytes(body.length), body]);
}

/** SEQUENCE of the given encoded values. */
export function sequence(...items: readonly Uint8Array[]): Uint8Array {
  return tlv(0x30, ...items);
}

/** SET OF the given encoded values (callers pass one value per set, as X.501 names do). */
export function set(...items: readonly Uint8Array[]): Uint8Array {
  return tlv(0x31, ...items);
}

/**
 * INTEGER from unsigned big-endian magnitude bytes: leading zeros are stripped and a zero byte
 * is prepended when the top bit is set, so the value stays positive (Go rejects negative serials).
 */
export function unsignedInteger(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  const needsPad = trimmed.length === 0 || (trimmed[0] ?? 0) >= 0x80;
  return tlv(0x02, needsPad ? Uint8Array.of(0) : new Uint8Array(0), trimmed);
}

/** INTEGER for a small non-negative number. */
export function smallInteger(n: number): Uint8Array {
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return unsignedInteger(Uint8Array.from(bytes.length === 0 ? [0] : bytes));
}

/** BOOLEAN. */
export function boolean(v: boolean): Uint8Array {
  return tlv(0x01, Uint8Array.of(v ? 0xff : 0x00));
}

/** NULL. */
export function nullValue(): Uint8Array {
  return Uint8Array.of(0x05, 0x00);
}

/** OBJECT IDENTIFIER from dotted form (`1.2.840.10045.2.1`). */
export function oid(dotted: string): Uint8Array {
  const arcs = dotted.split('.').map((a) => Number.parseInt(a, 10));
  const [a0, a1, ...rest] = arcs;
  if (a0 === undefined || a1 === undefined) throw new RangeError(`bad OID ${dotted}`);
  const out: number[] = [a0 * 40 + a1];
  for (const arc of rest) {
    const group: number[] = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) group.unshift(0x80 | (v & 0x7f));
    out.push(...group);
  }
  return tlv(0x06, Uint8Array.from(out));
}

/** UTF8String. */
export function utf8String(s: string): Uint8Array {
  return tlv(0x0c, Buffer.from(s, 'utf8'));
}

/** OCTET STRING. */
export function octetString(bytes: Uint8Array): Uint8Array {
  return tlv(0x04, bytes);
}

/** BIT STRING with no unused bits. */
export function bitString(bytes: Uint8Array): Uint8Array {
  return tlv(0x03, Uint8Array.of(0), bytes);
}

/**
 * BIT STRING of named bits (bit 0 is the most significant bit of the first byte), in the
 * minimal DER form: trailing zero bits are dropped and counted as unused.
 */
export function namedBits(bits: readonly number[]): Uint8Array {
  const max = Math.max(...bits);
  const bytes = new Uint8Array(Math.floor(max / 8) + 1);
  for (const b of bits) bytes[Math.floor(b / 8)] = (bytes[Math.floor(b / 8)] ?? 0) | (0x80 >> (b % 8));
  const unused = 7 - (max % 8);
  return tlv(0x03, Uint8Array.of(unused), bytes);
}

function twoDigits(n: number): string {
  return String(n).padStart(2, '0');
}

/** X.509 Time: UTCTime through 2049, GeneralizedTime from 2050 (RFC 5280 4.1.2.5), whole seconds. */
export function time(d: Date): Uint8Array {
  const y = d.getUTCFullYear();
  const rest =
    twoDigits(d.getUTCMonth() + 1) +
    twoDigits(d.getUTCDate()) +
    twoDigits(d.getUTCHours()) +
    twoDigits(d.getUTCMinutes()) +
    twoDigits(d.getUTCSeconds()) +
    'Z';
  if (y < 2050) return tlv(0x17, Buffer.from(twoDigits(y % 100) + rest, 'ascii'));
  return tlv(0x18, Buffer.from(String(y) + rest, 'ascii'));
}

/** Context-specific constructed tag `[n]` wrapping whole encodings (EXPLICIT tagging). */
export function explicit(n: number, ...items: readonly Uint8Array[]): Uint8Array {
  return tlv(0xa0 | n, ...items);
}

/** Context-specific primitive tag `[n]` over raw contents (IMPLICIT tagging of a primitive). */
export function implicitPrimitive(n: number, contents: Uint8Array): Uint8Array {
  return tlv(0x80 | n, contents);
}

/** One decoded TLV: its tag, and where its contents start and end in the buffer. */
export interface TlvSpan {
  readonly tag: number;
  /** Offset of the first byte of the whole value (its tag). */
  readonly offset: number;
  readonly contentStart: number;
  readonly end: number;
}

/**
 * Reads the TLV at `offset` (single-byte tags, definite lengths: all DER needs).
 * @throws RangeError when the bytes are truncated or use an indefinite length.
 */
export function readTlv(buf: Uint8Array, offset: number): TlvSpan {
  const tag = buf[offset];
  let lenByte = buf[offset + 1];
  if (tag === undefined || lenByte === undefined) throw new RangeError('truncated DER');
  let pos = offset + 2;
  let length = lenByte;
  if (lenByte & 0x80) {
    const n = lenByte & 0x7f;
    if (n === 0 || n > 4) throw new RangeError('unsupported DER length');
    length = 0;
    for (let i = 0; i < n; i++) {
      lenByte = buf[pos++];
      if (lenByte === undefined) throw new RangeError('truncated DER');
      length = length * 256 + lenByte;
    }
  }
  if (pos + length > buf.length) throw new RangeError('truncated DER');
  return { tag, offset, contentStart: pos, end: pos + length };
}
