/**
 * The informer's store: objects by key (`namespace/name`, or `name` when cluster-scoped) with
 * secondary indexes (client-go's `cache.Indexer`). Built-in index: `namespace`.
 */
import type { TypedObject } from './client.js';

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: TypedObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? '';
  return ns === undefined || ns === '' ? name : `${ns}/${name}`;
}

/** The namespace ('' when cluster-scoped) and name of a key. */
export function splitKey(key: string): { namespace: string; name: string } {
  const i = key.indexOf('/');
  return i === -1 ? { namespace: '', name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}

/** Name of the built-in index by namespace. */
export const NAMESPACE_INDEX = 'namespace';

/** An index function: the values `obj` is filed under. */
export type IndexFunc<T> = (obj: T) => string[];

/** Read access to an informer's objects (treat them as immutable). */
export interface Indexer<T> {
  /** By key (`ns/name` or `name`, see {@link objectKey}). */
  get(key: string): T | undefined;
  list(): T[];
  keys(): string[];
  /** Adds an index, before or after sync (existing objects are indexed at once). */
  addIndex(name: string, fn: IndexFunc<T>): void;
  /** Objects filed under `value` in index `name`; throws for an unknown index. */
  byIndex(name: string, value: string): T[];
}

/** The store behind an informer; mutated only by its informer. */
export class IndexedStore<T extends TypedObject> implements Indexer<T> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, IndexFunc<T>>();
  /** index name → value → keys. */
  readonly #indices = new Map<string, Map<string, Set<string>>>();

  constructor() {
    this.addIndex(NAMESPACE_INDEX, (obj) => [obj.metadata?.namespace ?? '']);
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(): T[] {
    return [...this.#items.values()];
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  get size(): number {
    return this.#items.size;
  }

  addIndex(name: string, fn: IndexFunc<T>): void {
    if (this.#indexers.has(name)) throw new Error(`indexer: index ${name} already exists`);
    this.#indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    this.#indices.set(name, index);
    for (const [key, obj] of this.#items) file(index, fn(obj), key);
  }

  byIndex(name: string, value: string): T[] {
    const index = this.#indices.get(name);
    if (index === undefined) throw new Error(`indexer: no index named ${name}`);
    const keys = index.get(value);
    if (keys === undefined) return [];
    const out: T[] = [];
    for (const k of keys) {
      const obj = this.#items.get(k);
      if (obj !== undefined) out.push(obj);
    }
    return out;
  }

  /** Stores `obj` under `key`; returns the object it replaced. */
  set(key: string, obj: T): T | undefined {
    const old = this.#items.get(key);
    this.#items.set(key, obj);
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name)!;
      if (old !== undefined) unfile(index, fn(old), key);
      file(index, fn(obj), key);
    }
    return old;
  }

  /** Removes `key`; returns the object removed. */
  remove(key: string): T | undefined {
    const old = this.#items.get(key);
    if (old === undefined) return undefined;
    this.#items.delete(key);
    for (const [name, fn] of this.#indexers) unfile(this.#indices.get(name)!, fn(old), key);
    return old;
  }
}

function file(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const v of values) {
    let keys = index.get(v);
    if (keys === undefined) index.set(v, (keys = new Set()));
    keys.add(key);
  }
}

function unfile(index: Map<string, Set<string>>, values: string[], key: string): void {
  for (const v of values) {
    const keys = index.get(v);
    if (keys === undefined) continue;
    keys.delete(key);
    if (keys.size === 0) index.delete(v);
  }
}
