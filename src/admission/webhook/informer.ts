/**
 * A small informer: the objects under one storage prefix kept in memory by a list then a watch
 * (kube's shared informers and listers, which the webhook plugins read their configurations,
 * namespaces, Services and EndpointSlices from). A watch that fails is restarted from a fresh
 * list. Changes are applied as the store delivers them, so a write is seen within milliseconds.
 */
import type { Store, WatchEvent } from '../../../storage/interface.js';
import { decodeStored, type KubeObject } from '../../api/object.js';

/** The store calls an informer makes. */
export type InformerStore = Pick<Store, 'range' | 'watch'>;

/** Called after each applied change (and after each full list). */
export type InformerListener = () => void;

/** The objects of one storage prefix, by key. */
export class Informer {
  readonly #store: InformerStore;
  readonly #prefix: string;
  readonly #onError: (err: unknown) => void;
  readonly #objects = new Map<string, KubeObject>();
  readonly #listeners = new Set<InformerListener>();
  #watch: { close(): void } | undefined;
  #started = false;
  #closed = false;
  #synced = false;
  readonly #ready: Promise<void>;
  #resolveReady: (() => void) | undefined;

  /** `prefix` is the storage prefix with a trailing slash (`/namespaces/`). */
  constructor(store: InformerStore, prefix: string, onError: (err: unknown) => void) {
    this.#store = store;
    this.#prefix = prefix;
    this.#onError = onError;
    this.#ready = new Promise((resolve) => (this.#resolveReady = resolve));
  }

  /** Starts the list-and-watch loop once; later calls do nothing. */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    void this.#run();
  }

  /** True once the first list is in. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Starts the informer if needed and resolves once it has listed (or is closed). */
  async whenSynced(): Promise<void> {
    this.start();
    if (!this.#synced) await this.#ready;
  }

  /** The object at `key` (a full storage key under the prefix). */
  get(key: string): KubeObject | undefined {
    return this.#objects.get(key);
  }

  /** Every object with its storage key, in no particular order. */
  entries(): IterableIterator<[string, KubeObject]> {
    return this.#objects.entries();
  }

  /** Every object, in no particular order. */
  values(): IterableIterator<KubeObject> {
    return this.#objects.values();
  }

  /** Registers a change listener; returns its removal. */
  onChange(listener: InformerListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Ends the watch; the contents stay as they were. */
  close(): void {
    this.#closed = true;
    this.#watch?.close();
    this.#resolveReady?.();
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      try {
        const list = await this.#store.range({ prefix: this.#prefix });
        if (this.#closed) return;
        const present = new Set<string>();
        for (const kv of list.items) {
          present.add(kv.key);
          this.#put(kv.key, kv.value, kv.modRevision);
        }
        for (const key of [...this.#objects.keys()]) if (!present.has(key)) this.#objects.delete(key);
        this.#synced = true;
        this.#resolveReady?.();
        this.#notify();
        const watch = this.#store.watch({ prefix: this.#prefix }, { fromRevision: list.revision + 1n });
        this.#watch = watch;
        if (this.#closed) watch.close();
        for await (const ev of watch) this.#apply(ev);
      } catch (err) {
        if (this.#closed) return;
        this.#onError(err);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  #apply(ev: WatchEvent): void {
    if (ev.type === 'put') this.#put(ev.kv.key, ev.kv.value, ev.kv.modRevision);
    else if (ev.type === 'delete') this.#objects.delete(ev.kv.key);
    else return;
    this.#notify();
  }

  #put(key: string, value: Uint8Array, revision: bigint): void {
    try {
      this.#objects.set(key, decodeStored(value, revision));
    } catch (err) {
      this.#onError(err);
    }
  }

  #notify(): void {
    for (const l of this.#listeners) {
      try {
        l();
      } catch (err) {
        this.#onError(err);
      }
    }
  }
}

/**
 * Waits for an informer's first list at most `timeoutMs`; true when it is in.
 * (Takes anything with `synced` and `whenSynced`, e.g. the webhook configurations over an informer.)
 */
export async function syncedWithin(
  i: { readonly synced: boolean; whenSynced(): Promise<void> },
  timeoutMs: number,
): Promise<boolean> {
  if (i.synced) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([i.whenSynced(), timeout]);
  clearTimeout(timer);
  return i.synced;
}

/**
 * The object at `key` from the informer, or read from storage when the informer has not seen it
 * yet (created a moment ago), as kube's matchers fall back to a live GET.
 */
export async function cachedOrStored(
  i: Informer,
  store: Pick<Store, 'get'>,
  key: string,
): Promise<KubeObject | undefined> {
  const cached = i.get(key);
  if (cached !== undefined) return cached;
  const { kv } = await store.get(key);
  return kv === undefined ? undefined : decodeStored(kv.value, kv.modRevision);
}
