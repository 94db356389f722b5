/**
 * One page of a paged list served from a cache snapshot: the same items, in the same order, as
 * storage's paged range over the same state, so a continue token can be resumed by either.
 */
import { compareKeyOrder } from './key-order.js';
import { lowerBound } from './cache-state.js';
import type { ObjectVersion } from './object-version.js';
import type { ObjectFilter } from './scope.js';

/** What a page covers: a key prefix (the type or one namespace) and the selectors. */
export interface PageScope {
  readonly prefix: string;
  readonly selection: ObjectFilter;
}

/** One page and where the list stands after it. */
export interface CachePage {
  readonly items: readonly ObjectVersion[];
  /** The key to continue after, when more keys follow in the prefix (matching or not). */
  readonly lastKey: string | undefined;
  /** Keys in the prefix after the page (selected or not), when `lastKey` is set. */
  readonly keysAfter: number | undefined;
}

/** Index of the first item after `from` whose key does not start with `prefix`. */
function prefixEnd(items: readonly ObjectVersion[], prefix: string, from: number): number {
  let lo = from;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const key = items[mid]?.key ?? '';
    if (key.startsWith(prefix) || compareKeyOrder(key, prefix) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Up to `limit` selected items of `items` (a sorted snapshot) in `scope`, strictly after
 * `after` (undefined: from the start). As storage pages with selectors do, the page ends at its
 * last selected item; a continue key is given when any key of the prefix follows it.
 */
export function pageOf(
  items: readonly ObjectVersion[],
  scope: PageScope,
  after: string | undefined,
  limit: number,
): CachePage {
  let i = lowerBound(items, after ?? scope.prefix);
  if (after !== undefined && items[i]?.key === after) i++;
  const end = prefixEnd(items, scope.prefix, i);
  const page: ObjectVersion[] = [];
  for (; i < end && page.length < limit; i++) {
    const item = items[i];
    if (item === undefined) break;
    if (scope.selection.everything || scope.selection.matches(item.object())) page.push(item);
  }
  const last = page.at(-1);
  if (i >= end || last === undefined) return { items: page, lastKey: undefined, keysAfter: undefined };
  return { items: page, lastKey: last.key, keysAfter: end - i };
}
