/**
 * The watch caches of one server, one per storage resource (types served in several versions
 * share the key span and so one cache), created on first use, or all at once with
 * {@link WatchCaches.startAll}. Sizes follow kube-apiserver's flags: `--default-watch-cache-size`
 * for every type, `--watch-cache-sizes resource[.group]#size` per type; a size of 0 disables
 * the cache for that type (its reads and watches go to storage).
 */
import type { Store } from '../../storage/interface.js';
import type { ResourceType } from '../registry/types.js';
import { TypeCache } from './type-cache.js';
import { RevisionProbe } from './revision-probe.js';

/**
 * The window keeps events younger than the bookmark interval plus this (ms): kube-apiserver's rule
 * for its event freshness (a minute's bookmarks plus 15 s), so that a watcher resuming from its
 * last bookmark finds its revision in the window, not only in storage.
 */
const FRESHNESS_MARGIN_MS = 15_000;
/** kube-apiserver's upper bound of a watch cache's capacity (100 × 1024 events). */
const DEFAULT_MAX_EVENTS = 102_400;

/** Settings shared by every type's cache. */
export interface WatchCachesOptions {
  readonly store: Store;
  /** `--default-watch-cache-size` (100): minimum events kept per type; 0 disables unless sized. */
  readonly defaultSize: number;
  /** `--watch-cache-sizes` entries, `resource[.group]#size`. */
  readonly sizes?: readonly string[];
  /**
   * Events younger than this are always kept (default: the bookmark interval plus 15 s, as kube
   * sizes its event freshness). Older history is served by storage, which keeps the spec's 5
   * minutes (src/resource/cached-store.ts).
   */
  readonly minAgeMs?: number;
  /** Hard bound of events per type (default 102,400, kube's largest watch cache). */
  readonly maxEvents?: number;
  /** Queue bound per client watcher (default 10,000 events). */
  readonly watcherCapacity?: number;
  /** Bookmark and idle-progress interval (ms). */
  readonly bookmarkIntervalMs: number;
  readonly onError?: (resource: string, err: unknown) => void;
}

/**
 * Parses `--watch-cache-sizes` entries into sizes by `resource[.group]`.
 * @throws RangeError for an entry without `#` or with a size that is not a non-negative integer.
 */
export function parseWatchCacheSizes(entries: readonly string[]): Map<string, number> {
  const sizes = new Map<string, number>();
  for (const entry of entries) {
    const at = entry.lastIndexOf('#');
    const size = entry.slice(at + 1);
    if (at <= 0 || !/^[0-9]+$/.test(size)) throw new RangeError(`invalid watch cache size entry: ${entry}`);
    sizes.set(entry.slice(0, at).toLowerCase(), Number(size));
  }
  return sizes;
}

/** One server's watch caches. */
export class WatchCaches {
  readonly #o: WatchCachesOptions;
  readonly #sizes: Map<string, number>;
  readonly #caches = new Map<string, TypeCache>();
  /** Consistent reads of every type share the store's revision round trips. */
  readonly #revisions: RevisionProbe;
  #closed = false;

  constructor(options: WatchCachesOptions) {
    this.#o = options;
    this.#sizes = parseWatchCacheSizes(options.sizes ?? []);
    this.#revisions = new RevisionProbe(options.store);
  }

  #size(type: ResourceType): number {
    const name = type.group === '' ? type.plural : `${type.plural}.${type.group}`;
    return this.#sizes.get(name) ?? this.#o.defaultSize;
  }

  /**
   * The cache of `type`, started if it was not (it may still be warming: check `ready`), or
   * undefined when caching is off for the type (size 0), the type is never stored, or the set
   * is closed.
   */
  for(type: ResourceType): TypeCache | undefined {
    if (this.#closed || type.virtual) return undefined;
    const known = this.#caches.get(type.storageResource);
    if (known !== undefined) return known;
    const size = this.#size(type);
    if (size <= 0) return undefined;
    const cache = new TypeCache({
      store: this.#o.store,
      currentRevision: () => this.#revisions.current(),
      prefix: `/${type.storageResource}/`,
      window: {
        capacity: size,
        minAgeMs: this.#o.minAgeMs ?? this.#o.bookmarkIntervalMs + FRESHNESS_MARGIN_MS,
        maxEvents: Math.max(size, this.#o.maxEvents ?? DEFAULT_MAX_EVENTS),
      },
      watcherCapacity: this.#o.watcherCapacity ?? 10_000,
      bookmarkIntervalMs: this.#o.bookmarkIntervalMs,
      ...(this.#o.onError === undefined
        ? {}
        : { onError: (err: unknown) => this.#o.onError?.(type.storageResource, err) }),
    });
    this.#caches.set(type.storageResource, cache);
    cache.start();
    return cache;
  }

  /** Starts the caches of `types` now (`--watch-cache=true` at server start). */
  startAll(types: Iterable<ResourceType>): void {
    for (const type of types) this.for(type);
  }

  /**
   * Stops and forgets the cache of `storageResource` (a custom resource whose definition was
   * deleted); a later {@link for} starts a fresh one. True when there was one.
   */
  remove(storageResource: string): boolean {
    const cache = this.#caches.get(storageResource);
    if (cache === undefined) return false;
    this.#caches.delete(storageResource);
    cache.close();
    return true;
  }

  /** Stops every cache. Idempotent. */
  close(): void {
    this.#closed = true;
    for (const cache of this.#caches.values()) cache.close();
    this.#caches.clear();
  }
}
