/**
 * What every store wrapper that changes values (the storage codec's transcoding store, the
 * encrypting store) does: values are mapped to their stored form on the way in and back to the
 * caller's form on every way out (get, range, watch events, deleted values, and the `current`
 * value that `AlreadyExistsError` and `ConflictError` carry), so callers never see the inner
 * form. {@link ValueMappingStore} does all of that; a wrapper defines only the two mappings.
 */
import { AlreadyExistsError, ConflictError } from './errors.js';
import type {
  CreateOptions,
  DeleteOptions,
  GetOptions,
  GetResult,
  KeySpan,
  KeyValue,
  RangeOptions,
  RangeResult,
  TxnRequest,
  UpdateOptions,
  Watch,
  WatchEvent,
  WatchOptions,
  WriteResult,
} from './interface.js';
import { MappedWatch } from './mapped-watch.js';
import { PassThroughStore } from './pass-through-store.js';

/** Maps one stored key-value to the caller's form. */
export type KeyValueMapping = (kv: KeyValue) => KeyValue;

/**
 * `event` with its values mapped: `kv` through `out`, `prevKv` through `outPrevious` (a wrapper
 * may map previous values lazily, as most watchers never read them).
 */
export function mapWatchEvent(
  event: WatchEvent,
  out: KeyValueMapping,
  outPrevious: KeyValueMapping = out,
): WatchEvent {
  switch (event.type) {
    case 'progress':
      return event;
    case 'put':
      return {
        ...event,
        kv: out(event.kv),
        prevKv: event.prevKv === undefined ? undefined : outPrevious(event.prevKv),
      };
    case 'delete':
      return { ...event, prevKv: outPrevious(event.prevKv) };
  }
}

/**
 * What a lazy mapping gives: the value, or the value and what making it produced on the way (a
 * decoder's parse of it), which the reader whose call made the value may take.
 */
export type LazyValue = Uint8Array | { readonly value: Uint8Array; readonly parsed?: unknown };

/** A key-value whose value is mapped on first read ({@link lazyKeyValue}). */
export interface LazyKeyValue extends KeyValue {
  /**
   * What the mapping produced besides the value, when this call is the one that maps it (the
   * caller's own; never kept); undefined when the value was mapped before, or nothing was.
   */
  parsed(): unknown;
}

/**
 * `kv` whose value is `map(kv)`, computed on the first read of `value` (or `parsed()`) and kept;
 * the stored form is dropped then. For values that most readers never look at (a watch event's
 * previous value, an event no watcher or list asks for).
 */
export function lazyKeyValue(kv: KeyValue, map: (kv: KeyValue) => LazyValue): LazyKeyValue {
  return new LazilyMapped(kv, map);
}

class LazilyMapped implements LazyKeyValue {
  readonly key: string;
  readonly createRevision: bigint;
  readonly modRevision: bigint;
  readonly lease: bigint;
  #stored: KeyValue | undefined;
  #map: ((kv: KeyValue) => LazyValue) | undefined;
  #value: Uint8Array | undefined;

  constructor(kv: KeyValue, map: (kv: KeyValue) => LazyValue) {
    this.key = kv.key;
    this.createRevision = kv.createRevision;
    this.modRevision = kv.modRevision;
    this.lease = kv.lease;
    this.#stored = kv;
    this.#map = map;
  }

  get value(): Uint8Array {
    if (this.#value === undefined) this.#mapNow();
    return this.#value as Uint8Array;
  }

  parsed(): unknown {
    return this.#value === undefined ? this.#mapNow() : undefined;
  }

  /** Maps the stored value, keeps the result, drops the stored form; gives what came with it. */
  #mapNow(): unknown {
    const mapped = (this.#map as (kv: KeyValue) => LazyValue)(this.#stored as KeyValue);
    this.#stored = undefined;
    this.#map = undefined;
    if (mapped instanceof Uint8Array) {
      this.#value = mapped;
      return undefined;
    }
    this.#value = mapped.value;
    return mapped.parsed;
  }
}

/** `map`, except that an empty value (a deleted key's, a keys-only read's) passes unmapped. */
function nonEmpty(map: KeyValueMapping): KeyValueMapping {
  return (kv) => (kv.value.byteLength === 0 ? kv : map(kv));
}

/** Awaits `pending`; a conflict's or an existing key's `current` value is rethrown mapped. */
async function mapStoreErrors<T>(pending: Promise<T>, out: KeyValueMapping): Promise<T> {
  try {
    return await pending;
  } catch (err) {
    if (err instanceof AlreadyExistsError && err.current !== undefined) {
      throw new AlreadyExistsError(err.key, out(err.current));
    }
    if (err instanceof ConflictError && err.current !== undefined) {
      throw new ConflictError(err.key, err.expectedModRevision, out(err.current), err.revision);
    }
    throw err;
  }
}

/**
 * A {@link PassThroughStore} that maps values and nothing else: keys, revisions and leases pass
 * through untouched. Empty values (a deleted key's in a watch event, keys-only reads) are never
 * mapped. A put's result carries the caller's own bytes unless the wrapper says otherwise
 * ({@link toCallerWritten}).
 */
export abstract class ValueMappingStore extends PassThroughStore {
  /** The mappings out as fields, so events and errors allocate no closure per call. */
  readonly #out = nonEmpty((kv) => this.toCaller(kv));
  readonly #outPrevious = nonEmpty((kv) => this.toCallerPrevious(kv));
  readonly #outWatched = nonEmpty((kv) => this.toCallerWatched(kv));

  /** The stored form of `value`, written under `key`. */
  protected abstract toStored(key: string, value: Uint8Array): Uint8Array;

  /** `kv` (its value non-empty) with the caller's form of its value; `kv` itself if that is the same. */
  protected abstract toCaller(kv: KeyValue): KeyValue;

  /** As {@link toCaller}, for a watch event's previous value (a wrapper may map it lazily). */
  protected toCallerPrevious(kv: KeyValue): KeyValue {
    return this.toCaller(kv);
  }

  /**
   * A put's result: by default `kv` with the caller's own `value` (the value mapped in, unchanged
   * by the round trip); a wrapper whose stored form changes what a reader sees gives that form.
   * `kv.value` is the stored form.
   */
  protected toCallerWritten(kv: KeyValue, value: Uint8Array): KeyValue {
    return { ...kv, value };
  }

  /** As {@link toCaller}, for a watch event's value (a wrapper may map it lazily). */
  protected toCallerWatched(kv: KeyValue): KeyValue {
    return this.toCaller(kv);
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await this.#errors(this.inner.get(key, options));
    return result.kv === undefined ? result : { kv: this.#out(result.kv), revision: result.revision };
  }

  async range(span: KeySpan, options?: RangeOptions): Promise<RangeResult> {
    const result = await this.inner.range(span, options);
    if (result.items.length === 0 || options?.keysOnly === true) return result;
    return { ...result, items: result.items.map(this.#out) };
  }

  async create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult> {
    const stored = this.toStored(key, value);
    return this.#written(await this.#errors(this.inner.create(key, stored, options)), value, stored);
  }

  async update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    const stored = this.toStored(key, value);
    return this.#written(await this.#errors(this.inner.update(key, stored, options)), value, stored);
  }

  async delete(key: string, options?: DeleteOptions): Promise<WriteResult> {
    const deleted = await this.#errors(this.inner.delete(key, options));
    return { revision: deleted.revision, kv: this.#out(deleted.kv) };
  }

  async txn(request: TxnRequest): Promise<WriteResult> {
    const { then } = request;
    if (then.op === 'put') {
      const stored = this.toStored(request.key, then.value);
      const written = await this.#errors(this.inner.txn({ ...request, then: { ...then, value: stored } }));
      return this.#written(written, then.value, stored);
    }
    const deleted = await this.#errors(this.inner.txn(request));
    return { revision: deleted.revision, kv: this.#out(deleted.kv) };
  }

  watch(span: KeySpan, options?: WatchOptions): Watch {
    return new MappedWatch(this.inner.watch(span, options), (event) =>
      mapWatchEvent(event, this.#outWatched, this.#outPrevious),
    );
  }

  #errors<T>(pending: Promise<T>): Promise<T> {
    return mapStoreErrors(pending, this.#out);
  }

  /** A put's result in the caller's form (`value` was given, `stored` written). */
  #written(result: WriteResult, value: Uint8Array, stored: Uint8Array): WriteResult {
    return { revision: result.revision, kv: this.toCallerWritten({ ...result.kv, value: stored }, value) };
  }
}
