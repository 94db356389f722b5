/**
 * Continue tokens for paged range reads: opaque, versioned, and integrity-protected.
 *
 * A token carries the revision the first chunk was read at and the last key it returned; the
 * next chunk is read at that revision, strictly after that key. The token is bound to the span it
 * was issued for and sealed with an HMAC-SHA256 tag (truncated to 128 bits) under the store's
 * secret, so a garbled, forged, or foreign token is rejected as invalid and never misread.
 *
 * A token may also carry how many live keys follow its last key at its revision, so that a
 * store that counts by scanning (the embedded log) counts a paged read's rest once, on the first
 * chunk, and each later chunk subtracts what it returned: paging through N keys stays O(N).
 *
 * Layout before base64url, version 2:
 * `version(1) | revision(8, big-endian) | remaining+1(4, big-endian; 0: unknown) | lastKey(utf8) | tag(16)`;
 * version 1 (still opened) lacks the remaining count. The tag covers everything before it and
 * the span's identity.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidContinueError } from './errors.js';
import type { ContinuePosition, KeySpan } from './interface.js';

export type { ContinuePosition };

const VERSION = 2;
const VERSION_WITHOUT_COUNT = 1;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + 8 + 4;
const HEADER_BYTES_WITHOUT_COUNT = 1 + 8;
/** Counts at or above this are not carried (the field holds count + 1 in 32 bits). */
const COUNT_LIMIT = 0xffff_ffff;

/** Seals and opens continue tokens under one secret. */
export class ContinueTokens {
  readonly #secret: Uint8Array;

  /** @param secret at least 16 random bytes, the same for every replica sharing a store. */
  constructor(secret: Uint8Array) {
    if (secret.byteLength < 16) throw new RangeError('continue token secret must be at least 16 bytes');
    this.#secret = Uint8Array.from(secret);
  }

  /** A token for the chunk after `position` in `span`. */
  seal(span: KeySpan, position: ContinuePosition): string {
    const key = Buffer.from(position.lastKey, 'utf8');
    const body = Buffer.allocUnsafe(HEADER_BYTES + key.byteLength);
    body.writeUInt8(VERSION, 0);
    body.writeBigUInt64BE(position.revision, 1);
    const remaining = position.remaining;
    const known =
      remaining !== undefined && Number.isInteger(remaining) && remaining >= 0 && remaining < COUNT_LIMIT;
    body.writeUInt32BE(known ? remaining + 1 : 0, 9);
    key.copy(body, HEADER_BYTES);
    return Buffer.concat([body, this.#tag(span, body)]).toString('base64url');
  }

  /**
   * The position a token stands for.
   * @throws InvalidContinueError when the token is not one this secret sealed for `span`, or its
   *   key lies outside `span`.
   */
  open(span: KeySpan, token: string): ContinuePosition {
    if (token.length === 0 || token.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(token)) {
      throw new InvalidContinueError('not a continue token');
    }
    const raw = Buffer.from(token, 'base64url');
    // Base64 decoding ignores trailing bits and stray characters; only the canonical encoding of
    // the decoded bytes is the token we issued.
    if (raw.toString('base64url') !== token) throw new InvalidContinueError('not a canonical token');
    const version = raw.readUInt8(0);
    if (version !== VERSION && version !== VERSION_WITHOUT_COUNT) {
      throw new InvalidContinueError('unknown token version');
    }
    const header = version === VERSION ? HEADER_BYTES : HEADER_BYTES_WITHOUT_COUNT;
    if (raw.byteLength < header + TAG_BYTES) throw new InvalidContinueError('token too short');
    const body = raw.subarray(0, raw.byteLength - TAG_BYTES);
    const tag = raw.subarray(raw.byteLength - TAG_BYTES);
    if (!timingSafeEqual(tag, this.#tag(span, body))) {
      throw new InvalidContinueError('token does not match this list');
    }
    const revision = body.readBigUInt64BE(1);
    const lastKey = body.subarray(header).toString('utf8');
    if (!spanContains(span, lastKey)) throw new InvalidContinueError('token key outside the list');
    const count = version === VERSION ? body.readUInt32BE(9) : 0;
    return count === 0 ? { revision, lastKey } : { revision, lastKey, remaining: count - 1 };
  }

  #tag(span: KeySpan, body: Uint8Array): Buffer {
    return createHmac('sha256', this.#secret)
      .update(spanIdentity(span))
      .update(body)
      .digest()
      .subarray(0, TAG_BYTES);
  }
}

/** A stable string naming a span, for binding tokens to it. */
function spanIdentity(span: KeySpan): string {
  return 'prefix' in span ? `p\u0000${span.prefix}` : `r\u0000${span.start}\u0000${span.end}`;
}

/** Compares strings by UTF-8 byte order (the order of etcd and LevelDB keys). */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** True when `key` lies in `span`. */
export function spanContains(span: KeySpan, key: string): boolean {
  if ('prefix' in span) return key.startsWith(span.prefix);
  return compareKeys(key, span.start) >= 0 && compareKeys(key, span.end) < 0;
}
