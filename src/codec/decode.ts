/**
 * Protobuf wire bytes → JSON object form, as kube-apiserver would serve the Go object it
 * decodes from those bytes (`encoding/json` over the Kubernetes Go types):
 *
 * - properties in Go struct order (the schema's declaration order), inline fields flattened;
 * - a non-pointer struct is always present (its zero value when the wire lacks it), so an
 *   object decoded from bytes without `status` still shows `"status": {}`;
 * - a non-pointer scalar is dropped when zero only if its json tag has `omitempty`;
 * - a pointer, list, map or byte slice absent from the wire is dropped with `omitempty`, else
 *   `null` (e.g. a ClusterRole without rules shows `"rules": null`, as kube's does);
 * - special types as their Go JSON: Time/MicroTime strings (zero time → `null`), Duration
 *   strings, IntOrString number or string, Quantity canonical strings, raw JSON embedded;
 * - map keys sorted by UTF-8 bytes (encoding/json sorts map keys).
 *
 * Decoding is staged: fields are first collected into per-message slot arrays in wire order,
 * then materialised in JSON order. A singular message field that occurs twice is merged (the
 * protobuf rule Go's generated Unmarshal follows); for the special types the last occurrence
 * wins. Unknown fields are skipped. Every failure is a `PROTOBUF_MALFORMED` or
 * `PROTOBUF_TOO_DEEP` CodecError.
 */
import { formatDuration } from './duration.js';
import { CodecError, malformed } from './errors.js';
import type { FieldPlan, MessagePlan } from './plan.js';
import {
  K_BOOL,
  K_BYTES,
  K_DOUBLE,
  K_DURATION,
  K_INT32,
  K_INT64,
  K_INT_OR_STRING,
  K_MESSAGE,
  K_MICROTIME,
  K_QUANTITY,
  K_RAW_JSON,
  K_SCHEMA_OR_ARRAY,
  K_SCHEMA_OR_BOOL,
  K_STRING,
  K_STRING_LIST,
  K_TIME,
  L_REPEATED,
  L_SINGLE,
} from './plan.js';
import type { Slots } from './materialize.js';
import { MapEntries, materialize, Nested } from './materialize.js';
import type { QuantityCanonicalizer } from './quantity.js';
import { formatRfc3339, normalizeTimestamp, ZERO_TIME_SECONDS } from './time.js';
import type { Varint64 } from './wire.js';
import { int64Value, Reader, WIRE_END_GROUP, WIRE_LEN, WIRE_VARINT } from './wire.js';

type JsonObject = Record<string, unknown>;

/** Decoder of one codec: holds the depth limit, the quantity memo and a scratch varint. */
export class MessageDecoder {
  readonly #maxDepth: number;
  readonly #quantities: QuantityCanonicalizer;
  readonly #v: Varint64 = { lo: 0, hi: 0 };
  /** Where the current {@link decode} call puts embedded raw JSON values, if asked. */
  #rawJson: WeakSet<object> | undefined;

  constructor(maxDepth: number, quantities: QuantityCanonicalizer) {
    this.#maxDepth = maxDepth;
    this.#quantities = quantities;
  }

  /**
   * Decodes `[r.pos, r.end)` as message `plan` into a fresh JSON object; the objects and arrays
   * parsed from embedded raw JSON go into `rawJson`, if given.
   */
  decode(r: Reader, plan: MessagePlan, rawJson?: WeakSet<object>): JsonObject {
    const slots: Slots = [];
    this.#rawJson = rawJson;
    try {
      this.#fields(r, plan, slots, 0);
    } finally {
      this.#rawJson = undefined;
    }
    return materialize(plan, slots);
  }

  /** Reads fields of `plan` until `r.end` into `slots` (merging into what is there). */
  #fields(r: Reader, plan: MessagePlan, slots: Slots, depth: number): void {
    if (depth > this.#maxDepth)
      throw new CodecError('PROTOBUF_TOO_DEEP', `${plan.name} nested deeper than ${this.#maxDepth}`);
    const byNumber = plan.byNumber;
    while (r.pos < r.end) {
      const key = r.uint32();
      const num = key >>> 3;
      const wt = key & 7;
      if (num === 0) throw malformed('field number 0');
      const f = num < byNumber.length ? byNumber[num] : undefined;
      if (f === undefined) {
        if (wt === WIRE_END_GROUP) throw malformed('unexpected end group');
        r.skip(wt);
        continue;
      }
      if (f.label === L_SINGLE) {
        if (wt !== f.wireType)
          throw malformed(`${plan.name}.${f.name}: wire type ${wt}, expected ${f.wireType}`);
        slots[f.slot] = this.#value(r, f, slots[f.slot], depth);
      } else if (f.label === L_REPEATED) {
        let list = slots[f.slot] as unknown[] | undefined;
        if (list === undefined) slots[f.slot] = list = [];
        if (wt === f.wireType) {
          list.push(this.#value(r, f, undefined, depth));
        } else if (wt === WIRE_LEN && f.wireType !== WIRE_LEN) {
          // Packed scalars: Kubernetes writes them unpacked (proto2), Go reads both.
          const end = r.lengthEnd();
          const saved = r.end;
          r.end = end;
          while (r.pos < end) list.push(this.#value(r, f, undefined, depth));
          r.end = saved;
        } else {
          throw malformed(`${plan.name}.${f.name}: wire type ${wt}, expected ${f.wireType}`);
        }
      } else {
        if (wt !== WIRE_LEN) throw malformed(`${plan.name}.${f.name}: map entry with wire type ${wt}`);
        let entries = slots[f.slot] as MapEntries | undefined;
        if (entries === undefined) slots[f.slot] = entries = new MapEntries();
        this.#mapEntry(r, f, entries, depth);
      }
    }
  }

  #mapEntry(r: Reader, f: FieldPlan, entries: MapEntries, depth: number): void {
    const end = r.lengthEnd();
    const saved = r.end;
    r.end = end;
    let k = '';
    let v: unknown;
    while (r.pos < end) {
      const key = r.uint32();
      if (key >>> 3 === 1) {
        if (key !== 0x0a) throw malformed(`${f.name}: map key with wire type ${key & 7}`);
        const e = r.lengthEnd();
        k = r.text(r.pos, e);
        r.pos = e;
      } else if (key >>> 3 === 2) {
        if ((key & 7) !== f.wireType) throw malformed(`${f.name}: map value with wire type ${key & 7}`);
        v = this.#value(r, f, v, depth);
      } else if (key >>> 3 === 0) {
        throw malformed('field number 0');
      } else {
        r.skip(key & 7);
      }
    }
    r.end = saved;
    entries.keys.push(k);
    entries.values.push(v);
  }

  /** Reads one value of `f`'s kind; `prev` is the earlier value of a singular field (merged for messages). */
  #value(r: Reader, f: FieldPlan, prev: unknown, depth: number): unknown {
    switch (f.kind) {
      case K_STRING: {
        const end = r.lengthEnd();
        const s = r.text(r.pos, end);
        r.pos = end;
        return s;
      }
      case K_BOOL:
        r.varint64(this.#v);
        return this.#v.lo !== 0 || this.#v.hi !== 0;
      case K_INT32:
        r.varint64(this.#v);
        return this.#v.lo | 0;
      case K_INT64:
        r.varint64(this.#v);
        return int64Value(this.#v);
      case K_DOUBLE:
        return r.double();
      case K_BYTES: {
        const end = r.lengthEnd();
        const s = r.buf.toString('base64', r.pos, end);
        r.pos = end;
        return s;
      }
      case K_MESSAGE: {
        const nested = prev instanceof Nested ? prev : new Nested(f.message as MessagePlan, []);
        this.#sub(r, nested.plan, nested.slots, depth + 1);
        return nested;
      }
      default:
        return this.#special(r, f, depth);
    }
  }

  /** Decodes a length-delimited sub-message at `r` into `slots`. */
  #sub(r: Reader, plan: MessagePlan, slots: Slots, depth: number): void {
    const end = r.lengthEnd();
    const saved = r.end;
    r.end = end;
    this.#fields(r, plan, slots, depth);
    r.end = saved;
  }

  /** Special kinds, decoded straight to their JSON value. */
  #special(r: Reader, f: FieldPlan, depth: number): unknown {
    const end = r.lengthEnd();
    const saved = r.end;
    r.end = end;
    const empty = r.pos === end;
    let out: unknown;
    switch (f.kind) {
      case K_TIME:
      case K_MICROTIME:
        out = empty ? null : this.#time(r, f.kind === K_MICROTIME);
        break;
      case K_DURATION: {
        let ns = 0n;
        this.#each(r, ONE_VARINT, () => {
          r.varint64(this.#v);
          ns = BigInt.asIntN(64, (BigInt(this.#v.hi) << 32n) | BigInt(this.#v.lo));
        });
        out = formatDuration(ns);
        break;
      }
      case K_INT_OR_STRING:
        out = this.#intOrString(r);
        break;
      case K_QUANTITY: {
        let text = '';
        this.#each(r, ONE_LEN, () => (text = this.#text(r)));
        // Go parses the string into a Quantity and serialises its canonical form.
        const canonical = this.#quantities.canonical(text);
        if (canonical === undefined) throw malformed(`invalid quantity ${JSON.stringify(text)}`);
        out = canonical;
        break;
      }
      case K_RAW_JSON: {
        let raw: string | undefined;
        this.#each(r, ONE_LEN, () => (raw = this.#text(r)));
        out = raw === undefined || raw === '' ? null : parseEmbedded(raw);
        if (this.#rawJson !== undefined && typeof out === 'object' && out !== null) this.#rawJson.add(out);
        break;
      }
      case K_STRING_LIST: {
        const items: string[] = [];
        this.#each(r, ONE_LEN, () => items.push(this.#text(r)));
        out = items;
        break;
      }
      default:
        out = this.#union(r, f, depth);
    }
    r.end = saved;
    r.pos = end;
    return out;
  }

  /**
   * Runs `read` for each known field of the current (special) message: `wireTypes[n]` is the
   * wire type of field `n`. A known field with another wire type is malformed (as in Go's
   * generated Unmarshal); unknown fields are skipped.
   */
  #each(r: Reader, wireTypes: readonly number[], read: (num: number) => unknown): void {
    while (r.pos < r.end) {
      const key = r.uint32();
      const num = key >>> 3;
      const wt = key & 7;
      if (num === 0) throw malformed('field number 0');
      const expected = num < wireTypes.length ? (wireTypes[num] as number) : -1;
      if (expected >= 0) {
        if (wt !== expected) throw malformed(`field ${num} with wire type ${wt}, expected ${expected}`);
        read(num);
      } else {
        if (wt === WIRE_END_GROUP) throw malformed('unexpected end group');
        r.skip(wt);
      }
    }
  }

  #text(r: Reader): string {
    const end = r.lengthEnd();
    const s = r.text(r.pos, end);
    r.pos = end;
    return s;
  }

  #time(r: Reader, micro: boolean): string | null {
    let seconds = 0;
    let nanos = 0;
    this.#each(r, TWO_VARINTS, (num) => {
      r.varint64(this.#v);
      if (num === 1) seconds = int64Value(this.#v);
      else nanos = this.#v.lo | 0;
    });
    // Go: Time ignores the nanos; MicroTime truncates them to microseconds (toward zero).
    const t = normalizeTimestamp(seconds, micro ? nanos - (nanos % 1000) : 0);
    if (t.seconds === ZERO_TIME_SECONDS && t.nanos === 0) return null;
    const text = formatRfc3339(t.seconds, t.nanos, micro);
    if (text === undefined) throw malformed(`time ${seconds}s is outside years 0-9999`);
    return text;
  }

  #intOrString(r: Reader): number | string {
    let type = 0;
    let intVal = 0;
    let strVal = '';
    this.#each(r, INT_OR_STRING, (num) => {
      if (num === 3) {
        strVal = this.#text(r);
        return;
      }
      r.varint64(this.#v);
      if (num === 1) type = int64Value(this.#v);
      else intVal = this.#v.lo | 0;
    });
    if (type === 0) return intVal;
    if (type === 1) return strVal;
    throw malformed(`IntOrString of type ${type}`);
  }

  /** The JSONSchemaProps unions, as their Go MarshalJSON writes them. */
  #union(r: Reader, f: FieldPlan, depth: number): unknown {
    const plan = f.message as MessagePlan;
    let allows = false;
    let schema: Slots | undefined;
    const list: unknown[] = [];
    const schemaNumber = f.kind === K_SCHEMA_OR_BOOL ? 2 : 1;
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
      const isAllows = f.kind === K_SCHEMA_OR_BOOL && num === 1;
      if (wt !== (isAllows ? WIRE_VARINT : WIRE_LEN))
        throw malformed(`${plan.name} union field ${num} with wire type ${wt}`);
      if (isAllows) {
        r.varint64(this.#v);
        allows = this.#v.lo !== 0 || this.#v.hi !== 0;
      } else if (num === schemaNumber) {
        schema ??= [];
        this.#sub(r, plan, schema, depth + 2);
      } else if (f.kind === K_SCHEMA_OR_ARRAY) {
        const item: Slots = [];
        this.#sub(r, plan, item, depth + 2);
        list.push(new Nested(plan, item));
      } else {
        list.push(this.#text(r));
      }
    }
    if (f.kind === K_SCHEMA_OR_BOOL) return schema !== undefined ? materialize(plan, schema) : allows;
    if (list.length > 0) return list.map((v) => (v instanceof Nested ? materialize(v.plan, v.slots) : v));
    return schema !== undefined ? materialize(plan, schema) : null;
  }
}

// Wire types of the fields of the special messages, by field number (-1: not a field).
const ONE_VARINT: readonly number[] = [-1, WIRE_VARINT];
const ONE_LEN: readonly number[] = [-1, WIRE_LEN];
const TWO_VARINTS: readonly number[] = [-1, WIRE_VARINT, WIRE_VARINT];
const INT_OR_STRING: readonly number[] = [-1, WIRE_VARINT, WIRE_VARINT, WIRE_LEN];

/** Embedded raw JSON; bytes that are not JSON cannot be served as JSON (Go fails too). */
function parseEmbedded(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (cause) {
    throw new CodecError('PROTOBUF_MALFORMED', 'embedded raw value is not JSON', { cause });
  }
}
