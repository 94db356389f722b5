/**
 * JSON object form → protobuf wire bytes, driven by a {@link MessagePlan}.
 *
 * Emission rule (kube's gogo-generated `MarshalToSizedBuffer`, see `go-facts.ts`): fields in
 * ascending number order; a non-pointer field is written even when JSON lacks it (its Go zero
 * value: `""`, `0`, `false`, an empty message with its own non-pointer fields, an empty Time);
 * a pointer field only when JSON has a non-null value; lists per element; maps per entry in
 * UTF-8 byte order of the keys (Go's `sort.Strings`); an inline field (flattened in JSON) as a
 * nested message built from the same JSON object. JSON properties the schema does not know are
 * ignored (kube drops unknown fields).
 */
import { goEscapedJson } from '../api/go-json.js';
import { parseDuration } from './duration.js';
import { CodecError, invalidValue } from './errors.js';
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
  L_MAP,
  L_REPEATED,
} from './plan.js';
import type { QuantityCanonicalizer } from './quantity.js';
import { parseRfc3339, ZERO_TIME_SECONDS } from './time.js';
import type { Writer } from './wire.js';

type JsonObject = Record<string, unknown>;

const EMPTY: JsonObject = Object.freeze({});
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_LIMIT = 9223372036854775808; // 2^63

/** Compares strings by UTF-8 bytes (= code points), as Go's `sort.Strings` orders map keys. */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code point order only above U+D7FF: move surrogates (which
    // encode U+10000 and up) past U+E000-U+FFFF.
    if (x >= 0xd800) x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
    if (y >= 0xd800) y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    return x - y;
  }
  return a.length - b.length;
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Encoder of one codec: holds the depth limit and the quantity memo. */
export class MessageEncoder {
  readonly #maxDepth: number;
  readonly #quantities: QuantityCanonicalizer;

  constructor(maxDepth: number, quantities: QuantityCanonicalizer) {
    this.#maxDepth = maxDepth;
    this.#quantities = quantities;
  }

  /**
   * Writes the fields of `plan` taken from `obj` (no key or length of its own).
   * @throws CodecError `PROTOBUF_INVALID_VALUE` on a value that does not fit its field,
   *   `PROTOBUF_TOO_DEEP` past the depth limit.
   */
  fields(w: Writer, plan: MessagePlan, obj: JsonObject, depth: number): void {
    if (depth > this.#maxDepth)
      throw new CodecError('PROTOBUF_TOO_DEEP', `${plan.name} nested deeper than ${this.#maxDepth}`);
    const order = plan.encodeOrder;
    for (let i = 0; i < order.length; i++) {
      const f = order[i] as FieldPlan;
      if (f.inline) {
        w.uint32(f.key);
        const mark = w.beginLength();
        this.fields(w, f.message as MessagePlan, obj, depth + 1);
        w.endLength(mark);
        continue;
      }
      const v = obj[f.jsonName];
      if (f.label === L_REPEATED) {
        if (v === undefined || v === null) continue;
        if (!Array.isArray(v))
          throw invalidValue(`${plan.name}.${f.jsonName}: expected array, got ${describe(v)}`);
        for (let j = 0; j < v.length; j++) {
          const item: unknown = v[j];
          // A JSON null item is Go's zero value of the element type.
          if (item === null || item === undefined) this.#zero(w, f, f.key, depth);
          else this.#single(w, f, f.key, item, depth, plan);
        }
      } else if (f.label === L_MAP) {
        if (v === undefined || v === null) continue;
        if (!isObject(v))
          throw invalidValue(`${plan.name}.${f.jsonName}: expected object, got ${describe(v)}`);
        this.#map(w, f, v, depth, plan);
      } else if (v === undefined || v === null) {
        if (!f.pointer) this.#zero(w, f, f.key, depth);
      } else {
        this.#single(w, f, f.key, v, depth, plan);
      }
    }
  }

  #map(w: Writer, f: FieldPlan, m: JsonObject, depth: number, plan: MessagePlan): void {
    const keys = Object.keys(m);
    if (keys.length > 1) keys.sort(compareUtf8);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const v = m[k];
      w.uint32(f.key);
      const mark = w.beginLength();
      w.uint32(0x0a);
      w.string(k);
      if (v === undefined || v === null) {
        // A JSON null map value is Go's zero value; a nil []byte is not written at all.
        if (f.kind !== K_BYTES) this.#zero(w, f, 0x12, depth);
      } else {
        this.#single(w, f, 0x12, v, depth, plan);
      }
      w.endLength(mark);
    }
  }

  /** Writes one non-null value of `f`'s kind under `key`. */
  #single(w: Writer, f: FieldPlan, key: number, v: unknown, depth: number, plan: MessagePlan): void {
    switch (f.kind) {
      case K_STRING:
        if (typeof v !== 'string') throw this.#bad(plan, f, 'string', v);
        w.uint32(key);
        w.string(v);
        return;
      case K_BOOL:
        if (typeof v !== 'boolean') throw this.#bad(plan, f, 'boolean', v);
        w.uint32(key);
        w.uint32(v ? 1 : 0);
        return;
      case K_INT32:
        if (typeof v !== 'number' || !Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX) {
          throw this.#bad(plan, f, 'int32', v);
        }
        w.uint32(key);
        w.int64(v);
        return;
      case K_INT64:
        if (typeof v !== 'number' || !Number.isInteger(v) || v < -INT64_LIMIT || v >= INT64_LIMIT) {
          throw this.#bad(plan, f, 'int64', v);
        }
        w.uint32(key);
        w.int64(v);
        return;
      case K_DOUBLE:
        if (typeof v !== 'number' || !Number.isFinite(v)) throw this.#bad(plan, f, 'number', v);
        w.uint32(key);
        w.double(v);
        return;
      case K_BYTES:
        if (typeof v !== 'string') throw this.#bad(plan, f, 'base64 string', v);
        w.uint32(key);
        w.bytes(Buffer.from(v, 'base64'));
        return;
      case K_MESSAGE: {
        if (!isObject(v)) throw this.#bad(plan, f, 'object', v);
        w.uint32(key);
        const mark = w.beginLength();
        this.fields(w, f.message as MessagePlan, v, depth + 1);
        w.endLength(mark);
        return;
      }
      case K_TIME:
      case K_MICROTIME:
        this.#time(w, f, key, v, plan);
        return;
      case K_DURATION: {
        if (typeof v !== 'string') throw this.#bad(plan, f, 'duration string', v);
        const ns = parseDuration(v);
        w.uint32(key);
        const mark = w.beginLength();
        w.uint32(0x08);
        w.bigInt64(ns);
        w.endLength(mark);
        return;
      }
      case K_INT_OR_STRING:
        this.#intOrString(w, f, key, v, plan);
        return;
      case K_QUANTITY: {
        const text =
          typeof v === 'string' || typeof v === 'number' ? this.#quantities.canonical(v) : undefined;
        if (text === undefined) throw this.#bad(plan, f, 'quantity', v);
        w.uint32(key);
        const mark = w.beginLength();
        w.uint32(0x0a);
        w.string(text);
        w.endLength(mark);
        return;
      }
      case K_RAW_JSON: {
        w.uint32(key);
        const mark = w.beginLength();
        w.uint32(0x0a);
        // The bytes a Go client would have sent, which kube keeps and Go clients compare.
        w.string(goEscapedJson(this.#stringify(v, plan, f)));
        w.endLength(mark);
        return;
      }
      case K_STRING_LIST: {
        if (!Array.isArray(v)) throw this.#bad(plan, f, 'array of strings', v);
        w.uint32(key);
        const mark = w.beginLength();
        for (const s of v) {
          if (typeof s !== 'string') throw this.#bad(plan, f, 'array of strings', v);
          w.uint32(0x0a);
          w.string(s);
        }
        w.endLength(mark);
        return;
      }
      default:
        this.#union(w, f, key, v, depth, plan);
    }
  }

  #time(w: Writer, f: FieldPlan, key: number, v: unknown, plan: MessagePlan): void {
    if (typeof v !== 'string') throw this.#bad(plan, f, 'RFC 3339 time', v);
    const t = parseRfc3339(v);
    // Time drops the nanos on the wire on purpose; MicroTime keeps whole microseconds.
    const nanos = f.kind === K_MICROTIME ? t.nanos - (t.nanos % 1000) : 0;
    w.uint32(key);
    const mark = w.beginLength();
    if (t.seconds !== ZERO_TIME_SECONDS || nanos !== 0) {
      w.uint32(0x08);
      w.int64(t.seconds);
      w.uint32(0x10);
      w.int64(nanos);
    }
    w.endLength(mark);
  }

  #intOrString(w: Writer, f: FieldPlan, key: number, v: unknown, plan: MessagePlan): void {
    w.uint32(key);
    const mark = w.beginLength();
    if (typeof v === 'number') {
      if (!Number.isInteger(v) || v < INT32_MIN || v > INT32_MAX)
        throw this.#bad(plan, f, 'int32 or string', v);
      w.uint32(0x08);
      w.uint32(0);
      w.uint32(0x10);
      w.int64(v);
      w.uint32(0x1a);
      w.uint32(0);
    } else if (typeof v === 'string') {
      w.uint32(0x08);
      w.uint32(1);
      w.uint32(0x10);
      w.uint32(0);
      w.uint32(0x1a);
      w.string(v);
    } else {
      throw this.#bad(plan, f, 'int32 or string', v);
    }
    w.endLength(mark);
  }

  /** JSONSchemaPropsOrBool / OrArray / OrStringArray: the JSON shape picks the protobuf field. */
  #union(w: Writer, f: FieldPlan, key: number, v: unknown, depth: number, plan: MessagePlan): void {
    const schema = f.message as MessagePlan;
    w.uint32(key);
    const mark = w.beginLength();
    if (f.kind === K_SCHEMA_OR_BOOL) {
      // Go: a schema object means Allows=true plus the schema; a boolean is Allows alone.
      if (typeof v === 'boolean') {
        w.uint32(0x08);
        w.uint32(v ? 1 : 0);
      } else if (isObject(v)) {
        w.uint32(0x08);
        w.uint32(1);
        this.#nested(w, 0x12, schema, v, depth);
      } else {
        throw this.#bad(plan, f, 'boolean or schema object', v);
      }
    } else if (isObject(v)) {
      this.#nested(w, 0x0a, schema, v, depth);
    } else if (Array.isArray(v)) {
      for (const item of v) {
        if (f.kind === K_SCHEMA_OR_ARRAY) {
          if (!isObject(item)) throw this.#bad(plan, f, 'array of schema objects', v);
          this.#nested(w, 0x12, schema, item, depth);
        } else {
          if (typeof item !== 'string') throw this.#bad(plan, f, 'array of strings', v);
          w.uint32(0x12);
          w.string(item);
        }
      }
    } else {
      throw this.#bad(plan, f, 'schema object or array', v);
    }
    w.endLength(mark);
  }

  #nested(w: Writer, key: number, plan: MessagePlan, v: JsonObject, depth: number): void {
    w.uint32(key);
    const mark = w.beginLength();
    this.fields(w, plan, v, depth + 2);
    w.endLength(mark);
  }

  /** Go's zero value of a non-pointer field of `f`'s kind, under `key`. */
  #zero(w: Writer, f: FieldPlan, key: number, depth: number): void {
    w.uint32(key);
    switch (f.kind) {
      case K_STRING:
      case K_BYTES:
      case K_TIME:
      case K_MICROTIME:
      case K_RAW_JSON:
      case K_STRING_LIST:
        w.uint32(0);
        return;
      case K_BOOL:
      case K_INT32:
      case K_INT64:
        w.uint32(0);
        return;
      case K_DOUBLE:
        w.double(0);
        return;
      case K_DURATION:
        w.raw(ZERO_DURATION);
        return;
      case K_INT_OR_STRING:
        w.raw(ZERO_INT_OR_STRING);
        return;
      case K_QUANTITY:
        w.raw(ZERO_QUANTITY);
        return;
      case K_MESSAGE: {
        const mark = w.beginLength();
        this.fields(w, f.message as MessagePlan, EMPTY, depth + 1);
        w.endLength(mark);
        return;
      }
      default:
        // The union kinds: Go's zero JSONSchemaPropsOrBool still writes Allows=false.
        w.raw(f.kind === K_SCHEMA_OR_BOOL ? ZERO_SCHEMA_OR_BOOL : EMPTY_BODY);
    }
  }

  #stringify(v: unknown, plan: MessagePlan, f: FieldPlan): string {
    let text: string | undefined;
    try {
      text = JSON.stringify(v);
    } catch (cause) {
      throw new CodecError('PROTOBUF_INVALID_VALUE', `${plan.name}.${f.jsonName}: not JSON-serializable`, {
        cause,
      });
    }
    if (text === undefined) throw this.#bad(plan, f, 'JSON value', v);
    return text;
  }

  #bad(plan: MessagePlan, f: FieldPlan, expected: string, v: unknown): CodecError {
    return invalidValue(`${plan.name}.${f.jsonName}: expected ${expected}, got ${describe(v)}`);
  }
}

// Bodies (with their length byte) of Go zero values of the special structs.
const ZERO_DURATION = Uint8Array.of(2, 0x08, 0);
const ZERO_INT_OR_STRING = Uint8Array.of(6, 0x08, 0, 0x10, 0, 0x1a, 0);
const ZERO_QUANTITY = Uint8Array.of(3, 0x0a, 1, 0x30); // Quantity{}.String() is "0"
const ZERO_SCHEMA_OR_BOOL = Uint8Array.of(2, 0x08, 0);
const EMPTY_BODY = Uint8Array.of(0);
