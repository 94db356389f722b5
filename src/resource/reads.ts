/**
 * Reads with kube's resourceVersion semantics (read-plan.ts), from the type's watch cache when it
 * can serve them and from storage when it must: the one place that chooses, so the get and list
 * handlers never look at the cache themselves.
 *
 * - item (get): `0` and Not older than N from a ready cache (after it reached N; 504 when it
 *   does not in time); unset (Most Recent) from storage.
 * - collection (list): from a ready cache, as kube-apiserver's cacher does: `0` (Any, any limit
 *   ignored as kube does), Not older than without a limit (after the cache caught up, else 504),
 *   and Most Recent once the cache has provably caught up with the store's current revision —
 *   with a `limit` too: the first page keeps the cache's snapshot, and `continue` pages are read
 *   from that snapshot while the cache keeps it and storage has not compacted its revision. The
 *   continue tokens are the store's own (`Store.sealContinue`), so storage resumes any of them.
 *   Otherwise one consistent read of storage, optionally paged, or an Exact read at the asked
 *   revision (410 when compacted).
 *
 * - watch: from a ready cache unless it cannot show that it reached the asked state in time
 *   (`watchSource`); from storage otherwise.
 *
 * With selectors and a limit, storage pages are read until `limit` objects matched, each page no
 * bigger than what is still missing, so the store's continue token always resumes right after
 * the last object examined. `remainingItemCount` is given only on an unfiltered chunk that has
 * more after it, as the spec says.
 */
import { CompactedError } from '../../storage/errors.js';
import type { KeyValue, RangeOptions } from '../../storage/interface.js';
import { expired, notFound, tooLargeResourceVersion, type ApiError } from '../api/errors.js';
import { decodeStored, withResourceVersion } from '../api/object.js';
import type { ResourceType } from '../registry/types.js';
import { StoredSource } from '../representation/source.js';
import type { ListMetaValues, ObjectSource } from '../representation/types.js';
import type { ObjectVersion } from '../watchcache/object-version.js';
import { pageOf } from '../watchcache/page.js';
import { scoped } from '../watchcache/scope.js';
import type { TypeCache } from '../watchcache/type-cache.js';
import { qualified, type ResourceContext, type Target } from './context.js';
import { requireRevision } from './freshness.js';
import { collectionSpan, objectKey } from './keys.js';
import type { ListPlan, WatchPlan } from './read-plan.js';
import type { Selection } from './selection.js';

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The JSON bytes (resourceVersion set) of one object, read not older than `minRevision`
 * (undefined: Most Recent, from storage).
 * @throws ApiError 404 when absent, 504 for a resourceVersion the server does not reach in time.
 */
export async function readItem(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  minRevision: bigint | undefined,
): Promise<Buffer> {
  const key = objectKey(type, namespace, name);
  if (minRevision !== undefined) {
    const cache = ctx.watchCaches?.for(type);
    if (cache?.ready === true) {
      if (!(await cache.waitFresh(minRevision, ctx.freshnessTimeoutMs))) {
        if (cache.ready) throw tooLargeResourceVersion(minRevision, cache.revision);
      } else {
        const version = cache.get(key);
        if (version === undefined) throw notFound(qualified(type, name));
        return asBuffer(cache.json(version));
      }
    }
  }
  await requireRevision(ctx, minRevision);
  const { kv } = await ctx.store.get(key);
  if (kv === undefined) throw notFound(qualified(type, name));
  return withResourceVersion(kv.value, kv.modRevision);
}

/** A collection read: its list metadata and its objects (cached versions or stored bytes). */
export interface CollectionRead {
  readonly meta: ListMetaValues;
  readonly sources: Iterable<ObjectSource>;
}

/**
 * The selected objects of the collection of `target` under `plan`.
 * @throws ApiError 410 (compacted revision or expired continue token), 504 (revision not reached).
 */
export async function readCollection(
  ctx: ResourceContext,
  target: Target,
  selection: Selection,
  asked: ListPlan,
): Promise<CollectionRead> {
  const plan = await continueAtLatest(ctx, target, asked);
  const paged = await cachedPage(ctx, target, selection, plan);
  if (paged !== undefined) return paged;
  const cache = await usableCache(ctx, target, plan);
  if (cache !== undefined) {
    const { items, revision } = cache.snapshot();
    const prefix = collectionSpan(target.type, target.namespace);
    const scope = { prefix: 'prefix' in prefix ? prefix.prefix : '', selection };
    return { meta: { resourceVersion: String(revision) }, sources: scoped(items, scope) };
  }
  let page: ListPage;
  try {
    page = await readPage(ctx, target, selection, plan);
  } catch (err) {
    if (err instanceof CompactedError && plan.continue !== undefined)
      throw continueExpired(ctx, target, plan.continue);
    if (err instanceof CompactedError) throw expired('The resourceVersion for the provided list is too old.');
    throw err;
  }
  return { meta: pageMeta(page), sources: pageSources(page) };
}

/**
 * The revision of a continue token that lists the rest of its collection at the latest revision,
 * kube's token with `rv: -1` (revision 0 never names a stored state, so no read issues it).
 */
const LATEST = 0n;

/**
 * The 410 for a continue token whose revision was compacted away. Like kube-apiserver, it hands
 * back in `metadata.continue` a token for the rest of the list after the same key, read at the
 * latest revision: the client may finish the list knowing it is no longer one snapshot.
 */
function continueExpired(ctx: ResourceContext, target: Target, token: string): ApiError {
  const span = collectionSpan(target.type, target.namespace);
  const { lastKey } = ctx.store.openContinue(span, token);
  return expired(CONTINUE_INCONSISTENT, {
    continue: ctx.store.sealContinue(span, { revision: LATEST, lastKey }),
  });
}

/** `plan`, with a continue token at {@link LATEST} turned into one at the current revision. */
async function continueAtLatest(ctx: ResourceContext, target: Target, plan: ListPlan): Promise<ListPlan> {
  if (plan.continue === undefined) return plan;
  const span = collectionSpan(target.type, target.namespace);
  const { revision, lastKey } = ctx.store.openContinue(span, plan.continue);
  if (revision !== LATEST) return plan;
  const current = await ctx.store.currentRevision();
  return { ...plan, continue: ctx.store.sealContinue(span, { revision: current, lastKey }) };
}

/** Kube's message for an expired continue token when it hands back a token for the rest. */
const CONTINUE_INCONSISTENT =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** The selected items of one storage list read, and where it ended. */
export interface ListPage {
  readonly items: readonly KeyValue[];
  readonly revision: bigint;
  readonly continue?: string;
  /** Items after this page (only when the read was unfiltered). */
  readonly remaining?: number;
}

/** Reads one page of the collection of `target` from storage (see the module comment). */
export async function readPage(
  ctx: ResourceContext,
  target: Target,
  selection: Selection,
  plan: ListPlan,
): Promise<ListPage> {
  const span = collectionSpan(target.type, target.namespace);
  await requireRevision(ctx, plan.notOlderThan);
  const first: RangeOptions = {
    ...(plan.exact === undefined ? {} : { revision: plan.exact }),
    ...(plan.continue === undefined ? {} : { continue: plan.continue }),
  };
  if (selection.everything) {
    const res = await ctx.store.range(span, {
      ...first,
      ...(plan.limit === undefined ? {} : { limit: plan.limit }),
    });
    return {
      items: res.items,
      revision: res.revision,
      ...(res.continue === undefined
        ? {}
        : { continue: res.continue, remaining: res.count - res.items.length }),
    };
  }
  const items: KeyValue[] = [];
  let options: RangeOptions = first;
  for (;;) {
    const want = plan.limit === undefined ? undefined : plan.limit - items.length;
    const res = await ctx.store.range(span, { ...options, ...(want === undefined ? {} : { limit: want }) });
    for (const kv of res.items) {
      if (selection.matches(decodeStored(kv.value, kv.modRevision))) items.push(kv);
    }
    const done = res.continue === undefined || (plan.limit !== undefined && items.length >= plan.limit);
    if (done)
      return {
        items,
        revision: res.revision,
        ...(res.continue === undefined ? {} : { continue: res.continue }),
      };
    options = { continue: res.continue };
  }
}

/**
 * A page of a Most Recent paged list (or its continuation) from the cache's snapshots, or
 * undefined when storage must serve it (see the module comment).
 */
async function cachedPage(
  ctx: ResourceContext,
  target: Target,
  selection: Selection,
  plan: ListPlan,
): Promise<CollectionRead | undefined> {
  if (plan.limit === undefined || plan.any === true || plan.exact !== undefined) return undefined;
  if (plan.notOlderThan !== undefined) return undefined;
  const cache = ctx.watchCaches?.for(target.type);
  if (cache === undefined || !cache.ready) return undefined;
  const span = collectionSpan(target.type, target.namespace);
  if (!('prefix' in span)) return undefined;
  let items: readonly ObjectVersion[] | undefined;
  let revision: bigint;
  let after: string | undefined;
  if (plan.continue !== undefined) {
    const position = ctx.store.openContinue(span, plan.continue);
    items = cache.snapshotAt(position.revision);
    if (items === undefined || position.revision < (await ctx.store.compactedRevision())) return undefined;
    revision = position.revision;
    after = position.lastKey;
  } else {
    if (!(await cache.waitConsistent(ctx.freshnessTimeoutMs))) return undefined;
    ({ items, revision } = cache.retainSnapshot());
  }
  const page = pageOf(items, { prefix: span.prefix, selection }, after, plan.limit);
  const { lastKey, keysAfter } = page;
  // The token carries the count, so storage resuming it need not count again.
  const token =
    lastKey === undefined
      ? undefined
      : ctx.store.sealContinue(span, {
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
async function usableCache(
  ctx: ResourceContext,
  target: Target,
  plan: ListPlan,
): Promise<TypeCache | undefined> {
  if (plan.continue !== undefined || plan.exact !== undefined) return undefined;
  if (plan.limit !== undefined && plan.any !== true) return undefined;
  const cache = ctx.watchCaches?.for(target.type);
  if (cache === undefined || !cache.ready) return undefined;
  if (plan.any === true) return cache;
  if (plan.notOlderThan !== undefined) {
    if (await cache.waitFresh(plan.notOlderThan, ctx.freshnessTimeoutMs)) return cache;
    if (!cache.ready) return undefined;
    throw tooLargeResourceVersion(plan.notOlderThan, cache.revision);
  }
  return (await cache.waitConsistent(ctx.freshnessTimeoutMs)) ? cache : undefined;
}

/** The list metadata of a storage page. */
export function pageMeta(page: ListPage): ListMetaValues {
  return {
    resourceVersion: String(page.revision),
    ...(page.continue === undefined ? {} : { continue: page.continue }),
    ...(page.remaining === undefined ? {} : { remainingItemCount: page.remaining }),
  };
}

function* pageSources(page: ListPage): Generator<ObjectSource> {
  for (const kv of page.items) yield new StoredSource(kv.value, kv.modRevision);
}

/** A watch served by the cache: the cache and where its watcher starts. */
export interface CacheWatchSource {
  readonly cache: TypeCache;
  /** `now`: the current state (with initial events when asked); a revision: events after it. */
  readonly from: 'now' | bigint;
}

/**
 * Where a watch under `plan` is served from: the type's cache (once ready and, for a consistent
 * start, caught up with the store; for a start at N with initial events, once it reached N), or
 * undefined for storage (also for a start at N before the revision the cache listed its state
 * at: that history is in storage only).
 * @throws ApiError 504 when a ready cache does not reach the asked revision in time.
 */
export async function watchSource(
  ctx: ResourceContext,
  type: ResourceType,
  plan: WatchPlan,
): Promise<CacheWatchSource | undefined> {
  const cache = ctx.watchCaches?.for(type);
  if (cache?.ready !== true) return undefined;
  let from: 'now' | bigint = 'now';
  if (plan.from === 'latest') {
    if (!(await cache.waitConsistent(ctx.freshnessTimeoutMs))) return undefined;
  } else if (typeof plan.from === 'bigint') {
    // History from before the cache listed its state is storage's: the cache never held it.
    if (!plan.initialEvents && plan.from < cache.startRevision) return undefined;
    if (!plan.initialEvents) from = plan.from;
    else if (!(await cache.waitFresh(plan.from, ctx.freshnessTimeoutMs))) {
      if (!cache.ready) return undefined;
      throw tooLargeResourceVersion(plan.from, cache.revision);
    }
  }
  return cache.ready ? { cache, from } : undefined;
}
