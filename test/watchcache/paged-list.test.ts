/**
 * Paged lists (`limit`/`continue`, resourceVersion unset) served from the watch cache's
 * snapshots: every page shows the state of the first page's revision whatever is written in
 * between, pages and counts equal storage's for the same state (with and without selectors), and
 * a token the cache issued is resumed by a server that reads storage only (another replica).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { Store } from '../../storage/interface.js';
import { WatchCaches } from '../../src/watchcache/cache-set.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { json, startResourceApp, type KObj, type ResourceApp } from '../server/resources.support.js';

const CM = '/api/v1/namespaces/default/configmaps';
const N = 25;

let store: Store;
let caches: WatchCaches;
/** Serves lists from `caches` (values are JSON in storage, the handlers' layout). */
let cached: ResourceApp;
/** The same store, no watch cache: every read is storage's. */
let storageOnly: ResourceApp;

beforeAll(async () => {
  store = await openMemoryStore();
  caches = new WatchCaches({ store, defaultSize: 100, bookmarkIntervalMs: 60_000 });
  cached = await startResourceApp({ store, watchCache: caches });
  storageOnly = await startResourceApp({ store, watchCache: false });
  await cached.request(
    json('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'default' },
    }),
  );
  for (let i = 0; i < N; i++) {
    const name = `cm-${String(i).padStart(2, '0')}`;
    const res = await cached.request(
      json('POST', CM, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, labels: { odd: String(i % 2 === 1) } },
        data: { v: '1' },
      }),
    );
    expect(res.statusCode).toBe(201);
  }
});

afterAll(async () => {
  caches.close();
  await storageOnly.app.close();
  await cached.close();
});

const configMaps = loadRegistry().byResource('', 'v1', 'configmaps');

async function page(app: ResourceApp, query: string): Promise<KObj> {
  const res = await app.request(json('GET', `${CM}?${query}`));
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const names = (list: KObj): string[] => (list.items ?? []).map((o) => o.metadata.name ?? '');
const meta = (list: KObj): KObj['metadata'] => list.metadata;

/** Every page of a paged list, following `continue` on `apps` in turn (round robin). */
async function allPages(apps: ResourceApp[], query: string, between?: () => Promise<void>): Promise<KObj[]> {
  const pages: KObj[] = [];
  let cont: string | undefined;
  for (let i = 0; ; i++) {
    const app = apps[i % apps.length] as ResourceApp;
    const list = await page(
      app,
      `${query}${cont === undefined ? '' : `&continue=${encodeURIComponent(cont)}`}`,
    );
    pages.push(list);
    cont = meta(list).continue;
    if (cont === undefined) return pages;
    await between?.();
  }
}

describe('paged lists from the watch cache', () => {
  it('read every page at the first page’s revision from a kept snapshot, whatever is written in between', async () => {
    const cache = caches.for(configMaps!);
    // Lists go to storage while the cache warms (it starts on first use).
    for (let i = 0; i < 200 && cache?.ready !== true; i++) await new Promise((r) => setTimeout(r, 10));
    const before = { ...cache!.stats };
    let n = 0;
    const pages = await allPages([cached], 'limit=10', async () => {
      // A delete, an update and a create after the first page: none of them may show.
      const victim = `cm-${String(20 + n).padStart(2, '0')}`;
      expect((await cached.request(json('DELETE', `${CM}/${victim}`))).statusCode).toBe(200);
      await cached.request(
        json('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `late-${n}` } }),
      );
      n++;
    });
    expect(pages.map((p) => names(p).length)).toEqual([10, 10, 5]);
    expect(pages.flatMap(names)).toEqual(
      Array.from({ length: N }, (_, i) => `cm-${String(i).padStart(2, '0')}`),
    );
    expect(new Set(pages.map((p) => meta(p).resourceVersion)).size).toBe(1);
    expect(pages.map((p) => meta(p).remainingItemCount)).toEqual([15, 5, undefined]);
    expect(cache!.stats.retainedSnapshots - before.retainedSnapshots).toBe(1);
    expect(cache!.stats.snapshotHits - before.snapshotHits).toBe(2);
  });

  it('give the same pages as storage, with and without selectors, and tokens either server resumes', async () => {
    const stats = caches.for(configMaps!)!.stats;
    const kept = stats.retainedSnapshots;
    for (const query of [
      'limit=7',
      'limit=4&labelSelector=odd%3Dtrue',
      'limit=3&fieldSelector=metadata.name%3Dcm-05',
    ]) {
      const fromCache = await allPages([cached], query);
      const fromStorage = await allPages([storageOnly], query);
      const shape = (pages: KObj[]): unknown[] =>
        pages.map((p) => [names(p), meta(p).remainingItemCount, meta(p).continue !== undefined]);
      expect(shape(fromCache), query).toEqual(shape(fromStorage));
      // Alternating servers: the cache's tokens resume in storage, storage's in the cache.
      const mixed = await allPages([cached, storageOnly], query);
      expect(shape(mixed), query).toEqual(shape(fromStorage));
    }
    // Each cached first page kept its snapshot (3 queries, twice each).
    expect(stats.retainedSnapshots - kept).toBe(6);
  });

  it('refuse a garbled token as storage does', async () => {
    const res = await cached.request(json('GET', `${CM}?limit=2&continue=garbage`));
    expect(res.statusCode).toBe(400);
  });
});
