/**
 * The current state of one resource type in the watch cache: every live object's latest
 * version, by key and in key order.
 *
 * Writes are O(1): a put or delete changes the map and notes the key; the key-ordered array
 * that lists read is brought up to date only when a {@link CacheState.snapshot} asks for it, from
 * the last array and the noted keys (O(n) copying plus O(k log n) for k keys). An insert into a
 * sorted array per write cost O(n) instead, a memmove of the whole array, the largest part of a
 * server's watch ingestion at tens of thousands of objects. A snapshot never changes afterwards,
 * so a list streaming for seconds sees one consistent state while writers go on.
 */
import { compareKeyOrder, keyOrderFor, sortKeys } from './key-order.js';
import type { ObjectVersion } from './object-version.js';

/** Index of the first item whose key is ≥ `key` (items sorted by key). */
export function lowerBound(items: readonly ObjectVersion[], key: string): number {
  return lowerBoundFrom(items, key, 0, compareKeyOrder);
}

/**
 * Live objects by key, with sorted snapshots. Invariant: `#sorted` holds the current version of
 * every live key except those in `#changed`.
 */
export class CacheState {
  /** Key order as of the last rebuild. */
  #sorted: ObjectVersion[];
  readonly #byKey = new Map<string, ObjectVersion>();
  /** Keys put or deleted since the last rebuild. */
  #changed = new Set<string>();

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
    if (this.#changed.size > 0) this.#rebuild();
    return this.#sorted;
  }

  /** Sets the key's version (insert or replace). */
  put(version: ObjectVersion): void {
    this.#byKey.set(version.key, version);
    this.#note(version.key);
  }

  /** Removes the key (no-op when absent). */
  delete(key: string): void {
    if (this.#byKey.delete(key)) this.#note(key);
  }

  /**
   * Notes a changed key. Past the live count (and a floor), the array is rebuilt, so the changes
   * held back stay bounded and the array never keeps more superseded versions alive than live ones.
   */
  #note(key: string): void {
    this.#changed.add(key);
    if (this.#changed.size > Math.max(1024, this.#byKey.size)) this.#rebuild();
  }

  /**
   * `#sorted` ← the live versions in key order, from the last array and the changed keys (found
   * by binary search). A few changes: a native copy of the array, then each change in place, last
   * key first so earlier positions hold. Many: one pass, copying run by run between them.
   */
  #rebuild(): void {
    const keys = [...this.#changed];
    this.#changed = new Set();
    const compare = keyOrderFor(keys);
    const changed = sortKeys(keys, compare);
    const old = this.#sorted;
    if (changed.length <= FEW_CHANGES) {
      const out = old.slice();
      for (let c = changed.length - 1; c >= 0; c--) {
        const key = changed[c] as string;
        const at = lowerBoundFrom(out, key, 0, compare);
        const present = at < out.length && (out[at] as ObjectVersion).key === key;
        const current = this.#byKey.get(key);
        if (current === undefined) {
          if (present) out.splice(at, 1);
        } else if (present) out[at] = current;
        else out.splice(at, 0, current);
      }
      this.#sorted = out;
      return;
    }
    const out: ObjectVersion[] = [];
    let from = 0;
    for (const key of changed) {
      let at = lowerBoundFrom(old, key, from, compare);
      for (let i = from; i < at; i++) out.push(old[i] as ObjectVersion);
      if (at < old.length && (old[at] as ObjectVersion).key === key) at++;
      const current = this.#byKey.get(key);
      if (current !== undefined) out.push(current);
      from = at;
    }
    for (let i = from; i < old.length; i++) out.push(old[i] as ObjectVersion);
    this.#sorted = out;
  }
}

/** Up to this many changed keys, a rebuild edits a copy in place (an insert or delete: a memmove). */
const FEW_CHANGES = 32;

/** As {@link lowerBound}, searching `items[from..]` with `compare`. */
function lowerBoundFrom(
  items: readonly ObjectVersion[],
  key: string,
  from: number,
  compare: (a: string, b: string) => number,
): number {
  let lo = from;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare((items[mid] as ObjectVersion).key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
