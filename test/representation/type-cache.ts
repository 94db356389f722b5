/** A started watch-cache TypeCache over a store, ready to read, for the representation tests. */
import { expect } from 'vitest';
import { TypeCache } from '../../src/watchcache/type-cache.js';
import type { Store } from '../../storage/interface.js';

/** A TypeCache of `prefix` on `store`, started and ready; the caller closes it. */
export async function readyTypeCache(store: Store, prefix: string): Promise<TypeCache> {
  const cache = new TypeCache({
    store,
    prefix,
    window: { capacity: 100, minAgeMs: 0, maxEvents: 100 },
    watcherCapacity: 100,
    bookmarkIntervalMs: 60_000,
  });
  cache.start();
  expect(await cache.whenReady(5_000)).toBe(true);
  return cache;
}
