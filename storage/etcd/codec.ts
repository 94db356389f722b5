/**
 * Conversions between the storage contract's shapes and etcd's wire shapes: key spans to
 * `[key, range_end)` byte ranges, etcd key-values to {@link KeyValue}, and revisions.
 *
 * The etcd3 client is configured (by its proto loader) to hand 64-bit integers over as decimal
 * strings, and `kv-channel.ts` decodes with the same convention: revisions and lease ids cross
 * this boundary as such strings, made by {@link wire} and read by {@link fromWire} (protobufjs
 * `toObject` offers `longs` as String or Number only, and Number would round). Values are passed
 * through as the `Buffer` views the client decoded, never copied.
 */
import type { IKeyValue, IResponseHeader, KVClient } from 'etcd3';
import { compareKeys } from '../continue-token.js';
import type { KeySpan, KeyValue } from '../interface.js';

/** gRPC per-call options (the deadline), as the etcd3 RPC classes take them. */
export type CallOptions = NonNullable<Parameters<KVClient['range']>[1]>;

/** etcd's "\0": as a range end, "every key from `key` on"; as a key, the smallest key. */
const ZERO_KEY = Buffer.from([0]);
const EMPTY = Buffer.alloc(0);

/** A span as etcd's request fields; `rangeEnd` is never empty. */
export interface EtcdRange {
  readonly key: Buffer;
  readonly rangeEnd: Buffer;
}

/**
 * The byte range of `span`, or `undefined` when it is empty (`start ≥ end`).
 * - `{ prefix: '' }` is every key (etcd's "\0".."\0");
 * - a prefix of only 0xff bytes has no successor, so it runs to the end of the key space;
 * - `start: ''` starts at the smallest possible key (keys are never empty).
 */
export function spanToRange(span: KeySpan): EtcdRange | undefined {
  if ('prefix' in span) {
    if (span.prefix.length === 0) return { key: ZERO_KEY, rangeEnd: ZERO_KEY };
    const key = Buffer.from(span.prefix, 'utf8');
    return { key, rangeEnd: prefixEnd(key) };
  }
  if (compareKeys(span.start, span.end) >= 0) return undefined;
  const key = span.start.length === 0 ? ZERO_KEY : Buffer.from(span.start, 'utf8');
  return { key, rangeEnd: Buffer.from(span.end, 'utf8') };
}

/** The range end for every key starting with `prefix` (etcd's `GetPrefixRangeEnd`). */
export function prefixEnd(prefix: Buffer): Buffer {
  for (let i = prefix.length - 1; i >= 0; i--) {
    if (prefix[i] !== 0xff) {
      const end = Buffer.from(prefix.subarray(0, i + 1));
      end[i] = (end[i] ?? 0) + 1;
      return end;
    }
  }
  return ZERO_KEY;
}

/** The smallest key strictly after `key` in byte order: `key` + "\0". */
export function keyAfter(key: string): Buffer {
  const bytes = Buffer.from(key, 'utf8');
  return Buffer.concat([bytes, ZERO_KEY], bytes.length + 1);
}

/** A key as etcd bytes. */
export function keyBytes(key: string): Buffer {
  return Buffer.from(key, 'utf8');
}

/** A value as the bytes handed to the client, viewing (not copying) the caller's memory. */
export function valueBytes(value: Uint8Array): Buffer {
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

/** An etcd key-value as a {@link KeyValue}. With `keysOnly`, etcd already sent an empty value. */
export function toKeyValue(kv: IKeyValue): KeyValue {
  return {
    key: kv.key.toString('utf8'),
    value: kv.value ?? EMPTY,
    createRevision: fromWire(kv.create_revision),
    modRevision: fromWire(kv.mod_revision),
    lease: fromWire(kv.lease),
  };
}

/** The revision of a response header. */
export function headerRevision(header: IResponseHeader): bigint {
  return fromWire(header.revision);
}

/** A revision or lease id as the decimal string the client sends unchanged. */
export function wire(n: bigint): string {
  return n.toString();
}

/** A 64-bit integer of a response (a revision, a lease id), given as its decimal string. */
export function fromWire(n: string): bigint {
  return BigInt(n);
}
