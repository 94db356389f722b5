/**
 * The protobuf messages of the etcd channel's calls (`kv-channel.ts`: `KV/Range`, `KV/Txn`,
 * `Watch/Watch`, `Maintenance/Status`), encoded and decoded here rather than by protobufjs, in the
 * shapes the `etcd3` package gives them (field names as in its `rpc.proto` and `kv.proto`):
 * - responses come out as protobufjs's `toObject` makes them with etcd3's conventions: 64-bit
 *   integers as decimal strings, enums by name, unset fields at their defaults (`'0'`, `false`,
 *   `''`, `[]`, an empty `Buffer`, `null` for a message), a oneof's name in its own field
 *   (`response: 'response_put'`); bytes are views of the message, not copies;
 * - requests go in with 64-bit integers as decimal strings, numbers or bigints, enums by name or
 *   number.
 *
 * Why by hand: 64-bit integers. protobufjs reads them into long.js objects, which `toObject` then
 * prints in decimal by long division, several objects per digit group, and the bundles leave
 * long.js out (tools/bundle.ts), where protobufjs rounds them to doubles: etcd's lease ids are
 * above 2^53. Here they are read as two 32-bit halves, printed straight as a number below 2^53
 * (every revision) and through a bigint above it.
 *
 * The field numbers are etcd's (api/etcdserverpb/rpc.proto, api/mvccpb/kv.proto).
 */
import type {
  ICompare,
  IDeleteRangeRequest,
  IPutRequest,
  IRangeRequest,
  IRangeResponse,
  IRequestOp,
  ITxnRequest,
  ITxnResponse,
  IWatchRequest,
  IWatchResponse,
} from 'etcd3';

/** What a field of a request may hold for a 64-bit integer. */
type Int64In = string | number | bigint | null | undefined;

const VARINT = 0;
const FIXED64 = 1;
const LENGTH = 2;
const FIXED32 = 5;
const TWO_32 = 4294967296;
const EMPTY = Buffer.alloc(0);

// ---------------------------------------------------------------------------------------------
// Encoding

/**
 * A message being written: small fields go to a scratch buffer, byte fields and nested messages
 * are kept by reference, and {@link finish} copies everything once.
 */
class Writer {
  readonly #parts: Uint8Array[] = [];
  #length = 0;
  #scratch = Buffer.allocUnsafe(64);
  #start = 0;
  #pos = 0;

  get length(): number {
    return this.#length + this.#pos - this.#start;
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#scratch.length) return;
    this.#cut();
    this.#scratch = Buffer.allocUnsafe(Math.max(64, n));
    this.#start = 0;
    this.#pos = 0;
  }

  #cut(): void {
    if (this.#pos === this.#start) return;
    this.#parts.push(this.#scratch.subarray(this.#start, this.#pos));
    this.#length += this.#pos - this.#start;
    this.#start = this.#pos;
  }

  /** A varint of an unsigned 32-bit `v`. */
  #u32(v: number): void {
    this.#room(5);
    while (v > 127) {
      this.#scratch[this.#pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.#scratch[this.#pos++] = v;
  }

  /** A varint of the 64 bits `hi:lo` (each unsigned 32-bit). */
  #u64(lo: number, hi: number): void {
    if (hi === 0) {
      this.#u32(lo);
      return;
    }
    this.#room(10);
    for (let i = 0; i < 4; i++) {
      this.#scratch[this.#pos++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    // Bits 28..34: the last four of lo, the first three of hi.
    const rest = ((lo & 15) | ((hi & 7) << 4)) >>> 0;
    hi >>>= 3;
    if (hi === 0) {
      this.#scratch[this.#pos++] = rest;
      return;
    }
    this.#scratch[this.#pos++] = rest | 128;
    while (hi > 127) {
      this.#scratch[this.#pos++] = (hi & 127) | 128;
      hi >>>= 7;
    }
    this.#scratch[this.#pos++] = hi;
  }

  #tag(field: number, wireType: number): void {
    this.#u32(((field << 3) | wireType) >>> 0);
  }

  /** A bool field, written only when true. */
  bool(field: number, v: boolean | null | undefined): void {
    if (v !== true) return;
    this.#tag(field, VARINT);
    this.#u32(1);
  }

  /**
   * An enum field (`names` maps names to numbers), written only when not 0; with `always` even
   * then (an element of a repeated field, written unpacked, which protobuf readers all accept).
   */
  enum(
    field: number,
    v: string | number | null | undefined,
    names: Readonly<Record<string, number>>,
    always = false,
  ): void {
    const n = enumNumber(v, names);
    if (n === 0 && !always) return;
    this.#tag(field, VARINT);
    if (n < 0)
      this.#u64(n >>> 0, 0xffffffff); // int32 enums sign-extend to 64 bits
    else this.#u32(n);
  }

  /** An int64 field; with `always` written even when 0 (a oneof's member). */
  int64(field: number, v: Int64In, always = false): void {
    if (v === undefined || v === null) return;
    const [lo, hi] = int64Halves(v);
    if (lo === 0 && hi === 0 && !always) return;
    this.#tag(field, VARINT);
    this.#u64(lo, hi);
  }

  /** A bytes field; with `always` written even when empty. */
  bytes(field: number, b: Uint8Array | null | undefined, always = false): void {
    if (b === undefined || b === null) return;
    if (!(b instanceof Uint8Array)) throw new TypeError('etcd message: a bytes field must be a Uint8Array');
    if (b.length === 0 && !always) return;
    this.#tag(field, LENGTH);
    this.#u32(b.length);
    this.#cut();
    this.#parts.push(b);
    this.#length += b.length;
  }

  /** A nested message field (written even when empty: it is set). */
  message(field: number, m: Writer): void {
    this.#tag(field, LENGTH);
    this.#u32(m.length);
    this.#cut();
    m.#cut();
    for (const p of m.#parts) this.#parts.push(p);
    this.#length += m.#length;
  }

  finish(): Buffer {
    this.#cut();
    return Buffer.concat(this.#parts, this.#length);
  }
}

function enumNumber(v: string | number | null | undefined, names: Readonly<Record<string, number>>): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const n = names[v];
  if (n === undefined) throw new TypeError(`etcd message: unknown enum value ${v}`);
  return n;
}

/** The two unsigned 32-bit halves of a 64-bit integer (two's complement when negative). */
function int64Halves(v: string | number | bigint): [number, number] {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) {
    return [(v % TWO_32) >>> 0, Math.floor(v / TWO_32) >>> 0];
  }
  if (typeof v === 'string' && /^\d{1,15}$/.test(v)) return int64Halves(Number(v));
  let big: bigint;
  try {
    big = BigInt(v);
  } catch {
    throw new TypeError(`etcd message: ${String(v)} is not a 64-bit integer`);
  }
  const u = BigInt.asUintN(64, big);
  return [Number(u & 0xffffffffn), Number(u >> 32n)];
}

const SORT_ORDER = { None: 0, Ascend: 1, Descend: 2 };
const SORT_TARGET = { Key: 0, Version: 1, Create: 2, Mod: 3, Value: 4 };
const COMPARE_RESULT = { Equal: 0, Greater: 1, Less: 2, NotEqual: 3 };
const COMPARE_TARGET = { Version: 0, Create: 1, Mod: 2, Value: 3, Lease: 4 };
const FILTER_TYPE = { Noput: 0, Nodelete: 1 };

function rangeRequest(r: IRangeRequest): Writer {
  const w = new Writer();
  w.bytes(1, r.key);
  w.bytes(2, r.range_end);
  w.int64(3, r.limit);
  w.int64(4, r.revision);
  w.enum(5, r.sort_order, SORT_ORDER);
  w.enum(6, r.sort_target, SORT_TARGET);
  w.bool(7, r.serializable);
  w.bool(8, r.keys_only);
  w.bool(9, r.count_only);
  w.int64(10, r.min_mod_revision);
  w.int64(11, r.max_mod_revision);
  w.int64(12, r.min_create_revision);
  w.int64(13, r.max_create_revision);
  return w;
}

function putRequest(r: IPutRequest): Writer {
  const w = new Writer();
  w.bytes(1, r.key);
  w.bytes(2, r.value);
  w.int64(3, r.lease);
  w.bool(4, r.prev_kv);
  w.bool(5, r.ignore_value);
  w.bool(6, r.ignore_lease);
  return w;
}

function deleteRangeRequest(r: IDeleteRangeRequest): Writer {
  const w = new Writer();
  w.bytes(1, r.key);
  w.bytes(2, r.range_end);
  w.bool(3, r.prev_kv);
  return w;
}

function requestOp(r: IRequestOp): Writer {
  const w = new Writer();
  if (r.request_range) w.message(1, rangeRequest(r.request_range));
  if (r.request_put) w.message(2, putRequest(r.request_put));
  if (r.request_delete_range) w.message(3, deleteRangeRequest(r.request_delete_range));
  if (r.request_txn) w.message(4, txnRequest(r.request_txn));
  return w;
}

function compare(c: ICompare): Writer {
  const w = new Writer();
  w.enum(1, c.result, COMPARE_RESULT);
  w.enum(2, c.target, COMPARE_TARGET);
  w.bytes(3, c.key);
  // The target_union oneof: its member is written even at its zero value.
  w.int64(4, c.version, true);
  w.int64(5, c.create_revision, true);
  w.int64(6, c.mod_revision, true);
  w.bytes(7, c.value, true);
  w.int64(8, c.lease, true);
  w.bytes(64, c.range_end);
  return w;
}

function txnRequest(r: ITxnRequest): Writer {
  const w = new Writer();
  for (const c of r.compare ?? []) w.message(1, compare(c));
  for (const op of r.success ?? []) w.message(2, requestOp(op));
  for (const op of r.failure ?? []) w.message(3, requestOp(op));
  return w;
}

/** A `RangeRequest` as protobuf. */
export function encodeRangeRequest(r: IRangeRequest): Buffer {
  return rangeRequest(r).finish();
}

/** A `TxnRequest` as protobuf. */
export function encodeTxnRequest(r: ITxnRequest): Buffer {
  return txnRequest(r).finish();
}

/** A `WatchRequest` as protobuf. */
export function encodeWatchRequest(r: IWatchRequest): Buffer {
  const w = new Writer();
  const create = r.create_request;
  if (create) {
    const c = new Writer();
    c.bytes(1, create.key);
    c.bytes(2, create.range_end);
    c.int64(3, create.start_revision);
    c.bool(4, create.progress_notify);
    for (const f of create.filters ?? []) c.enum(5, f, FILTER_TYPE, true);
    c.bool(6, create.prev_kv);
    c.int64(7, create.watch_id);
    c.bool(8, create.fragment);
    w.message(1, c);
  }
  if (r.cancel_request) {
    const c = new Writer();
    c.int64(1, r.cancel_request.watch_id);
    w.message(2, c);
  }
  if (r.progress_request) w.message(3, new Writer());
  return w.finish();
}

// ---------------------------------------------------------------------------------------------
// Decoding

/** A read position in one message's bytes. */
class Reader {
  readonly buf: Buffer;
  pos: number;
  readonly end: number;
  /** The halves of the last {@link varint64}. */
  lo = 0;
  hi = 0;

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  #byte(): number {
    if (this.pos >= this.end) throw new RangeError('etcd message: truncated');
    return this.buf[this.pos++] as number;
  }

  /** A varint that must fit 32 bits (tags, lengths, enums, bools); higher bits are dropped. */
  u32(): number {
    this.varint64();
    return this.lo;
  }

  /** A varint into {@link lo} and {@link hi}. */
  varint64(): void {
    let lo = 0;
    let hi = 0;
    let b = 0;
    let shift = 0;
    for (; shift < 28; shift += 7) {
      b = this.#byte();
      lo |= (b & 127) << shift;
      if (b < 128) {
        this.lo = lo >>> 0;
        this.hi = 0;
        return;
      }
    }
    b = this.#byte();
    lo |= (b & 15) << 28;
    hi = (b & 127) >> 4;
    if (b >= 128) {
      for (shift = 3; shift < 32; shift += 7) {
        b = this.#byte();
        hi |= (b & 127) << shift;
        if (b < 128) break;
      }
      if (b >= 128) throw new RangeError('etcd message: varint longer than 10 bytes');
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  /** A 64-bit varint as its decimal string. */
  int64(signed: boolean): string {
    this.varint64();
    return int64Text(this.lo, this.hi, signed);
  }

  bool(): boolean {
    this.varint64();
    return this.lo !== 0 || this.hi !== 0;
  }

  /** A length-delimited field's bounds: [start, end). */
  span(): [number, number] {
    const n = this.u32();
    const start = this.pos;
    if (n > this.end - start) throw new RangeError('etcd message: truncated');
    this.pos = start + n;
    return [start, start + n];
  }

  /** A bytes field as a view of the message. */
  bytes(): Buffer {
    const [start, end] = this.span();
    return this.buf.subarray(start, end);
  }

  string(): string {
    const [start, end] = this.span();
    return this.buf.toString('utf8', start, end);
  }

  /** A nested message's reader. */
  nested(): Reader {
    const [start, end] = this.span();
    return new Reader(this.buf, start, end);
  }

  /** Skips a field of `wireType` (unknown fields, as protobuf readers do). */
  skip(wireType: number): void {
    switch (wireType) {
      case VARINT:
        this.varint64();
        return;
      case FIXED64:
        this.#advance(8);
        return;
      case LENGTH:
        this.span();
        return;
      case FIXED32:
        this.#advance(4);
        return;
      default:
        throw new RangeError(`etcd message: wire type ${wireType} not supported`);
    }
  }

  #advance(n: number): void {
    if (n > this.end - this.pos) throw new RangeError('etcd message: truncated');
    this.pos += n;
  }
}

/** `hi:lo` in decimal; `signed` reads it as two's complement. */
function int64Text(lo: number, hi: number, signed: boolean): string {
  if (hi < 0x200000) return String(hi * TWO_32 + lo);
  const u = (BigInt(hi) << 32n) | BigInt(lo);
  return (signed ? BigInt.asIntN(64, u) : u).toString();
}

/** Reads every field of `r`, calling `field` with its number and wire type; `field` reads or skips it. */
function fields(r: Reader, field: (n: number, wireType: number) => void): void {
  while (r.pos < r.end) {
    const tag = r.u32();
    field(tag >>> 3, tag & 7);
  }
}

/** etcd's `ResponseHeader`. */
interface ResponseHeader {
  cluster_id: string;
  member_id: string;
  revision: string;
  raft_term: string;
}

/** etcd's `mvccpb.KeyValue`. */
interface KeyValueMessage {
  key: Buffer;
  create_revision: string;
  mod_revision: string;
  version: string;
  value: Buffer;
  lease: string;
}

function header(r: Reader): ResponseHeader {
  const h: ResponseHeader = { cluster_id: '0', member_id: '0', revision: '0', raft_term: '0' };
  fields(r, (n, t) => {
    if (n === 1 && t === VARINT) h.cluster_id = r.int64(false);
    else if (n === 2 && t === VARINT) h.member_id = r.int64(false);
    else if (n === 3 && t === VARINT) h.revision = r.int64(true);
    else if (n === 4 && t === VARINT) h.raft_term = r.int64(false);
    else r.skip(t);
  });
  return h;
}

function keyValue(r: Reader): KeyValueMessage {
  const kv: KeyValueMessage = {
    key: EMPTY,
    create_revision: '0',
    mod_revision: '0',
    version: '0',
    value: EMPTY,
    lease: '0',
  };
  fields(r, (n, t) => {
    if (n === 1 && t === LENGTH) kv.key = r.bytes();
    else if (n === 2 && t === VARINT) kv.create_revision = r.int64(true);
    else if (n === 3 && t === VARINT) kv.mod_revision = r.int64(true);
    else if (n === 4 && t === VARINT) kv.version = r.int64(true);
    else if (n === 5 && t === LENGTH) kv.value = r.bytes();
    else if (n === 6 && t === VARINT) kv.lease = r.int64(true);
    else r.skip(t);
  });
  return kv;
}

function rangeResponse(r: Reader): IRangeResponse {
  let h: ResponseHeader | null = null;
  const kvs: KeyValueMessage[] = [];
  let more = false;
  let count = '0';
  fields(r, (n, t) => {
    if (n === 1 && t === LENGTH) h = header(r.nested());
    else if (n === 2 && t === LENGTH) kvs.push(keyValue(r.nested()));
    else if (n === 3 && t === VARINT) more = r.bool();
    else if (n === 4 && t === VARINT) count = r.int64(true);
    else r.skip(t);
  });
  return { header: h, kvs, more, count } as unknown as IRangeResponse;
}

function putResponse(r: Reader): unknown {
  let h: ResponseHeader | null = null;
  let prev: KeyValueMessage | null = null;
  fields(r, (n, t) => {
    if (n === 1 && t === LENGTH) h = header(r.nested());
    else if (n === 2 && t === LENGTH) prev = keyValue(r.nested());
    else r.skip(t);
  });
  return { header: h, prev_kv: prev };
}

function deleteRangeResponse(r: Reader): unknown {
  let h: ResponseHeader | null = null;
  let deleted = '0';
  const prev: KeyValueMessage[] = [];
  fields(r, (n, t) => {
    if (n === 1 && t === LENGTH) h = header(r.nested());
    else if (n === 2 && t === VARINT) deleted = r.int64(true);
    else if (n === 3 && t === LENGTH) prev.push(keyValue(r.nested()));
    else r.skip(t);
  });
  return { header: h, deleted, prev_kvs: prev };
}

/** The members of ResponseOp's `response` oneof by field number, and their decoders. */
const RESPONSE_OP: readonly (readonly [string, (r: Reader) => unknown])[] = [
  ['response_range', rangeResponse],
  ['response_put', putResponse],
  ['response_delete_range', deleteRangeResponse],
  ['response_txn', txnResponse],
];

function responseOp(r: Reader): Record<string, unknown> {
  const op: Record<string, unknown> = {};
  fields(r, (n, t) => {
    const member = RESPONSE_OP[n - 1];
    if (member === undefined || t !== LENGTH) {
      r.skip(t);
      return;
    }
    // A oneof keeps its last member (protobuf's rule when one is sent twice).
    for (const [other] of RESPONSE_OP) delete op[other];
    const [name, decode] = member;
    op[name] = decode(r.nested());
    op['response'] = name;
  });
  return op;
}

function txnResponse(r: Reader): ITxnResponse {
  let h: ResponseHeader | null = null;
  let succeeded = false;
  const responses: Record<string, unknown>[] = [];
  fields(r, (n, t) => {
    if (n === 1 && t === LENGTH) h = header(r.nested());
    else if (n === 2 && t === VARINT) succeeded = r.bool();
    else if (n === 3 && t === LENGTH) responses.push(responseOp(r.nested()));
    else r.skip(t);
  });
  return { header: h, succeeded, responses } as unknown as ITxnResponse;
}

const EVENT_TYPES = ['Put', 'Delete'] as const;

function event(r: Reader): unknown {
  let type: string | number = 'Put';
  let kv: KeyValueMessage | null = null;
  let prev: KeyValueMessage | null = null;
  fields(r, (n, t) => {
    if (n === 1 && t === VARINT) {
      const v = r.u32() | 0;
      type = EVENT_TYPES[v] ?? v; // protobufjs gives an unknown enum value as its number
    } else if (n === 2 && t === LENGTH) kv = keyValue(r.nested());
    else if (n === 3 && t === LENGTH) prev = keyValue(r.nested());
    else r.skip(t);
  });
  return { type, kv, prev_kv: prev };
}

/** A `RangeResponse` from protobuf. @throws RangeError when the bytes are not one. */
export function decodeRangeResponse(bytes: Buffer): IRangeResponse {
  return rangeResponse(new Reader(bytes));
}

/** A `TxnResponse` from protobuf. @throws RangeError when the bytes are not one. */
export function decodeTxnResponse(bytes: Buffer): ITxnResponse {
  return txnResponse(new Reader(bytes));
}

/** A `WatchResponse` from protobuf. @throws RangeError when the bytes are not one. */
export function decodeWatchResponse(bytes: Buffer): IWatchResponse {
  const r = new Reader(bytes);
  let h: ResponseHeader | null = null;
  let watchId = '0';
  let created = false;
  let canceled = false;
  let compactRevision = '0';
  let cancelReason = '';
  let fragment = false;
  const events: unknown[] = [];
  fields(r, (n, t) => {
    if (n === 1 && t === LENGTH) h = header(r.nested());
    else if (n === 2 && t === VARINT) watchId = r.int64(true);
    else if (n === 3 && t === VARINT) created = r.bool();
    else if (n === 4 && t === VARINT) canceled = r.bool();
    else if (n === 5 && t === VARINT) compactRevision = r.int64(true);
    else if (n === 6 && t === LENGTH) cancelReason = r.string();
    else if (n === 7 && t === VARINT) fragment = r.bool();
    else if (n === 11 && t === LENGTH) events.push(event(r.nested()));
    else r.skip(t);
  });
  return {
    header: h,
    watch_id: watchId,
    created,
    canceled,
    compact_revision: compactRevision,
    cancel_reason: cancelReason,
    fragment,
    events,
  } as unknown as IWatchResponse;
}

/** etcd's `StatusResponse` (the fields the channel reads, and the rest). */
export interface StatusResponse {
  header: ResponseHeader | null;
  version: string;
  dbSize: string;
  leader: string;
  raftIndex: string;
  raftTerm: string;
  raftAppliedIndex: string;
  errors: string[];
  dbSizeInUse: string;
  isLearner: boolean;
}

/** A `StatusResponse` from protobuf. @throws RangeError when the bytes are not one. */
export function decodeStatusResponse(bytes: Buffer): StatusResponse {
  const r = new Reader(bytes);
  const s: StatusResponse = {
    header: null,
    version: '',
    dbSize: '0',
    leader: '0',
    raftIndex: '0',
    raftTerm: '0',
    raftAppliedIndex: '0',
    errors: [],
    dbSizeInUse: '0',
    isLearner: false,
  };
  fields(r, (n, t) => {
    if (n === 1 && t === LENGTH) s.header = header(r.nested());
    else if (n === 2 && t === LENGTH) s.version = r.string();
    else if (n === 3 && t === VARINT) s.dbSize = r.int64(true);
    else if (n === 4 && t === VARINT) s.leader = r.int64(false);
    else if (n === 5 && t === VARINT) s.raftIndex = r.int64(false);
    else if (n === 6 && t === VARINT) s.raftTerm = r.int64(false);
    else if (n === 7 && t === VARINT) s.raftAppliedIndex = r.int64(false);
    else if (n === 8 && t === LENGTH) s.errors.push(r.string());
    else if (n === 9 && t === VARINT) s.dbSizeInUse = r.int64(true);
    else if (n === 10 && t === VARINT) s.isLearner = r.bool();
    else r.skip(t);
  });
  return s;
}
