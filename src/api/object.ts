/**
 * The JSON shape of API objects as the resource handlers see them, and their storage encoding.
 *
 * Objects are stored as JSON bytes WITHOUT `metadata.resourceVersion`: the version is the key's
 * mod revision, set on the way out. We write every object with `kind`, `apiVersion`, `metadata`
 * first, so that a read can splice `"resourceVersion":"N"` into the stored bytes without parsing
 * them ({@link withResourceVersion}); bytes written by anyone else take the parse-and-encode path.
 */

/** A JSON object (the parsed body of a request or a stored value). */
export type JsonObject = { [key: string]: unknown };

/** `metadata` of an object, as far as the generic handlers read or write it. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string | null;
  deletionGracePeriodSeconds?: number | null;
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  finalizers?: string[] | null;
  ownerReferences?: unknown[] | null;
  managedFields?: unknown[] | null;
  [key: string]: unknown;
}

/** An API object: `kind`, `apiVersion`, `metadata`, and whatever else the kind has. */
export interface KubeObject extends JsonObject {
  kind?: string;
  apiVersion?: string;
  metadata: ObjectMeta;
}

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const encoder = new TextEncoder();
const METADATA_OPEN = Buffer.from('"metadata":{');

/**
 * JSON bytes that keep the object they were encoded from, so a later stage that needs the
 * object (the protobuf storage codec) does not parse them again: one request, one parse. Both
 * are treated as immutable. Slices and views of it are plain `Uint8Array`s.
 */
export class ObjectJson extends Uint8Array {
  /** The object `JSON.parse` of these bytes would give (up to key order). */
  readonly object: JsonObject;

  static get [Symbol.species](): Uint8ArrayConstructor {
    return Uint8Array;
  }

  constructor(bytes: Uint8Array<ArrayBuffer>, object: JsonObject) {
    super(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.object = object;
  }
}

/**
 * The storage bytes of `obj`: `kind`, `apiVersion`, `metadata` first, and no
 * `metadata.resourceVersion` (the store's revision is the version), carrying that stored form of
 * the object ({@link ObjectJson}). `obj` is not modified.
 */
export function encodeForStorage(obj: KubeObject): ObjectJson {
  const stored = storedLayout(obj, obj.kind, obj.apiVersion);
  return new ObjectJson(encoder.encode(JSON.stringify(stored)), stored);
}

/**
 * The stored layout of `obj` as `kind` and `apiVersion`: those two, then `metadata` without its
 * `resourceVersion` (`{}` when it is not an object), then the other members in `obj`'s order. A
 * shallow copy, made key by key: rest-destructuring takes V8's slow path, and every write and
 * every decoded stored version goes through here.
 */
export function storedLayout(obj: JsonObject, kind: unknown, apiVersion: unknown): JsonObject {
  const metadata = obj['metadata'];
  const meta = isJsonObject(metadata) ? copyWithout(metadata, 'resourceVersion') : {};
  const stored: JsonObject = { kind, apiVersion, metadata: meta };
  for (const key of Object.keys(obj)) if (key !== 'metadata') setOwn(stored, key, obj[key]);
  return stored;
}

/** A shallow copy of `obj`'s own members but `omitted`, in their order. */
export function copyWithout<V>(obj: Readonly<Record<string, V>>, omitted: string): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key of Object.keys(obj)) if (key !== omitted) setOwn(out, key, obj[key] as V);
  return out;
}

/**
 * Sets an own member, as a spread or `JSON.parse` does: a `__proto__` key stays a member
 * (assigning it would set the prototype).
 */
export function setOwn<V>(target: Record<string, V>, key: string, value: V): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * An own member's value, or undefined: `target['__proto__']` would read the prototype when the
 * object has no such member (and merging into that would change every object's prototype).
 */
export function ownMember<V>(target: Record<string, V>, key: string): V | undefined {
  return Object.hasOwn(target, key) ? target[key] : undefined;
}

/**
 * Parses stored bytes and sets `metadata.resourceVersion` to `revision`.
 * @throws SyntaxError when the bytes are not a JSON object with a metadata object (corrupt data).
 */
export function decodeStored(value: Uint8Array, revision: bigint): KubeObject {
  const parsed: unknown = JSON.parse(
    Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'),
  );
  return storedObjectAt(parsed, revision);
}

/**
 * `parsed`, the parse of a stored value (JSON's, or a decoder's that gives the same object), as
 * {@link decodeStored} gives it: its `metadata.resourceVersion` set to `revision`, in place.
 * @throws SyntaxError when it is not an API object.
 */
export function storedObjectAt(parsed: unknown, revision: bigint): KubeObject {
  if (!isJsonObject(parsed) || !isJsonObject(parsed['metadata'])) {
    throw new SyntaxError('stored value is not an API object');
  }
  const obj = parsed as KubeObject;
  obj.metadata.resourceVersion = String(revision);
  return obj;
}

/**
 * The wire JSON of a stored object at `revision` as three parts to write one after the other,
 * without parsing, when the bytes have the layout {@link encodeForStorage} writes:
 * `"resourceVersion":"N",` goes right after the top-level `"metadata":{`. The top-level metadata
 * key is found as the first `"metadata":{` when nothing before it opens an object (only the
 * `kind` and `apiVersion` strings precede it); a JSON string cannot contain that sequence
 * unescaped, so the match is the key itself. Undefined for any other layout.
 */
export function resourceVersionParts(
  value: Uint8Array,
  revision: bigint,
): readonly [Uint8Array, Uint8Array, Uint8Array] | undefined {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const at = bytes.indexOf(METADATA_OPEN);
  const metadataFirst =
    at > 0 && bytes[0] === 0x7b && bytes.indexOf(0x7b, 1) === at + METADATA_OPEN.length - 1;
  if (!metadataFirst) return undefined;
  const cut = at + METADATA_OPEN.length;
  const rv = `"resourceVersion":"${revision}"`;
  const empty = bytes[cut] === 0x7d; // `"metadata":{}` takes no comma
  return [bytes.subarray(0, cut), Buffer.from(empty ? rv : `${rv},`), bytes.subarray(cut)];
}

/**
 * The wire JSON of a stored object at `revision`: {@link resourceVersionParts} joined, or for
 * another layout, a parse and an encode. The result is for sending: it may share a pooled slab.
 */
export function withResourceVersion(value: Uint8Array, revision: bigint): Buffer {
  const parts = resourceVersionParts(value, revision);
  if (parts !== undefined) return Buffer.concat(parts);
  return Buffer.from(JSON.stringify(decodeStored(value, revision)));
}

/** `value` and everything in it, frozen (a JSON value: plain objects and arrays). */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * A deep copy of a JSON value (objects handled here are plain JSON). Plain objects and arrays are
 * copied member by member, which is several times faster than `structuredClone` (V8's serializer)
 * on API objects; any other object (a Date, a Buffer, a class instance) is handed to
 * `structuredClone`, so such values are copied as before. Like `structuredClone`, it keeps
 * `undefined` members and gives plain objects; unlike it, a value reachable twice is copied twice
 * (JSON has no shared references) and a cycle is not supported.
 */
export function cloneJson<T>(value: T): T {
  return cloneValue(value) as T;
}

function cloneValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = cloneValue(value[i]);
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const key in value) setOwn(out, key, cloneValue((value as Record<string, unknown>)[key]));
  return out;
}

/** Deep equality of two JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  return membersEqual(a as JsonObject, b as JsonObject, undefined);
}

/**
 * True when two JSON objects have equal members, apart from `ignored` (a member whose value is
 * undefined counts as absent, as in JSON). Loops, no intermediate arrays: every update
 * compares the object it stores with the one it read.
 */
export function membersEqual(a: JsonObject, b: JsonObject, ignored: string | undefined): boolean {
  let count = 0;
  for (const key of Object.keys(a)) {
    const value = a[key];
    if (value === undefined || key === ignored) continue;
    if (!Object.hasOwn(b, key) || !jsonEqual(value, b[key])) return false;
    count++;
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined && key !== ignored) count--;
  return count === 0;
}

/** The current time as kube's RFC 3339 seconds form, UTC: `2024-01-02T03:04:05Z`. */
export function rfc3339Seconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
