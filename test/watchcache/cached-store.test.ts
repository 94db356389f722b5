/**
 * The object store owns the choice between the watch cache and storage. Its cache here is a
 * `TypeCache` over a second store holding an older copy of the object, so every answer shows
 * where it came from: the cache's copy says `v: cached`, storage's `v: stored`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { Store } from '../../storage/interface.js';
import { loadRegistry } from '../../src/registry/registry.js';
import type { ResourceType } from '../../src/registry/types.js';
import { TypeCache } from '../../src/watchcache/type-cache.js';
import { CachedStore } from '../../src/resource/cached-store.js';
import { RACED, type StoredObject, type WriteOutcome } from '../../src/resource/object-store.js';
import { readCollectionRequest } from '../../src/resource/list-options.js';
import { JsonRepresentation } from '../../src/representation/json.js';
import { countingGets, overriding } from '../support/store-wrappers.js';

const KEY = '/configmaps/default/x';
const type = loadRegistry().byResource('', 'v1', 'configmaps') as ResourceType;
const target = { type, namespace: 'default', name: undefined, subresource: undefined };
const everything = readCollectionRequest({}, type, undefined, false).selection;

function configMap(v: string): Uint8Array {
  return Buffer.from(
    JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data: { v } }),
  );
}

const reads = { gets: 0 };
let storage: Store;
let cacheStore: Store;
let cache: TypeCache;
let objects: CachedStore;
let storedRevision: bigint;

beforeAll(async () => {
  storage = await openMemoryStore();
  cacheStore = await openMemoryStore();
  await cacheStore.create(KEY, configMap('cached'));
  await storage.create('/configmaps/default/filler', configMap('filler'));
  storedRevision = (await storage.create(KEY, configMap('stored'))).revision;
  cache = new TypeCache({
    store: cacheStore,
    prefix: '/configmaps/',
    window: { capacity: 100, minAgeMs: 60_000, maxEvents: 100 },
    watcherCapacity: 100,
    bookmarkIntervalMs: 60_000,
  });
  cache.start();
  expect(await cache.waitFresh(0n, 2000)).toBe(true);
  objects = new CachedStore({
    store: countingGets(storage, reads),
    caches: { for: () => cache },
    freshnessTimeoutMs: 200,
    bookmarkIntervalMs: 60_000,
  });
});

afterAll(async () => {
  cache.close();
  await storage.close();
  await cacheStore.close();
});

function value(stored: StoredObject | undefined): unknown {
  return (stored?.obj['data'] as Record<string, unknown> | undefined)?.['v'];
}

describe('reads', () => {
  it('serves resourceVersion=0, and Most Recent once the cache has caught up, from the cache', async () => {
    reads.gets = 0;
    const any = JSON.parse(String(await objects.item(type, KEY, 0n))) as { data: { v: string } };
    expect(any.data.v).toBe('cached');
    const latest = JSON.parse(String(await objects.item(type, KEY, undefined))) as { data: { v: string } };
    expect(latest.data.v).toBe('cached');
    expect(reads.gets).toBe(0);
  });

  it('serves Most Recent from storage when the cache cannot show in time that it caught up', async () => {
    const behind = new TypeCache({
      store: cacheStore,
      // A revision this cache never reaches: its consistent reads time out.
      currentRevision: () => Promise.resolve(1_000n),
      prefix: '/configmaps/',
      window: { capacity: 100, minAgeMs: 60_000, maxEvents: 100 },
      watcherCapacity: 100,
      bookmarkIntervalMs: 60_000,
    });
    behind.start();
    try {
      expect(await behind.waitFresh(0n, 2000)).toBe(true);
      const fromBehind = new CachedStore({
        store: storage,
        caches: { for: () => behind },
        freshnessTimeoutMs: 200,
        bookmarkIntervalMs: 60_000,
      });
      const latest = JSON.parse(String(await fromBehind.item(type, KEY, undefined))) as {
        data: { v: string };
      };
      expect(latest.data.v).toBe('stored');
    } finally {
      behind.close();
    }
  });

  it('lists resourceVersion=0 from the cache and Exact from storage', async () => {
    const fromCache = await objects.collection(target, everything, { any: true });
    expect([...fromCache.sources]).toHaveLength(1);
    const exact = await objects.collection(target, everything, { exact: storedRevision });
    expect([...exact.sources]).toHaveLength(2);
    expect(exact.meta.resourceVersion).toBe(String(storedRevision));
  });
});

describe('guaranteedUpdate', () => {
  it('starts from the cached copy and reruns a refused attempt on storage’s copy', async () => {
    reads.gets = 0;
    const seen: unknown[] = [];
    const result = await objects.guaranteedUpdate(type, KEY, { dryRun: false }, async (stored, attempt) => {
      seen.push([value(stored), attempt]);
      return value(stored) === 'cached' ? { rejected: new Error('stale') } : { done: 'ok' };
    });
    expect(result).toBe('ok');
    expect(seen).toEqual([
      ['cached', 1],
      ['stored', 2],
    ]);
    expect(reads.gets).toBe(1);
  });

  it('reruns an attempt that writes nothing on the cached copy, and answers it on storage’s', async () => {
    const seen: unknown[] = [];
    const result = await objects.guaranteedUpdate(type, KEY, { dryRun: false }, async (stored) => {
      seen.push(value(stored));
      return { unchanged: () => value(stored) };
    });
    expect(seen).toEqual(['cached', 'stored']);
    expect(result).toBe('stored');
  });

  it('throws what storage’s copy refuses, and never reruns a thrown error', async () => {
    let calls = 0;
    const refused = objects.guaranteedUpdate(type, KEY, { dryRun: true }, async () => {
      calls++;
      return { rejected: new Error('invalid') };
    });
    await expect(refused).rejects.toThrow('invalid');
    expect(calls).toBe(1);
    calls = 0;
    const thrown = objects.guaranteedUpdate(type, KEY, { dryRun: false }, async () => {
      calls++;
      throw new Error('final');
    });
    await expect(thrown).rejects.toThrow('final');
    expect(calls).toBe(1);
  });

  it('reads storage for a dry run and after a lost race', async () => {
    reads.gets = 0;
    const seen: unknown[] = [];
    await objects.guaranteedUpdate(
      type,
      KEY,
      { dryRun: true },
      async (stored, attempt): Promise<WriteOutcome<number>> => {
        seen.push(value(stored));
        return attempt < 3 ? RACED : { done: attempt };
      },
    );
    expect(seen).toEqual(['stored', 'stored', 'stored']);
    expect(reads.gets).toBe(3);
  });

  it('reads storage for an object the cache lacks', async () => {
    const seen: unknown[] = [];
    await objects.guaranteedUpdate(type, '/configmaps/default/filler', { dryRun: false }, async (stored) => {
      seen.push(value(stored));
      return { unchanged: () => undefined };
    });
    expect(seen).toEqual(['filler']);
  });
});

/**
 * An object store over storage whose cache is warming: the warm-up's read of the state waits
 * until `release` is called. Call `close` when done.
 */
function warmingStore(freshnessTimeoutMs: number): {
  store: CachedStore;
  release: () => void;
  close: () => void;
} {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const warming = new TypeCache({
    store: overriding(cacheStore, {
      range: async (...args) => {
        await gate;
        return cacheStore.range(...args);
      },
    }),
    prefix: '/configmaps/',
    window: { capacity: 100, minAgeMs: 60_000, maxEvents: 100 },
    watcherCapacity: 100,
    bookmarkIntervalMs: 60_000,
  });
  warming.start();
  const store = new CachedStore({
    store: storage,
    caches: { for: () => warming },
    freshnessTimeoutMs,
    bookmarkIntervalMs: 60_000,
  });
  return {
    store,
    release,
    close: () => {
      release();
      warming.close();
    },
  };
}

describe('a cache still reading its state', () => {
  async function readDuringWarmUp(timeoutMs: number, warmUpMs: number): Promise<unknown> {
    const { store, release, close } = warmingStore(timeoutMs);
    try {
      const answer = store.item(type, KEY, 0n);
      setTimeout(release, warmUpMs);
      return (JSON.parse(String(await answer)) as { data: { v: string } }).data.v;
    } finally {
      close();
    }
  }

  it('serves a read it could serve once the warm-up ends, instead of scanning storage too', async () => {
    expect(await readDuringWarmUp(2000, 50)).toBe('cached');
  });

  it('reads storage when the warm-up outlasts the freshness timeout', async () => {
    expect(await readDuringWarmUp(50, 500)).toBe('stored');
  });
});

describe('a watch resuming from a revision while the cache warms up', () => {
  it('is served by storage at once, without waiting for the warm-up', async () => {
    // The warm-up is held until the end; a watch that waited for it would wait 10 s.
    const { store, close } = warmingStore(10_000);
    const from = (await storage.create('/configmaps/default/mark', configMap('mark'))).revision;
    const started = performance.now();
    const stream = await store.watch(
      type,
      { prefix: '/configmaps/', selection: everything, span: { prefix: '/configmaps/' } },
      { from, initialEvents: false, initialEventsEnd: false, bookmarks: false },
      new JsonRepresentation(type),
    );
    try {
      await storage.create('/configmaps/default/resumed', configMap('resumed'));
      const frames = stream.frames()[Symbol.asyncIterator]();
      const first = await frames.next();
      // Well before the freshness timeout (10 s) a waiting watch would have spent.
      expect(performance.now() - started).toBeLessThan(2000);
      const ev = JSON.parse(Buffer.from(first.value as Uint8Array).toString('utf8')) as {
        type: string;
        object: { data: { v: string } };
      };
      expect([ev.type, ev.object.data.v]).toEqual(['ADDED', 'resumed']);
    } finally {
      stream.close();
      close();
    }
  });
});
