/**
 * List reads served by storage: one page of a collection under a list plan, with selectors.
 *
 * With selectors and a limit, storage pages are read until `limit` objects matched, each page no
 * bigger than what is still missing, so the store's continue token always resumes right after
 * the last object examined. `remainingItemCount` is given only on an unfiltered chunk that has
 * more after it, as the spec says.
 */
import type { KeySpan, KeyValue, RangeOptions, Store } from '../../storage/interface.js';
import { decodeStored } from '../api/object.js';
import { StoredSource } from '../representation/source.js';
import type { ListMetaValues, ObjectSource } from '../representation/types.js';
import { awaitStoreRevision } from './freshness.js';
import type { ListPage } from './object-store.js';
import type { ListPlan } from './read-plan.js';
import type { Selection } from './selection.js';

/**
 * Reads one page of `span` from `store` (see the module comment); a Not older than plan first
 * waits up to `freshnessTimeoutMs` for the store to reach its revision.
 * @throws ApiError 504 for a revision not reached in time; the store's errors of `range`.
 */
export async function readStoragePage(
  store: Store,
  freshnessTimeoutMs: number,
  span: KeySpan,
  selection: Selection,
  plan: ListPlan,
): Promise<ListPage> {
  if (plan.notOlderThan !== undefined && plan.notOlderThan !== 0n) {
    await awaitStoreRevision(store, plan.notOlderThan, freshnessTimeoutMs);
  }
  const first: RangeOptions = {
    ...(plan.exact === undefined ? {} : { revision: plan.exact }),
    ...(plan.continue === undefined ? {} : { continue: plan.continue }),
  };
  if (selection.everything) {
    const res = await store.range(span, {
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
    const res = await store.range(span, { ...options, ...(want === undefined ? {} : { limit: want }) });
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

/** The list metadata of a storage page. */
export function pageMeta(page: ListPage): ListMetaValues {
  return {
    resourceVersion: String(page.revision),
    ...(page.continue === undefined ? {} : { continue: page.continue }),
    ...(page.remaining === undefined ? {} : { remainingItemCount: page.remaining }),
  };
}

/** The items of a storage page as list sources (stored bytes, no parse). */
export function* pageSources(page: ListPage): Generator<ObjectSource> {
  for (const kv of page.items) yield new StoredSource(kv.value, kv.modRevision);
}
