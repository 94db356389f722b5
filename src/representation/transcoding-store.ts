/**
 * A {@link Store} whose values are converted by a {@link StorageCodec} at the boundary: writes
 * store the chosen encoding, reads (get, range, watch events, and the current values carried by
 * AlreadyExists and Conflict errors) give the handlers' JSON layout whatever the stored
 * encoding. Keys, revisions, leases and everything else pass through untouched.
 */
import type {
  CreateOptions,
  DeleteOptions,
  GetOptions,
  GetResult,
  KeySpan,
  KeyValue,
  RangeOptions,
  RangeResult,
  Store,
  TxnRequest,
  UpdateOptions,
  Watch,
  WatchOptions,
  WriteResult,
} from '../../storage/interface.js';
import { MappedWatch } from '../../storage/mapped-watch.js';
import { PassThroughStore } from '../../storage/pass-through-store.js';
import { mapStoreErrors, mapWatchEvent, type KeyValueMapping } from '../../storage/value-mapping.js';
import type { StorageCodec } from './storage-codec.js';

/** `store` seen through `codec` (see the module comment). `close()` closes `store`. */
export function transcodingStore(store: Store, codec: StorageCodec): Store {
  return new TranscodingStore(store, codec);
}

/** Decoded versions remembered (by key and mod revision), oldest forgotten first. */
const MEMO_ENTRIES = 4096;

class TranscodingStore extends PassThroughStore {
  /** The value mappings as fields, so events and errors allocate no closure. */
  readonly #outKv: KeyValueMapping = (kv) => this.#out(kv);
  readonly #outPreviousKv: KeyValueMapping = (kv) => this.#lazyOut(kv);
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

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await this.#errors(this.inner.get(key, options));
    return result.kv === undefined ? result : { kv: this.#out(result.kv), revision: result.revision };
  }

  async range(span: KeySpan, options?: RangeOptions): Promise<RangeResult> {
    const result = await this.inner.range(span, options);
    if (result.items.length === 0 || options?.keysOnly === true) return result;
    return { ...result, items: result.items.map((kv) => this.#out(kv)) };
  }

  async create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult> {
    const written = await this.#errors(this.inner.create(key, this.#codec.toStorage(value), options));
    return this.#asWritten(written, value);
  }

  async update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    const written = await this.#errors(this.inner.update(key, this.#codec.toStorage(value), options));
    return this.#asWritten(written, value);
  }

  async delete(key: string, options?: DeleteOptions): Promise<WriteResult> {
    return this.#outWrite(await this.#errors(this.inner.delete(key, options)));
  }

  async txn(request: TxnRequest): Promise<WriteResult> {
    const then =
      request.then.op === 'put'
        ? { ...request.then, value: this.#codec.toStorage(request.then.value) }
        : request.then;
    const written = await this.#errors(this.inner.txn({ ...request, then }));
    return request.then.op === 'put' ? this.#asWritten(written, request.then.value) : this.#outWrite(written);
  }

  watch(span: KeySpan, options?: WatchOptions): Watch {
    return new MappedWatch(this.inner.watch(span, options), (event) =>
      mapWatchEvent(event, this.#outKv, this.#outPreviousKv),
    );
  }

  #out(kv: KeyValue): KeyValue {
    const value = this.#decode(kv);
    return value === kv.value ? kv : { ...kv, value };
  }

  #decode(kv: KeyValue): Uint8Array {
    if (kv.value.byteLength === 0) return kv.value;
    const memoKey = `${kv.modRevision}\u0000${kv.key}`;
    const known = this.#memo.get(memoKey);
    if (known !== undefined) return known;
    const value = this.#codec.fromStorage(kv.value);
    this.#remember(kv, value);
    return value;
  }

  #remember(kv: KeyValue, value: Uint8Array): void {
    if (this.#memo.size >= MEMO_ENTRIES) {
      const oldest = this.#memo.keys().next();
      if (oldest.done !== true) this.#memo.delete(oldest.value);
    }
    this.#memo.set(`${kv.modRevision}\u0000${kv.key}`, value);
  }

  /** A put's result carrying the caller's own bytes: no need to decode what was just encoded. */
  #asWritten(result: WriteResult, value: Uint8Array): WriteResult {
    // Not remembered for reads: a read must give the decoded form (protobuf materialises empty
    // messages such as `status: {}`), the same before and after a restart.
    return { revision: result.revision, kv: { ...result.kv, value } };
  }

  /**
   * `kv` with its value decoded on first read: watch consumers seldom look at `prevKv` (the watch
   * cache keeps its own previous state), so most previous values are never decoded.
   */
  #lazyOut(kv: KeyValue): KeyValue {
    const decode = (): Uint8Array => this.#decode(kv);
    let decoded: Uint8Array | undefined;
    return {
      key: kv.key,
      createRevision: kv.createRevision,
      modRevision: kv.modRevision,
      lease: kv.lease,
      get value(): Uint8Array {
        return (decoded ??= decode());
      },
    };
  }

  #outWrite(result: WriteResult): WriteResult {
    return { revision: result.revision, kv: this.#out(result.kv) };
  }

  #errors<T>(pending: Promise<T>): Promise<T> {
    return mapStoreErrors(pending, this.#outKv);
  }
}
