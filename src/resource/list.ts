/**
 * list (GET on a collection without `watch`), following the spec's resourceVersion table
 * (read-plan.ts):
 *
 * - served from the type's watch cache when it is ready and the request allows it, as
 *   kube-apiserver's cacher does: `0` (Any, any limit ignored as kube does), Not older than
 *   without a limit (after the cache caught up with the version, else 504), and Most Recent
 *   without a limit once the cache has provably caught up with the store's current revision;
 * - otherwise from storage: one consistent read of the collection's key span, optionally paged
 *   with `limit` and `continue` (tokens from the storage engine, every chunk at the first
 *   chunk's revision), Exact reads at the asked revision (410 when compacted).
 *
 * With selectors and a limit, storage pages are read until `limit` objects matched, each page no
 * bigger than what is still missing, so the store's continue token always resumes right after
 * the last object examined. `remainingItemCount` is given only on an unfiltered chunk that has
 * more after it, as the spec says. The body is streamed from item bytes (list-body.ts).
 */
import { CompactedError } from '../../storage/errors.js';
import type { KeyValue, RangeOptions } from '../../storage/interface.js';
import { expired, tooLargeResourceVersion } from '../api/errors.js';
import type { TypeCache } from '../watchcache/type-cache.js';
import { scoped } from '../watchcache/scope.js';
import type { ResourceContext, ResourceReply, Target } from './context.js';
import { requireRevision } from './freshness.js';
import { collectionSpan } from './keys.js';
import { partsStream } from './list-body.js';
import { decodeStored, withResourceVersion } from '../api/object.js';
import { planList, type ListPlan } from './read-plan.js';
import type { Query } from './query.js';
import { Selection } from './selection.js';
import { jsonList, JsonRepresentation } from '../representation/json.js';
import { StoredSource } from '../representation/source.js';
import type { ListMetaValues, ObjectSource, Representation } from '../representation/types.js';

/** Kube's message for an expired continue token. */
const CONTINUE_EXPIRED =
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

/** The JSON of a list of `kind` from stored items, as one buffer (deletecollection's answer). */
export function listBody(listKind: string, apiVersion: string, page: ListPage): Buffer {
  const items = page.items.map((kv) => withResourceVersion(kv.value, kv.modRevision));
  return jsonList(apiVersion, listKind, pageMeta(page), items);
}

function pageMeta(page: ListPage): ListMetaValues {
  return {
    resourceVersion: String(page.revision),
    ...(page.continue === undefined ? {} : { continue: page.continue }),
    ...(page.remaining === undefined ? {} : { remainingItemCount: page.remaining }),
  };
}

function* pageSources(page: ListPage): Generator<ObjectSource> {
  for (const kv of page.items) yield new StoredSource(kv.value, kv.modRevision);
}

/**
 * A list answer in `rep`: streamed from parts when the form offers them (JSON and protobuf, from
 * each version's cached or stored bytes), else built whole (Table, YAML, metadata-only).
 */
function renderFromSources(
  rep: Representation,
  meta: ListMetaValues,
  sources: Iterable<ObjectSource>,
): ResourceReply {
  const body = rep.listParts ? partsStream(rep.listParts(meta, sources)) : rep.list(meta, [...sources]);
  return { code: 200, body, contentType: rep.contentType };
}

/** GET `{collection}`: the list, in `rep` (default JSON). */
export async function listResource(
  ctx: ResourceContext,
  target: Target,
  query: Query,
  rep: Representation = new JsonRepresentation(target.type),
): Promise<ResourceReply> {
  const selection = Selection.fromQuery(query, target.type);
  const plan = planList(query);
  const cache = await usableCache(ctx, target, plan);
  if (cache !== undefined) {
    const { items, revision } = cache.snapshot();
    const prefix = collectionSpan(target.type, target.namespace);
    const scope = { prefix: 'prefix' in prefix ? prefix.prefix : '', selection };
    return renderFromSources(rep, { resourceVersion: String(revision) }, scoped(items, scope));
  }
  let page: ListPage;
  try {
    page = await readPage(ctx, target, selection, plan);
  } catch (err) {
    if (err instanceof CompactedError && plan.continue !== undefined) throw expired(CONTINUE_EXPIRED);
    if (err instanceof CompactedError) throw expired('The resourceVersion for the provided list is too old.');
    throw err;
  }
  return renderFromSources(rep, pageMeta(page), pageSources(page));
}
