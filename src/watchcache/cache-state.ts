/**
 * The current state of one resource type in the watch cache: every live object's latest
 * version, by key and in key order. Lists take a {@link CacheState.snapshot} in O(1): the sorted
 * array is shared with readers and copied only by the first change after a snapshot
 * (copy-on-write), so a list streaming for seconds sees one consistent state while writers go on.
 */
import { compareKeyOrder } from './key-order.js';
import type { ObjectVersion } from './object-version.js';

/** Index of the first item whose key is ≥ `key` (items sorted by key). */
export function lowerBound(items: readonly ObjectVersion[], key: string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const item = items[mid];
    if (item !== undefined && compareKeyOrder(item.key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Live objects by key, sorted, with copy-on-write snapshots. */
export class CacheState {
  #sorted: ObjectVersion[];
  readonly #byKey = new Map<string, ObjectVersion>();
  /** True when #sorted was handed out by snapshot() and must not change in place. */
  #shared = false;

  /** @param items initial versions in key order (the store's range order). */
  constructor(items: ObjectVersion[] = []) {
    this.#sorted = items;
    for (const item of items) this.#byKey.set(item.key, item);
  }

  get size(): number {
    return this.#byKey.size;
  }

  get(key: string): ObjectVersion | undefined {
    return this.#byKey.get(key);
  }

  /** The sorted versions as of now; never changes afterwards. */
  snapshot(): readonly ObjectVersion[] {
    this.#shared = true;
    return this.#sorted;
  }

  #writable(): ObjectVersion[] {
    if (this.#shared) {
      this.#sorted = this.#sorted.slice();
      this.#shared = false;
    }
    return this.#sorted;
  }

  /** Sets the key's version (insert or replace). */
  put(version: ObjectVersion): void {
    const sorted = this.#writable();
    const existed = this.#byKey.has(version.key);
    this.#byKey.set(version.key, version);
    const at = lowerBound(sorted, version.key);
    if (existed && sorted[at]?.key === version.key) sorted[at] = version;
    else sorted.splice(at, 0, version);
  }

  /** Removes the key (no-op when absent). */
  delete(key: string): void {
    if (!this.#byKey.delete(key)) return;
    const sorted = this.#writable();
    const at = lowerBound(sorted, key);
    if (sorted[at]?.key === key) sorted.splice(at, 1);
  }
}
