/**
 * The storage encoding of objects (`--storage-media-type`), in one place. kube-apiserver stores
 * built-in kinds as protobuf envelopes (`k8s\0` + `runtime.Unknown`) without
 * `metadata.resourceVersion`; Capstan does the same by default, or stores JSON when
 * `application/json` is chosen. Reads detect the encoding by the magic, so values written in
 * either encoding (by Capstan under another flag, or by kube-apiserver) stay readable.
 *
 * Objects are stored in their storage version (src/conversion: events.k8s.io/v1 Events as core
 * v1 Events, autoscaling/v1 HorizontalPodAutoscalers as v2, as kube-apiserver); readers convert them back to their own type's form.
 *
 * The handlers work with JSON bytes in the storage layout (`kind`, `apiVersion`, `metadata`
 * first, no resourceVersion: see src/api/object.ts); this codec converts that layout to and
 * from the chosen encoding at the storage boundary (see transcoding-store.ts).
 */
import { decodeEnvelope, hasProtobufMagic, isCodecError } from '../codec/index.js';
import { ownedUtf8 } from '../api/bytes.js';
import { goEscapedJson } from '../api/go-json.js';
import {
  encodeForStorage,
  isJsonObject,
  ObjectJson,
  storedLayout,
  type JsonObject,
  type KubeObject,
} from '../api/object.js';
import { toStorageVersion } from '../conversion/index.js';
import { CONVERTED_KINDS } from '../registry/stored-as.js';
import { typeClaimTemplates } from '../defaults/workloads.js';
import type { ProtobufEncoder } from './protobuf.js';

/** A stored value in the handlers' form, and the object it is the text of when a decode made one. */
export type Decoded = { readonly value: Uint8Array; readonly parsed?: JsonObject };

/** The storage media types `--storage-media-type` accepts. */
export type StorageMediaType = 'application/json' | 'application/vnd.kubernetes.protobuf';

/** The flag's values (kube-apiserver also accepts yaml; Capstan stores that as JSON). */
export const STORAGE_MEDIA_TYPES: readonly string[] = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
];

/**
 * The storage media type of a flag value (`application/yaml` stores JSON: YAML is a superset).
 * @throws RangeError for any other value.
 */
export function storageMediaType(flag: string): StorageMediaType {
  if (flag === 'application/vnd.kubernetes.protobuf') return flag;
  if (flag === 'application/json' || flag === 'application/yaml' || flag === '') return 'application/json';
  throw new RangeError(`--storage-media-type: unsupported media type ${JSON.stringify(flag)}`);
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** How the handlers' storage layout of those kinds begins (`kind`, `apiVersion` first). */
const CONVERTED_PREFIXES = CONVERTED_KINDS.map((k) =>
  Buffer.from(`{"kind":${JSON.stringify(k.kind)},"apiVersion":${JSON.stringify(k.apiVersion)}`),
);

function hasPrefix(bytes: Uint8Array, prefix: Buffer): boolean {
  if (bytes.byteLength < prefix.byteLength) return false;
  return prefix.equals(Buffer.from(bytes.buffer, bytes.byteOffset, prefix.byteLength));
}

/**
 * Deletes null properties from the decoded `value` in place, except inside embedded raw JSON
 * (`raw`): kube keeps a RawExtension byte for byte, and controllers compare it so (a
 * ControllerRevision's `data` holds a template's `"creationTimestamp":null`). Nulls in arrays
 * stay, as `JSON.stringify` would write them anyway.
 */
function dropNulls(value: unknown, raw: WeakSet<object>): void {
  if (typeof value !== 'object' || value === null || raw.has(value)) return;
  if (Array.isArray(value)) {
    for (const item of value) dropNulls(item, raw);
    return;
  }
  const o = value as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    const v = o[key];
    if (v === null) delete o[key];
    else dropNulls(v, raw);
  }
}

/** The objects parsed from embedded raw JSON, and whether there were any. */
class RawJsonSeen extends WeakSet<object> {
  seen = false;

  override add(value: object): this {
    this.seen = true;
    return super.add(value);
  }
}

/** True when objects of `kind` in `apiVersion` are stored as another version (CONVERTED_KINDS). */
function storedConverted(kind: string, apiVersion: string): boolean {
  return CONVERTED_KINDS.some((k) => k.kind === kind && k.apiVersion === apiVersion);
}

/**
 * Bytes already in the storage encoding (a protobuf envelope), with the stored layout of the
 * object they were encoded from: {@link StorageCodec.toStorage} passes them through. Slices and
 * views of it are plain `Uint8Array`s.
 */
export class EncodedObject extends Uint8Array {
  readonly object: JsonObject;

  static get [Symbol.species](): Uint8ArrayConstructor {
    return Uint8Array;
  }

  constructor(bytes: Uint8Array, object: JsonObject) {
    super(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
    this.object = object;
  }
}

/** Converts stored values between the handlers' JSON layout and the storage encoding. */
export class StorageCodec {
  readonly mediaType: StorageMediaType;
  readonly #protobuf: () => ProtobufEncoder;

  /** @param protobuf gives the encoder on first use (schemas load lazily). */
  constructor(mediaType: StorageMediaType, protobuf: () => ProtobufEncoder) {
    this.mediaType = mediaType;
    this.#protobuf = protobuf;
  }

  /**
   * The bytes to store for `json` (the handlers' storage layout). With protobuf storage, an
   * object of a kind without a protobuf form, or whose values protobuf cannot carry, is stored
   * as JSON: still readable, never lost.
   */
  toStorage(json: Uint8Array): Uint8Array {
    if (json instanceof EncodedObject) return json;
    const converted = CONVERTED_PREFIXES.some((prefix) => hasPrefix(json, prefix));
    if (this.mediaType === 'application/json' && !converted) return json;
    // A handler's bytes carry their object: no second parse.
    const parsed = json instanceof ObjectJson ? json.object : parseJson(json);
    if (!isJsonObject(parsed)) return json;
    // kube's storage version: events.k8s.io/v1 Events as core v1, autoscaling/v1 HPAs as v2.
    const obj = converted ? toStorageVersion(parsed as KubeObject) : parsed;
    if (this.mediaType === 'application/json') return Buffer.from(JSON.stringify(obj));
    const { apiVersion, kind } = obj;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string') return json;
    const encoder = this.#protobuf();
    const type = encoder.messageTypeOf(apiVersion, kind);
    if (type === undefined) return json;
    try {
      return encoder.codec.encodeObject(type, obj, apiVersion, kind);
    } catch (err) {
      if (isCodecError(err)) return json;
      throw err;
    }
  }

  /**
   * What a handler hands the store for `obj`: with protobuf storage and a kind that has a
   * protobuf form, its protobuf envelope ({@link EncodedObject}), encoded from the object
   * without the JSON text {@link toStorage} would otherwise be given and not need; otherwise
   * {@link encodeForStorage}'s JSON, which {@link toStorage} converts as before. `obj` is not
   * modified.
   */
  encode(obj: KubeObject): Uint8Array {
    const { apiVersion, kind } = obj;
    if (
      this.mediaType === 'application/json' ||
      typeof apiVersion !== 'string' ||
      typeof kind !== 'string' ||
      storedConverted(kind, apiVersion)
    ) {
      return encodeForStorage(obj);
    }
    const encoder = this.#protobuf();
    const type = encoder.messageTypeOf(apiVersion, kind);
    if (type === undefined) return encodeForStorage(obj);
    const stored = storedLayout(obj, kind, apiVersion);
    try {
      return new EncodedObject(encoder.codec.encodeObject(type, stored, apiVersion, kind), stored);
    } catch (err) {
      if (isCodecError(err)) return encodeForStorage(obj);
      throw err;
    }
  }

  /**
   * The handlers' JSON layout of a stored value, whatever its encoding: JSON passes through,
   * a protobuf envelope is decoded (its `metadata.resourceVersion`, if any, dropped: the key's
   * mod revision is the version). Values that are neither (or of unknown kinds) pass through
   * unchanged, for the handlers to reject as corrupt.
   */
  fromStorage(value: Uint8Array): Uint8Array {
    return this.fromStorageParsed(value).value;
  }

  /**
   * {@link fromStorage}'s bytes, with the object a protobuf value was decoded to (none for a
   * value that passed through). The bytes are that object's JSON text, so a caller about to
   * parse them may take the object instead; it is the caller's own.
   */
  fromStorageParsed(value: Uint8Array): Decoded {
    if (!hasProtobufMagic(value)) return { value };
    try {
      const envelope = decodeEnvelope(value);
      const encoder = this.#protobuf();
      const type = encoder.messageTypeOf(envelope.apiVersion, envelope.kind);
      if (type === undefined) return { value };
      const raw = new RawJsonSeen();
      const body = encoder.codec.decodeMessage(type, envelope.raw, raw);
      const object = storedLayout(body, envelope.kind, envelope.apiVersion);
      if (envelope.kind === 'StatefulSet' && isJsonObject(object['spec'])) typeClaimTemplates(object['spec']);
      // Nulls (zero times such as a template's `creationTimestamp`) are dropped: the handlers'
      // JSON never holds them, and an update must compare equal to what it read back.
      dropNulls(object, raw);
      // Embedded raw JSON (a ControllerRevision's data) is served as a Go client wrote it, which
      // Go clients compare byte for byte (kube's `daemon.Match`, kubectl's DaemonSet rollback).
      const text = JSON.stringify(object);
      return { value: ownedUtf8(raw.seen ? goEscapedJson(text) : text), parsed: object };
    } catch (err) {
      if (isCodecError(err)) return { value };
      throw err;
    }
  }
}
