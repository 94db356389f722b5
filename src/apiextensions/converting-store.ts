/**
 * The store one request to a multi-version custom resource sees: every object it reads under the
 * kind's storage resource is in the request's version (converted by the CRD's conversion when
 * stored in another) and defaulted by its schema (when given a defaulter), and every object it
 * writes is converted to the storage version first, as kube's custom resource storage does. Other keys pass through. Conversion may be a webhook
 * call, so this works on whole reads (one conversion per get, range or watch event).
 */
import type {
  CreateOptions,
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
  DeleteOptions,
} from '../../storage/interface.js';
import { MappedWatch } from '../../storage/mapped-watch.js';
import { PassThroughStore } from '../../storage/pass-through-store.js';
import { mapWatchEvent } from '../../storage/value-mapping.js';
import { encodeForStorage, isJsonObject, type KubeObject } from '../api/object.js';

/** Converts objects to `apiVersion` (all of one kind); resolves in the same order. */
export type ConvertObjects = (objects: readonly KubeObject[], apiVersion: string) => Promise<KubeObject[]>;

function parse(value: Uint8Array): KubeObject | undefined {
  try {
    const obj: unknown = JSON.parse(
      Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8'),
    );
    return isJsonObject(obj) && isJsonObject(obj['metadata']) ? (obj as KubeObject) : undefined;
  } catch {
    return undefined;
  }
}

/** `store` with the objects under `prefix` converted (see the module comment). */
export class ConvertingStore extends PassThroughStore {
  readonly #prefix: string;
  readonly #target: string;
  readonly #storage: string;
  readonly #convert: ConvertObjects;
  readonly #defaults: ((obj: KubeObject) => void) | undefined;

  /**
   * @param prefix the storage resource's key prefix (`/<group>/<plural>/`).
   * @param target the request's apiVersion; @param storage the storage version's.
   * @param defaults applies the schema's defaults to an object read (in the request's version).
   */
  constructor(
    inner: Store,
    prefix: string,
    target: string,
    storage: string,
    convert: ConvertObjects,
    defaults?: (obj: KubeObject) => void,
  ) {
    super(inner);
    this.#prefix = prefix;
    this.#target = target;
    this.#storage = storage;
    this.#convert = convert;
    this.#defaults = defaults;
  }

  /** Values under the prefix in `apiVersion` (converted in one call), defaulted when reading. */
  async #values(kvs: readonly KeyValue[], apiVersion: string): Promise<KeyValue[]> {
    const defaults = apiVersion === this.#target ? this.#defaults : undefined;
    const parsed: { at: number; obj: KubeObject }[] = [];
    kvs.forEach((kv, at) => {
      if (!kv.key.startsWith(this.#prefix)) return;
      const obj = parse(kv.value);
      if (obj !== undefined && (obj.apiVersion !== apiVersion || defaults !== undefined))
        parsed.push({ at, obj });
    });
    if (parsed.length === 0) return [...kvs];
    const pending = parsed.filter((p) => p.obj.apiVersion !== apiVersion);
    if (pending.length > 0) {
      const converted = await this.#convert(
        pending.map((p) => p.obj),
        apiVersion,
      );
      pending.forEach((p, i) => {
        const obj = converted[i];
        if (obj !== undefined) p.obj = obj;
      });
    }
    const out = [...kvs];
    for (const p of parsed) {
      defaults?.(p.obj);
      const kv = out[p.at];
      if (kv !== undefined) out[p.at] = { ...kv, value: encodeForStorage(p.obj) };
    }
    return out;
  }

  async #one(kv: KeyValue, apiVersion: string): Promise<KeyValue> {
    const [out] = await this.#values([kv], apiVersion);
    return out ?? kv;
  }

  async #toStorage(key: string, value: Uint8Array): Promise<Uint8Array> {
    if (!key.startsWith(this.#prefix)) return value;
    const obj = parse(value);
    if (obj === undefined || obj.apiVersion === this.#storage) return value;
    const [converted] = await this.#convert([obj], this.#storage);
    return converted === undefined ? value : encodeForStorage(converted);
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await this.inner.get(key, options);
    return result.kv === undefined ? result : { ...result, kv: await this.#one(result.kv, this.#target) };
  }

  async range(span: KeySpan, options?: RangeOptions): Promise<RangeResult> {
    const result = await this.inner.range(span, options);
    if (result.items.length === 0 || options?.keysOnly === true) return result;
    return { ...result, items: await this.#values(result.items, this.#target) };
  }

  async create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult> {
    const stored = await this.#toStorage(key, value);
    return inRequestVersion(await this.inner.create(key, stored, options), value, stored);
  }

  async update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult> {
    const stored = await this.#toStorage(key, value);
    return inRequestVersion(await this.inner.update(key, stored, options), value, stored);
  }

  delete(key: string, options?: DeleteOptions): Promise<WriteResult> {
    return this.inner.delete(key, options);
  }

  txn(request: TxnRequest): Promise<WriteResult> {
    return this.inner.txn(request);
  }

  watch(span: KeySpan, options?: WatchOptions): Watch {
    return new MappedWatch(this.inner.watch(span, options), async (event) => {
      if (event.type === 'progress') return event;
      // A delete's kv is the tombstone: only its previous value carries an object.
      const kvs =
        event.type === 'delete'
          ? [event.prevKv]
          : [event.kv, ...(event.prevKv === undefined ? [] : [event.prevKv])];
      const converted = await this.#values(kvs, this.#target);
      const byInput = new Map(kvs.map((kv, i) => [kv, converted[i] ?? kv]));
      return mapWatchEvent(event, (kv) => byInput.get(kv) ?? kv);
    });
  }
}

/**
 * A put's result in the request's version: the store's own result when nothing was converted,
 * else the request's `value` (what converting the stored object back would give).
 */
function inRequestVersion(written: WriteResult, value: Uint8Array, stored: Uint8Array): WriteResult {
  return stored === value ? written : { revision: written.revision, kv: { ...written.kv, value } };
}
