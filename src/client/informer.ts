/**
 * Shared informers, as client-go's: one reflector per resource (and selectors) per factory feeds
 * an indexed store; handlers run after the store is updated. The informer compares what it is
 * handed with what it holds, so a relist turns into adds, updates (only for a new
 * resourceVersion) and deletes (handing the last known object), and the same resourceVersion is
 * never delivered twice.
 */
import { setMaxListeners } from 'node:events';
import type { Client, TypedObject } from './client.js';
import { IndexedStore, objectKey, type Indexer } from './indexer.js';
import { Reflector, type ReflectorSink } from './reflector.js';
import { groupResource, type ResourceRef } from './resources.js';

export { objectKey, splitKey, NAMESPACE_INDEX, type Indexer, type IndexFunc } from './indexer.js';

/** Callbacks of an informer; each is optional. Objects are shared: never mutate them. */
export interface EventHandler<T> {
  add?(obj: T): void;
  update?(old: T, cur: T): void;
  delete?(obj: T): void;
}

/** One resource's informer. */
export interface SharedInformer<T> {
  /** Registers handlers; objects already in the store are delivered to `add` at once. */
  addHandler(h: EventHandler<T>): void;
  readonly store: Indexer<T>;
  /** True once the first list (or WatchList) is in the store and delivered. */
  hasSynced(): boolean;
  /** Resolves once synced; rejects with the signal's reason when aborted first. */
  whenSynced(signal?: AbortSignal): Promise<void>;
  lastSyncResourceVersion(): string;
}

/** Options of a factory. */
export interface SharedInformerFactoryOptions {
  /** Watch only this namespace (namespaced resources). */
  namespace?: string;
  /** Every `resyncMs`, `update(obj, obj)` for every object; 0 or absent: never. */
  resyncMs?: number;
  /** Use WatchList (`sendInitialEvents`) where the server has it (default false). */
  watchList?: boolean;
  /** Where failures (reflector retries, throwing handlers) are reported; default console.error. */
  log?: (message: string, err: unknown) => void;
  /**
   * Applied to every object before it is stored and handed to handlers (client-go's
   * `WithTransform`), e.g. {@link stripManagedFields}, as each list page and watch event arrives.
   * It must not mutate its argument.
   */
  transform?: (obj: TypedObject) => TypedObject;
}

/**
 * `obj` without `metadata.managedFields` (a shallow copy when it had them), the transform
 * kube-scheduler and kube-controller-manager v1.33 give their informers: the entries are often the
 * largest part of an object's metadata, and only server-side apply reads them. An update sent from
 * such a copy leaves the stored entries as they are (the field is absent, not empty).
 */
export function stripManagedFields<T extends TypedObject>(obj: T): T {
  const meta = obj.metadata;
  if (meta === undefined || !Object.hasOwn(meta, 'managedFields')) return obj;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...obj, metadata: rest };
}

const defaultLog = (message: string, err: unknown): void => {
  console.error(message, err);
};

/** The informer of one resource (and selectors). */
class Informer<T extends TypedObject> implements SharedInformer<T>, ReflectorSink<T> {
  readonly store = new IndexedStore<T>();
  readonly #name: string;
  readonly #handlers: EventHandler<T>[] = [];
  readonly #reflector: Reflector<T>;
  readonly #log: (message: string, err: unknown) => void;
  readonly #resyncMs: number;
  #synced = false;
  readonly #syncWaiters: (() => void)[] = [];
  #running: Promise<void> | undefined;

  constructor(
    client: Client,
    ref: ResourceRef,
    selectors: { labelSelector?: string; fieldSelector?: string },
    opts: SharedInformerFactoryOptions,
  ) {
    this.#name = groupResource(ref);
    this.#log = opts.log ?? defaultLog;
    this.#resyncMs = opts.resyncMs ?? 0;
    const transform = opts.transform;
    this.#reflector = new Reflector<T>(client.resource<T>(ref), this, {
      ...(transform === undefined ? {} : { transform: (obj: T) => transform(obj) as T }),
      ...(ref.namespaced && opts.namespace !== undefined ? { namespace: opts.namespace } : {}),
      ...selectors,
      ...(opts.watchList === undefined ? {} : { watchList: opts.watchList }),
      log: this.#log,
    });
  }

  addHandler(h: EventHandler<T>): void {
    this.#handlers.push(h);
    if (h.add !== undefined) for (const obj of this.store.list()) this.#call(h, 'add', obj);
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  whenSynced(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted === true) {
        reject(signal.reason as Error);
        return;
      }
      const onAbort = (): void => reject(signal?.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#syncWaiters.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  lastSyncResourceVersion(): string {
    return this.#reflector.lastSyncResourceVersion;
  }

  /** Starts the reflector (and resync) until `signal` aborts; idempotent. */
  run(signal: AbortSignal): Promise<void> {
    this.#running ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      if (this.#resyncMs > 0) timer = setInterval(() => this.#resync(), this.#resyncMs);
      try {
        await this.#reflector.run(signal);
      } finally {
        clearInterval(timer);
      }
    })();
    return this.#running;
  }

  #resync(): void {
    if (!this.#synced) return;
    for (const obj of this.store.list()) for (const h of this.#handlers) this.#call(h, 'update', obj, obj);
  }

  #call(h: EventHandler<T>, what: 'add' | 'update' | 'delete', a: T, b?: T): void {
    try {
      if (what === 'add') h.add?.(a);
      else if (what === 'update') h.update?.(a, b ?? a);
      else h.delete?.(a);
    } catch (err) {
      this.#log(`informer ${this.#name}: ${what} handler failed for ${objectKey(a)}`, err);
    }
  }

  #deliver(what: 'add' | 'update' | 'delete', a: T, b?: T): void {
    for (const h of this.#handlers) this.#call(h, what, a, b);
  }

  #upsert(obj: T): void {
    const key = objectKey(obj);
    const old = this.store.set(key, obj);
    if (old === undefined) this.#deliver('add', obj);
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
      this.#deliver('update', old, obj);
  }

  replace(items: T[], _resourceVersion: string): void {
    const seen = new Set<string>();
    for (const obj of items) {
      seen.add(objectKey(obj));
      this.#upsert(obj);
    }
    for (const key of this.store.keys()) {
      if (seen.has(key)) continue;
      const gone = this.store.remove(key);
      if (gone !== undefined) this.#deliver('delete', gone);
    }
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
  }

  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void {
    if (type === 'DELETED') {
      this.store.remove(objectKey(obj));
      this.#deliver('delete', obj);
      return;
    }
    this.#upsert(obj);
  }
}

/** One informer per resource and selectors, shared by everything in a process. */
export class SharedInformerFactory {
  readonly #client: Client;
  readonly #opts: SharedInformerFactoryOptions;
  readonly #informers = new Map<string, Informer<TypedObject>>();
  readonly #runs: Promise<void>[] = [];
  #abort: AbortController | undefined;

  constructor(client: Client, opts: SharedInformerFactoryOptions = {}) {
    this.#client = client;
    this.#opts = opts;
  }

  /** The informer of `ref` with these selectors, created on first ask (and started if the factory runs). */
  informer<T extends TypedObject>(
    ref: ResourceRef,
    opts: { labelSelector?: string; fieldSelector?: string } = {},
  ): SharedInformer<T> {
    const key = `${ref.group}/${ref.version}/${ref.resource}?${opts.labelSelector ?? ''}&${opts.fieldSelector ?? ''}`;
    let inf = this.#informers.get(key);
    if (inf === undefined) {
      inf = new Informer<TypedObject>(this.#client, ref, opts, this.#opts);
      this.#informers.set(key, inf);
      if (this.#abort !== undefined) this.#runs.push(inf.run(this.#abort.signal));
    }
    return inf as unknown as SharedInformer<T>;
  }

  /** Starts every informer asked for so far, and later ones on creation. Idempotent. */
  start(): void {
    if (this.#abort !== undefined) return;
    this.#abort = new AbortController();
    // Every informer's reflector listens on this one signal: dozens are expected, not a leak.
    setMaxListeners(0, this.#abort.signal);
    for (const inf of this.#informers.values()) this.#runs.push(inf.run(this.#abort.signal));
  }

  /** Resolves when every informer asked for so far has synced. */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    // One listener per informer on the caller's signal while they sync.
    if (signal !== undefined) setMaxListeners(0, signal);
    await Promise.all([...this.#informers.values()].map((i) => i.whenSynced(signal)));
  }

  /** Stops every informer and waits for their loops to end. */
  async stop(): Promise<void> {
    this.#abort?.abort(new Error('informer factory stopped'));
    await Promise.all(this.#runs);
  }
}
