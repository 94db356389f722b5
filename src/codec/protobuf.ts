/**
 * The protobuf codec of the built-in kinds: Capstan's JSON object form ⇄ the Kubernetes
 * protobuf wire format, driven by the schema model (`src/registry/schema.ts`) and the Go facts
 * of `go-facts.ts`. Bytes match what kube-apiserver writes for the same object (see
 * `encode.ts` for the emission rule), and decoding yields the JSON kube-apiserver would serve
 * for the Go object it reads from the bytes (see `decode.ts`).
 *
 * One codec per server: it compiles a plan per message type on first use and keeps one
 * scratch buffer, so it is cheap to call per object; every method is synchronous and returns
 * fresh memory (nothing returned aliases the scratch buffer).
 *
 * @example
 * const codec = new ProtobufCodec(loadSchemas());
 * const body = codec.encodeObject('k8s.io.api.core.v1.ConfigMap', cm);          // GET response
 * const item = codec.encodeMessage('k8s.io.api.core.v1.ConfigMap', cm);         // cache per version
 * const list = codec.encodeListFromItems('v1', 'ConfigMapList', { resourceVersion: '42' }, [item]);
 * const frame = encodeWatchFrame('ADDED', encodeEnvelope('v1', 'ConfigMap', item));
 * const obj = codec.decodeObject('k8s.io.api.core.v1.ConfigMap', requestBody); // POST body
 */
import type { SchemaSet } from '../registry/schema.js';
import { MessageDecoder } from './decode.js';
import { MessageEncoder } from './encode.js';
import { CodecError, invalidValue } from './errors.js';
import type { Envelope } from './envelope.js';
import { decodeEnvelope, ENVELOPE_TAIL, envelopeHead, PROTOBUF_MAGIC } from './envelope.js';
import type { MessagePlan } from './plan.js';
import { Planner } from './plan.js';
import { QuantityCanonicalizer } from './quantity.js';
import { Reader, varintSize, Writer } from './wire.js';

type JsonObject = Record<string, unknown>;

const LIST_META = 'k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta';

/** Options of {@link ProtobufCodec}. */
export interface ProtobufCodecOptions {
  /**
   * Deepest message nesting accepted when encoding or decoding (a JSONSchemaProps union level
   * counts two). Bounds recursion on hostile input. Default 200.
   */
  readonly maxDepth?: number;
}

/** The result of {@link ProtobufCodec.decodeObject}. */
export interface DecodedObject {
  /** The envelope's typeMeta and content fields. */
  readonly envelope: Envelope;
  /** The object, `kind` and `apiVersion` first (when the envelope has them), then its fields. */
  readonly object: JsonObject;
}

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Converts objects of the built-in kinds between JSON object form and protobuf. */
export class ProtobufCodec {
  readonly #planner: Planner;
  readonly #encoder: MessageEncoder;
  readonly #decoder: MessageDecoder;
  readonly #writer = new Writer();

  constructor(schemas: SchemaSet, options: ProtobufCodecOptions = {}) {
    const maxDepth = options.maxDepth ?? 200;
    const quantities = new QuantityCanonicalizer();
    this.#planner = new Planner(schemas);
    this.#encoder = new MessageEncoder(maxDepth, quantities);
    this.#decoder = new MessageDecoder(maxDepth, quantities);
  }

  /**
   * The message bytes of `obj` as type `typeName` (e.g. `k8s.io.api.apps.v1.Deployment`),
   * without envelope: the form cached per object version and embedded in lists. `kind`,
   * `apiVersion` and unknown properties are ignored.
   * @throws CodecError `PROTOBUF_UNKNOWN_TYPE`, `PROTOBUF_INVALID_VALUE`, `PROTOBUF_TOO_DEEP`.
   */
  encodeMessage(typeName: string, obj: JsonObject): Uint8Array {
    const plan = this.#plan(typeName);
    const w = this.#writer;
    w.reset();
    this.#fields(w, plan, obj);
    return w.finish();
  }

  /**
   * The JSON object of message bytes of type `typeName` (no `kind`/`apiVersion`: the envelope
   * carries them). Accepts any valid protobuf of the type; never throws anything but a
   * CodecError, whatever the bytes.
   * `rawJson`, when given, receives every object or array parsed from embedded raw JSON
   * (`runtime.RawExtension`: a ControllerRevision's `data`), which kube keeps byte for byte.
   * @throws CodecError `PROTOBUF_MALFORMED`, `PROTOBUF_TOO_DEEP`, `PROTOBUF_UNKNOWN_TYPE`.
   */
  decodeMessage(typeName: string, bytes: Uint8Array, rawJson?: WeakSet<object>): JsonObject {
    return this.#decode(this.#plan(typeName), new Reader(bytes), rawJson);
  }

  /**
   * A whole protobuf body for `obj`: magic, envelope with `apiVersion` and `kind` (from `obj`
   * unless given), and the message, built in one pass.
   * @throws CodecError as {@link encodeMessage}; `PROTOBUF_INVALID_VALUE` when no apiVersion
   *   or kind is given or found.
   */
  encodeObject(typeName: string, obj: JsonObject, apiVersion?: string, kind?: string): Uint8Array {
    const av = apiVersion ?? obj['apiVersion'];
    const k = kind ?? obj['kind'];
    if (typeof av !== 'string' || typeof k !== 'string') {
      throw invalidValue(`${typeName}: an enveloped object needs string apiVersion and kind`);
    }
    const plan = this.#plan(typeName);
    const w = this.#writer;
    w.reset();
    this.#envelopeStart(w, av, k);
    const mark = w.beginLength();
    this.#fields(w, plan, obj);
    w.endLength(mark);
    w.raw(ENVELOPE_TAIL);
    return w.finish();
  }

  /**
   * Decodes a protobuf request body: the envelope, then its raw bytes as `typeName`. The
   * caller checks `envelope.kind`/`apiVersion` against the request (kube defaults missing
   * ones from the URL and rejects mismatches) and may refuse a non-empty `contentEncoding`.
   * @throws CodecError `PROTOBUF_MISSING_MAGIC`, `PROTOBUF_MALFORMED`, `PROTOBUF_TOO_DEEP`.
   */
  decodeObject(typeName: string, bytes: Uint8Array): DecodedObject {
    const plan = this.#plan(typeName);
    const envelope = decodeEnvelope(bytes);
    const object: JsonObject = {};
    if (envelope.kind !== '') object['kind'] = envelope.kind;
    if (envelope.apiVersion !== '') object['apiVersion'] = envelope.apiVersion;
    const body = this.#decode(plan, new Reader(envelope.raw));
    return { envelope, object: Object.assign(object, body) };
  }

  /**
   * The list message (`<Kind>List`: metadata = 1, items = 2) around already-encoded item
   * messages, enveloped as `apiVersion`/`listKind`: one allocation, each item copied once.
   * `listMeta` is the JSON list metadata (`resourceVersion`, `continue`, `remainingItemCount`).
   * @throws CodecError `PROTOBUF_INVALID_VALUE` when `listMeta` does not fit ListMeta.
   */
  encodeListFromItems(
    apiVersion: string,
    listKind: string,
    listMeta: JsonObject,
    items: readonly Uint8Array[],
  ): Uint8Array {
    const meta = this.encodeMessage(LIST_META, listMeta);
    let rawLength = 1 + varintSize(meta.length) + meta.length;
    for (const item of items) rawLength += 1 + varintSize(item.length) + item.length;
    const head = envelopeHead(apiVersion, listKind, rawLength);
    // Every byte is written below, so skip zero-filling (it shows on lists of tens of MB).
    const out = Buffer.allocUnsafe(head.length + rawLength + ENVELOPE_TAIL.length);
    out.set(head, 0);
    let pos = head.length;
    pos = putLengthDelimited(out, pos, 0x0a, meta);
    for (const item of items) pos = putLengthDelimited(out, pos, 0x12, item);
    out.set(ENVELOPE_TAIL, pos);
    return out;
  }

  /**
   * The bytes of {@link encodeListFromItems} as chunks to write in order, referencing the item
   * bytes instead of copying them: for streaming a large list to a socket without building it.
   * The chunks alias `items`, which must not change until they are written.
   */
  encodeListParts(
    apiVersion: string,
    listKind: string,
    listMeta: JsonObject,
    items: readonly Uint8Array[],
  ): Uint8Array[] {
    const meta = this.encodeMessage(LIST_META, listMeta);
    let rawLength = 1 + varintSize(meta.length) + meta.length;
    for (const item of items) rawLength += 1 + varintSize(item.length) + item.length;
    const head = envelopeHead(apiVersion, listKind, rawLength);
    const first = Buffer.allocUnsafe(head.length + 1 + varintSize(meta.length) + meta.length);
    first.set(head, 0);
    putLengthDelimited(first, head.length, 0x0a, meta);
    const parts: Uint8Array[] = [first];
    // One buffer for all item keys and lengths (at most 1 + 5 bytes each).
    const headers = Buffer.allocUnsafe(items.length * 6);
    let pos = 0;
    for (const item of items) {
      const start = pos;
      headers[pos++] = 0x12;
      for (let n = item.length; ; n >>>= 7) {
        if (n < 0x80) {
          headers[pos++] = n;
          break;
        }
        headers[pos++] = (n & 0x7f) | 0x80;
      }
      parts.push(headers.subarray(start, pos), item);
    }
    parts.push(ENVELOPE_TAIL);
    return parts;
  }

  /**
   * A whole list body from JSON: `list` holds `metadata` and `items` (items of `itemType`);
   * the list message is `listType` (e.g. `k8s.io.api.core.v1.PodList`), enveloped with the
   * list's `apiVersion`/`kind` unless given.
   */
  encodeList(listType: string, list: JsonObject, apiVersion?: string, kind?: string): Uint8Array {
    return this.encodeObject(listType, list, apiVersion, kind);
  }

  /** The compiled plan of `typeName` (exposed for tests and generators). */
  plan(typeName: string): MessagePlan {
    return this.#plan(typeName);
  }

  #plan(typeName: string): MessagePlan {
    return this.#planner.plan(typeName);
  }

  #fields(w: Writer, plan: MessagePlan, obj: JsonObject): void {
    if (!isObject(obj)) throw invalidValue(`${plan.name}: expected a JSON object`);
    try {
      this.#encoder.fields(w, plan, obj, 0);
    } catch (err) {
      throw wrapStackOverflow(err, plan.name);
    }
  }

  #decode(plan: MessagePlan, r: Reader, rawJson?: WeakSet<object>): JsonObject {
    try {
      return this.#decoder.decode(r, plan, rawJson);
    } catch (err) {
      throw wrapStackOverflow(err, plan.name);
    }
  }

  #envelopeStart(w: Writer, apiVersion: string, kind: string): void {
    w.raw(PROTOBUF_MAGIC);
    w.uint32(0x0a);
    const tm = w.beginLength();
    w.uint32(0x0a);
    w.string(apiVersion);
    w.uint32(0x12);
    w.string(kind);
    w.endLength(tm);
    w.uint32(0x12);
  }
}

function putLengthDelimited(out: Uint8Array, pos: number, key: number, body: Uint8Array): number {
  out[pos++] = key;
  let n = body.length;
  while (n > 0x7f) {
    out[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[pos++] = n;
  out.set(body, pos);
  return pos + body.length;
}

/** Keeps the contract "only CodecErrors escape": a stack overflow becomes PROTOBUF_TOO_DEEP. */
function wrapStackOverflow(err: unknown, type: string): unknown {
  if (err instanceof RangeError)
    return new CodecError('PROTOBUF_TOO_DEEP', `${type}: nesting exhausted the stack`, { cause: err });
  return err;
}
