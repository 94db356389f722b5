/**
 * The {@link ObjectStore} of a server: the watch caches in front of storage. It serves reads and
 * watches from the type's watch cache when the cache can, and from storage when it must — the
 * one place that chooses, so the handlers never look at the cache themselves.
 *
 * - item (get): `0` and Not older than N from a ready cache (after it reached N; 504 when it
 *   does not in time); unset (Most Recent) from a ready cache once it has provably caught up
 *   with the store's current revision (one round trip shared by concurrent reads:
 *   src/watchcache/revision-probe.ts), else from storage. A cache that is still warming does
 *   not make a Most Recent get wait.
 * - collection (list): from a ready cache, as kube-apiserver's cacher does: `0` (Any, any limit
 *   ignored as kube does), Not older than without a limit (after the cache caught up, else 504),
 *   and Most Recent once the cache has provably caught up with the store's current revision —
 *   with a `limit` too: the first page keeps the cache's snapshot, and `continue` pages are read
 *   from that snapshot while the cache keeps it and storage has not compacted its revision. The
 *   continue tokens are the store's own (`Store.sealContinue`), so storage resumes any of them.
 *   Otherwise one consistent read of storage, optionally paged, or an Exact read at the asked
 *   revision (410 when compacted): storage-pages.ts.
 * - watch: from a ready cache unless it cannot show that it reached the asked state in time;
 *   from storage otherwise (storage-watch.ts), also for a resumption from before the cache's
 *   event window (history the cache never held or has dropped: storage keeps it until it
 *   compacts, then answers 410 Expired), and for a resumption from a revision while the cache
 *   is still warming (it does not wait for the warm-up).
 * - writes ({@link CachedStore.guaranteedUpdate}): the first attempt starts from the cache's
 *   copy when it holds the object (kube's GuaranteedUpdate); the caller's compare on its mod
 *   revision catches a stale copy, and an attempt that fails or writes nothing on it runs again
 *   on storage's copy: the one the failed compare found, or else a fresh read.
 *
 * "A ready cache" includes one that is reading its state right now (at start, or right after a
 * restart): a read it could serve waits for that warm-up, at most the freshness timeout, instead
 * of scanning the same objects again from storage.
 */
import { CompactedError } from '../../storage/errors.js';
import type { KeyValue, Store } from '../../storage/interface.js';
import { badRequest, expired, tooLargeResourceVersion, type ApiError } from '../api/errors.js';
import { decodeStored, withResourceVersion, type KubeObject } from '../api/object.js';
import { conversionTo } from '../conversion/index.js';
import type { ResourceType } from '../registry/types.js';
import { JsonRepresentation } from '../representation/json.js';
import { ValueSource } from '../representation/source.js';
import type { Representation } from '../representation/types.js';
import type { WatchCaches } from '../watchcache/cache-set.js';
import type { WatchFrames } from '../watchcache/frames.js';
import type { ObjectVersion } from '../watchcache/object-version.js';
import { pageOf } from '../watchcache/page.js';
import { scoped } from '../watchcache/scope.js';
import type { TypeCache } from '../watchcache/type-cache.js';
import type { Target } from './context.js';
import { awaitStoreRevision } from './freshness.js';
import { collectionSpan } from './keys.js';
import {
  RACED,
  type CollectionRead,
  type EventStream,
  type ListPage,
  type ObjectStore,
  type StoredObject,
  type WatchScope,
  type WriteAttempt,
} from './object-store.js';
import type { ListPlan, WatchPlan } from './read-plan.js';
import type { Selection } from './selection.js';
import { pageMeta, pageSources, readStoragePage } from './storage-pages.js';
import { initialEventsEndAnnotations, openStorageWatch, type StorageWatchOptions } from './storage-watch.js';

/**
 * The revision of a continue token that lists the rest of its collection at the latest revision,
 * kube's token with `rv: -1` (revision 0 never names a stored state, so no read issues it).
 */
const LATEST = 0n;

/** Kube's message for an expired continue token, answered with a token for the rest. */
const CONTINUE_INCONSISTENT =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** The settings of a {@link CachedStore}. */
export interface CachedStoreOptions extends StorageWatchOptions {
  /** The watch caches (`--watch-cache`); undefined: everything is read from storage. */
  readonly caches: Pick<WatchCaches, 'for'> | undefined;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The JSON of `key` in `cache`, or undefined when absent. */
function cachedItem(cache: TypeCache, key: string): Buffer | undefined {
  const version = cache.get(key);
  return version === undefined ? undefined : asBuffer(version.json());
}

/** An object stored by another version of its kind (core/events.k8s.io Events), in `type`'s form. */
function inThisVersion(type: ResourceType, obj: KubeObject): KubeObject {
  const convert = conversionTo(type);
  return convert === undefined ? obj : convert(obj);
}

/** The cache's frame encoders for `rep`; undefined for plain JSON (the cache's shared JSON frames). */
function cacheFrames(rep: Representation): WatchFrames | undefined {
  if (rep instanceof JsonRepresentation) return undefined;
  return {
    object: (type, version) => rep.event(type, version),
    value: (type, value) => rep.event(type, new ValueSource(value as unknown as KubeObject)),
  };
}

/** The watch caches in front of storage (see the module comment). */
export class CachedStore implements ObjectStore {
  readonly #o: CachedStoreOptions;
  readonly #store: Store;
  readonly #timeoutMs: number;

  constructor(options: CachedStoreOptions) {
    this.#o = options;
    this.#store = options.store;
    this.#timeoutMs = options.freshnessTimeoutMs;
  }

  /** The ready cache of `type`, if any. */
  #ready(type: ResourceType): TypeCache | undefined {
    const cache = this.#o.caches?.for(type);
    return cache?.ready === true ? cache : undefined;
  }

  /**
   * The cache of `type` once it is ready, waiting (bounded) while a warm-up is reading the state
   * this request would otherwise read again from storage; undefined means storage. Callers ask
   * {@link #ready} first, so a ready cache costs no await.
   */
  async #readied(type: ResourceType): Promise<TypeCache | undefined> {
    const cache = this.#o.caches?.for(type);
    if (cache === undefined) return undefined;
    return (await cache.whenReady(this.#timeoutMs)) ? cache : undefined;
  }

  async item(type: ResourceType, key: string, minRevision: bigint | undefined): Promise<Buffer | undefined> {
    if (minRevision !== undefined) {
      const cache = this.#ready(type) ?? (await this.#readied(type));
      if (cache !== undefined) {
        if (await cache.waitFresh(minRevision, this.#timeoutMs)) return cachedItem(cache, key);
        if (cache.ready) throw tooLargeResourceVersion(minRevision, cache.revision);
      }
      if (minRevision !== 0n) await awaitStoreRevision(this.#store, minRevision, this.#timeoutMs);
    } else {
      const cache = this.#ready(type);
      if (cache !== undefined && (await cache.waitConsistent(this.#timeoutMs))) return cachedItem(cache, key);
    }
    const { kv } = await this.#store.get(key);
    return kv === undefined ? undefined : withResourceVersion(kv.value, kv.modRevision);
  }

  async collection(target: Target, selection: Selection, asked: ListPlan): Promise<CollectionRead> {
    const plan = await this.#continueAtLatest(target, asked);
    const paged = await this.#cachedPage(target, selection, plan);
    if (paged !== undefined) return paged;
    const cache = await this.#usableCache(target, plan);
    if (cache !== undefined) {
      const { items, revision } = cache.snapshot();
      const prefix = collectionSpan(target.type, target.namespace);
      const scope = { prefix: 'prefix' in prefix ? prefix.prefix : '', selection };
      return { meta: { resourceVersion: String(revision) }, sources: scoped(items, scope) };
    }
    const page = await this.#storagePage(target, selection, plan);
    return { meta: pageMeta(page), sources: pageSources(page) };
  }

  async page(target: Target, selection: Selection, asked: ListPlan): Promise<ListPage> {
    return this.#storagePage(target, selection, await this.#continueAtLatest(target, asked));
  }

  /** A page read from storage, a compacted revision answered as kube answers it (410). */
  async #storagePage(target: Target, selection: Selection, plan: ListPlan): Promise<ListPage> {
    const span = collectionSpan(target.type, target.namespace);
    try {
      return await readStoragePage(this.#store, this.#timeoutMs, span, selection, plan);
    } catch (err) {
      if (err instanceof CompactedError && plan.continue !== undefined)
        throw this.#continueExpired(target, plan.continue);
      if (err instanceof CompactedError)
        throw expired('The resourceVersion for the provided list is too old.');
      throw err;
    }
  }

  /**
   * The 410 for a continue token whose revision was compacted away. Like kube-apiserver, it hands
   * back in `metadata.continue` a token for the rest of the list after the same key, read at the
   * latest revision: the client may finish the list knowing it is no longer one snapshot.
   */
  #continueExpired(target: Target, token: string): ApiError {
    const span = collectionSpan(target.type, target.namespace);
    const { lastKey } = this.#store.openContinue(span, token);
    return expired(CONTINUE_INCONSISTENT, {
      continue: this.#store.sealContinue(span, { revision: LATEST, lastKey }),
    });
  }

  /**
   * `plan`, with a continue token at {@link LATEST} turned into one at the current revision.
   * @throws ApiError 400 for a malformed token, then for a version given with it (kube's order).
   */
  async #continueAtLatest(target: Target, plan: ListPlan): Promise<ListPlan> {
    if (plan.continue === undefined) return plan;
    const span = collectionSpan(target.type, target.namespace);
    const { revision, lastKey } = this.#store.openContinue(span, plan.continue);
    if (plan.versionWithContinue)
      throw badRequest('specifying resource version is not allowed when using continue');
    if (revision !== LATEST) return plan;
    const current = await this.#store.currentRevision();
    return { ...plan, continue: this.#store.sealContinue(span, { revision: current, lastKey }) };
  }

  /**
   * A page of a Most Recent paged list (or its continuation) from the cache's snapshots, or
   * undefined when storage must serve it (see the module comment).
   */
  async #cachedPage(
    target: Target,
    selection: Selection,
    plan: ListPlan,
  ): Promise<CollectionRead | undefined> {
    if (plan.limit === undefined || plan.any === true || plan.exact !== undefined) return undefined;
    if (plan.notOlderThan !== undefined) return undefined;
    const cache = this.#ready(target.type) ?? (await this.#readied(target.type));
    if (cache === undefined) return undefined;
    const span = collectionSpan(target.type, target.namespace);
    if (!('prefix' in span)) return undefined;
    const store = this.#store;
    let items: readonly ObjectVersion[] | undefined;
    let revision: bigint;
    let after: string | undefined;
    if (plan.continue !== undefined) {
      const position = store.openContinue(span, plan.continue);
      items = cache.snapshotAt(position.revision);
      if (items === undefined || position.revision < (await store.compactedRevision())) return undefined;
      revision = position.revision;
      after = position.lastKey;
    } else {
      if (!(await cache.waitConsistent(this.#timeoutMs))) return undefined;
      ({ items, revision } = cache.retainSnapshot());
    }
    const page = pageOf(items, { prefix: span.prefix, selection }, after, plan.limit);
    const { lastKey, keysAfter } = page;
    // The token carries the count, so storage resuming it need not count again.
    const token =
      lastKey === undefined
        ? undefined
        : store.sealContinue(span, {
            revision,
            lastKey,
            ...(keysAfter === undefined ? {} : { remaining: keysAfter }),
          });
    // As storage: a remaining count only on an unfiltered chunk with more after it.
    const remaining = token !== undefined && selection.everything ? keysAfter : undefined;
    return {
      meta: {
        resourceVersion: String(revision),
        ...(token === undefined ? {} : { continue: token }),
        ...(remaining === undefined ? {} : { remainingItemCount: remaining }),
      },
      sources: page.items,
    };
  }

  /** The cache that may serve this list, once it holds a state the plan accepts; else undefined. */
  async #usableCache(target: Target, plan: ListPlan): Promise<TypeCache | undefined> {
    if (plan.continue !== undefined || plan.exact !== undefined) return undefined;
    if (plan.limit !== undefined && plan.any !== true) return undefined;
    const cache = this.#ready(target.type) ?? (await this.#readied(target.type));
    if (cache === undefined) return undefined;
    if (plan.any === true) return cache;
    if (plan.notOlderThan !== undefined) {
      if (await cache.waitFresh(plan.notOlderThan, this.#timeoutMs)) return cache;
      if (!cache.ready) return undefined;
      throw tooLargeResourceVersion(plan.notOlderThan, cache.revision);
    }
    return (await cache.waitConsistent(this.#timeoutMs)) ? cache : undefined;
  }

  async watch(
    type: ResourceType,
    scope: WatchScope,
    plan: WatchPlan,
    rep: Representation,
  ): Promise<EventStream> {
    const source = await this.#watchSource(type, plan);
    const fromStorage = (): Promise<EventStream> =>
      openStorageWatch(this.#o, rep, type, plan, scope.selection, scope.span);
    if (source === undefined) return fromStorage();
    const { cache, from } = source;
    const frames = cacheFrames(rep);
    const watcher = cache.openWatcher({
      scope,
      from,
      initialEvents: plan.initialEvents,
      initialEventsEnd: plan.initialEventsEnd,
      ...(plan.initialEventsEnd ? { initialEventsEndAnnotations: initialEventsEndAnnotations(rep) } : {}),
      bookmarks: plan.bookmarks,
      kind: type.kind,
      apiVersion: type.apiVersion,
      ...(frames === undefined ? {} : { frames }),
    });
    // The window moved past `from` since #watchSource looked: storage still holds that history
    // (or answers 410 Expired once it compacted it).
    if (watcher === 'expired') return fromStorage();
    return { frames: () => watcher.frames(), close: () => watcher.end() };
  }

  /**
   * Where a watch under `plan` is served from: the type's cache (once ready and, for a
   * consistent start, caught up with the store; for a start at N with initial events, once it
   * reached N) and where its watcher starts (`now`: the current state, with initial events when
   * asked; a revision: events after it), or undefined for storage.
   * @throws ApiError 504 when a ready cache does not reach the asked revision in time.
   */
  async #watchSource(
    type: ResourceType,
    plan: WatchPlan,
  ): Promise<{ readonly cache: TypeCache; readonly from: 'now' | bigint } | undefined> {
    const ready = this.#ready(type);
    // A resumption (events after N, no initial state) does not wait for a warming cache: the
    // warm-up lists at the store's revision when it ends, which N is most likely below (that
    // history is storage's), and storage serves any N it still holds at once.
    if (ready === undefined && typeof plan.from === 'bigint' && !plan.initialEvents) return undefined;
    const cache = ready ?? (await this.#readied(type));
    if (cache === undefined) return undefined;
    let from: 'now' | bigint = 'now';
    if (plan.from === 'latest') {
      if (!(await cache.waitConsistent(this.#timeoutMs))) return undefined;
    } else if (typeof plan.from === 'bigint') {
      // History the window does not hold is storage's: from before the cache listed its state
      // (it never held it) or older than its window (dropped; storage keeps history until it
      // compacts, the spec's 5 minutes by default).
      if (!plan.initialEvents && plan.from < cache.oldest) return undefined;
      if (!plan.initialEvents) from = plan.from;
      else if (!(await cache.waitFresh(plan.from, this.#timeoutMs))) {
        if (!cache.ready) return undefined;
        throw tooLargeResourceVersion(plan.from, cache.revision);
      }
    }
    return cache.ready ? { cache, from } : undefined;
  }

  async current(type: ResourceType, key: string): Promise<StoredObject | undefined> {
    const { kv } = await this.#store.get(key);
    return kv === undefined ? undefined : storedObject(type, kv);
  }

  /** The ready cache's copy of `key` (may be stale), or undefined when it has none. */
  #cachedCopy(type: ResourceType, key: string): StoredObject | undefined {
    const version = this.#ready(type)?.get(key);
    if (version === undefined) return undefined;
    const kv: KeyValue = {
      key,
      value: version.value,
      createRevision: version.createRevision,
      modRevision: version.revision,
      lease: 0n,
    };
    return storedObject(type, kv);
  }

  async guaranteedUpdate<T>(
    type: ResourceType,
    key: string,
    options: { readonly dryRun: boolean },
    attempt: WriteAttempt<T>,
  ): Promise<T> {
    // A dry run writes nothing, so no compare would catch a stale copy: storage only.
    let stored = options.dryRun ? undefined : this.#cachedCopy(type, key);
    let cached = stored !== undefined;
    if (!cached) stored = await this.current(type, key);
    for (let n = 1; ; n++) {
      const outcome = await attempt(stored, n);
      if (outcome !== RACED) {
        if ('done' in outcome) return outcome.done;
        if ('racedWith' in outcome) {
          // The failed compare read the key in the same transaction: no second read.
          stored = outcome.racedWith === undefined ? undefined : storedObject(type, outcome.racedWith);
          cached = false;
          continue;
        }
        if (!cached) {
          if ('rejected' in outcome) throw outcome.rejected;
          return outcome.unchanged();
        }
      }
      stored = await this.current(type, key);
      cached = false;
    }
  }
}

/** `kv` with a private parse of its value in `type`'s version. */
function storedObject(type: ResourceType, kv: KeyValue): StoredObject {
  return { kv, obj: inThisVersion(type, decodeStored(kv.value, kv.modRevision)) };
}
