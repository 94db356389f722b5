/**
 * One version of one object as the watch cache holds it: the stored JSON bytes (without
 * `resourceVersion`, as storage keeps them), the revision to show as its resourceVersion, and a
 * lazily filled cache of its other encodings (protobuf, tables), one per wire format, shared by
 * every list and watcher that sends it. JSON is not kept: it is the stored bytes with the
 * resourceVersion spliced in (`resourceVersionParts`), made when sent, with no parse and no
 * stringify, and a kept copy would hold the stored bytes twice.
 *
 * A version made from a key-value reads the key-value's `value` only when first asked: a store
 * may decode it lazily (src/representation/transcoding-store.ts), and a version nobody reads is
 * then never decoded.
 */
import type { ObjectSource } from '../representation/types.js';
import type { KubeObject } from '../api/object.js';
import { decodeStored, storedObjectAt, withResourceVersion } from '../api/object.js';

/**
 * What a version reads its bytes from: the bytes, or a key-value (which also has its create
 * revision). A key-value that decodes its value on first read may offer `parsed`: the object
 * that decode makes, to the caller whose call makes it (the transcoding store's watch events).
 */
type VersionSource = {
  readonly value: Uint8Array;
  readonly createRevision?: bigint;
  readonly parsed?: () => unknown;
};

/** An immutable object version whose encodings are each computed once while it is the current one. */
export class ObjectVersion implements ObjectSource {
  /** The storage key. */
  readonly key: string;
  /** Where the stored bytes are read (a lazy key-value computes them once, on the first read). */
  readonly #source: VersionSource;
  /** The resourceVersion this version carries on the wire (a delete's revision for DELETED). */
  readonly revision: bigint;
  #encodings: Map<string, Uint8Array> | undefined;
  #object: KubeObject | undefined;
  /** Set by {@link forgetDerived}: encodings are then made for each caller and not kept. */
  #replaced = false;

  /** `value`: the stored bytes, or a key-value (or another holder) whose `value` gives them. */
  constructor(key: string, value: Uint8Array | VersionSource, revision: bigint) {
    this.key = key;
    this.#source = value instanceof Uint8Array ? { value } : value;
    this.revision = revision;
  }

  /** Stored bytes (never mutated; shared with the store's read result). */
  get value(): Uint8Array {
    return this.#source.value;
  }

  /** The key's create revision, when this version came with its key-value (a watch event); else 0. */
  get createRevision(): bigint {
    return this.#source.createRevision ?? 0n;
  }

  /**
   * The object in `format`, encoding it with `encode` the first time any caller asks for that
   * format (every time, once a newer version replaced this one). `format` is any stable name
   * (`protobuf`, `table;v1`, ...): the cache does not interpret it. `encode` must be a pure
   * function of this version; a throw is passed through and nothing is cached. Callers must not
   * mutate the returned bytes.
   */
  encoded(format: string, encode: () => Uint8Array): Uint8Array {
    const known = this.#encodings?.get(format);
    if (known !== undefined) return known;
    const bytes = encode();
    if (!this.#replaced) (this.#encodings ??= new Map()).set(format, bytes);
    return bytes;
  }

  /** True when `format` is kept encoded (for tests). */
  hasEncoding(format: string): boolean {
    return this.#encodings?.has(format) ?? false;
  }

  /** The JSON bytes with `metadata.resourceVersion` set, spliced from the stored bytes per call. */
  json(): Uint8Array {
    return withResourceVersion(this.value, this.revision);
  }

  /**
   * The parsed object, for selectors and other read-only inspection, kept until the watch cache
   * forgets it (and never kept once a newer version replaced this one). Shared: callers must not
   * mutate it.
   */
  object(): KubeObject {
    if (this.#object !== undefined) return this.#object;
    const handed = this.#source.parsed?.();
    const object =
      handed === undefined ? decodeStored(this.value, this.revision) : storedObjectAt(handed, this.revision);
    if (!this.#replaced) this.#object = object;
    return object;
  }

  /**
   * Drops the parsed object; a later {@link object} parses again. The watch cache calls it for the
   * current version once every watcher has decided its selections on it: a parsed pod takes about
   * as much memory again as its JSON bytes, and the next change parses it at most once more.
   */
  forgetObject(): void {
    this.#object = undefined;
  }

  /**
   * Drops everything but the stored bytes: the parsed object and every encoding, and keeps no
   * encoding made later. The watch cache calls it for a version a newer one replaced, once every
   * watcher has been offered the change: the event window keeps such versions for resuming
   * watchers, which seldom come.
   */
  forgetDerived(): void {
    this.#object = undefined;
    this.#encodings = undefined;
    this.#replaced = true;
  }

  /** The same stored bytes shown at another revision (an object leaving a selection, a delete). */
  at(revision: bigint): ObjectVersion {
    return revision === this.revision ? this : new ObjectVersion(this.key, this.#source, revision);
  }
}
