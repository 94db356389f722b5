/**
 * A {@link Store} whose values are converted by a {@link StorageCodec} at the boundary: writes
 * store the chosen encoding, reads (get, range, watch events, and the current values carried by
 * AlreadyExists and Conflict errors) give the handlers' JSON layout whatever the stored
 * encoding. Keys, revisions, leases and everything else pass through untouched.
 */
import type { KeyValue, Store } from '../../storage/interface.js';
import { ownedCopy } from '../../storage/bytes.js';
import { lazyKeyValue, ValueMappingStore } from '../../storage/value-mapping.js';
import type { Decoded, StorageCodec } from './storage-codec.js';

/** `store` seen through `codec` (see the module comment). `close()` closes `store`. */
export function transcodingStore(store: Store, codec: StorageCodec): Store {
  return new TranscodingStore(store, codec);
}

/** Decoded versions remembered (by key and mod revision), oldest forgotten first. */
const MEMO_ENTRIES = 4096;

class TranscodingStore extends ValueMappingStore {
  readonly #codec: StorageCodec;
  /**
   * Recently decoded versions: a version (key, mod revision) never changes, and the same one is
   * read again and again (the namespace of every create, a version read by a handler and then
   * by the watch cache), so each is decoded about once.
   */
  readonly #memo = new Map<string, Uint8Array>();

  constructor(inner: Store, codec: StorageCodec) {
    super(inner);
    this.#codec = codec;
  }

  protected toStored(_key: string, value: Uint8Array): Uint8Array {
    return this.#codec.toStorage(value);
  }

  /**
   * A put's result gives what a read of it will give: the stored form decoded, as kube-apiserver
   * answers a write with the object it decodes from the bytes it stored (protobuf materialises
   * Go's zero values such as `status: {}` and drops empty maps). Decoded on first read and
   * remembered, so the watch cache's copy of the same version costs no second decode.
   */
  protected override toCallerWritten(kv: KeyValue): KeyValue {
    return lazyKeyValue(kv, this.#decodeValue);
  }

  protected toCaller(kv: KeyValue): KeyValue {
    const { value } = this.#decode(kv);
    return value === kv.value ? kv : { ...kv, value };
  }

  /**
   * `kv` with its value decoded on first read: watch consumers seldom look at `prevKv` (the watch
   * cache keeps its own previous state), so most previous values are never decoded.
   */
  protected override toCallerPrevious(kv: KeyValue): KeyValue {
    return lazyKeyValue(kv, this.#decodeValue);
  }

  /**
   * `kv` with its value decoded on first read: the watch cache keeps every event, but decodes
   * one only when a list, a watcher or a read asks for it. A server that takes writes and serves
   * no watch of the type then never decodes its events (each server of a control plane sees
   * every write).
   */
  protected override toCallerWatched(kv: KeyValue): KeyValue {
    // The stored value may be a view into a larger network read, which the cache would then keep
    // alive for as long as it holds the version: it keeps a copy of the value's own bytes instead.
    // The decode's object is offered with the value (`parsed()`): the watch cache's first look at
    // a new version is often a selector's, which would otherwise parse the JSON just written.
    return lazyKeyValue({ ...kv, value: ownedCopy(kv.value) }, this.#decodeValue);
  }

  readonly #decodeValue = (kv: KeyValue): Decoded => this.#decode(kv);

  /** `kv`'s value decoded, with the object the decode made (none when remembered or passed through). */
  #decode(kv: KeyValue): Decoded {
    const memoKey = `${kv.modRevision}\u0000${kv.key}`;
    const known = this.#memo.get(memoKey);
    if (known !== undefined) return { value: known };
    const decoded = this.#codec.fromStorageParsed(kv.value);
    this.#remember(memoKey, decoded.value);
    return decoded;
  }

  #remember(memoKey: string, value: Uint8Array): void {
    if (this.#memo.size >= MEMO_ENTRIES) {
      const oldest = this.#memo.keys().next();
      if (oldest.done !== true) this.#memo.delete(oldest.value);
    }
    this.#memo.set(memoKey, value);
  }
}
