/**
 * Watch rules over real sockets, served from the watch cache (ready before each test) and, for
 * the rules that differ in mechanism, with `--watch-cache=false` too.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import type { WatchCachesOptions } from '../../src/watchcache/cache-set.js';
import { json, startResourceApp, type KObj, type ResourceApp } from './resources.support.js';
import { openWatchStream, readyCache, testCaches, type WatchReader } from './watch.support.js';

const CM = '/api/v1/namespaces/default/configmaps';

let s: ResourceApp;
let base: string;
const readers: WatchReader[] = [];

async function start(cached: boolean, cacheOptions: Partial<WatchCachesOptions> = {}): Promise<void> {
  const store = await openMemoryStore();
  const caches = cached ? testCaches(store, cacheOptions) : undefined;
  s = await startResourceApp({
    store,
    watchCache: caches ?? false,
    bookmarkIntervalMs: 100,
    freshnessTimeoutMs: 300,
  });
  if (caches !== undefined) await readyCache(caches);
  base = await s.listen();
}

afterEach(async () => {
  for (const r of readers.splice(0)) await r.close();
  await s.close();
});

async function post(name: string, labels: Record<string, string> = {}): Promise<KObj> {
  const r = await s.request(json('POST', CM, { metadata: { name, labels } }));
  expect(r.statusCode, r.body).toBe(201);
  return r.json();
}

async function watch(query: string): Promise<WatchReader> {
  const w = await openWatchStream(base, `${CM}?watch=1&${query}`);
  readers.push(w);
  return w;
}

async function events(w: WatchReader, n: number): Promise<string[]> {
  return (await w.take(n)).map(
    (ev) => `${ev.type ?? ''}:${ev.object?.metadata.name ?? ev.object?.metadata.resourceVersion ?? ''}`,
  );
}

describe.each([true, false])('watch (cache %s)', (cached) => {
  it('unset: synthetic ADDED for the state, then changes', async () => {
    await start(cached);
    await post('a');
    await post('b');
    const w = await watch('');
    expect(await events(w, 2)).toEqual(['ADDED:a', 'ADDED:b']);
    await post('c');
    await s.request(json('DELETE', `${CM}/a`));
    expect(await events(w, 2)).toEqual(['ADDED:c', 'DELETED:a']);
  });

  it('0: synthetic ADDED for the state, then changes', async () => {
    await start(cached);
    await post('a');
    const w = await watch('resourceVersion=0');
    expect(await events(w, 1)).toEqual(['ADDED:a']);
    await post('b');
    expect(await events(w, 1)).toEqual(['ADDED:b']);
  });

  it('N: only changes after N, no synthetic events', async () => {
    await start(cached);
    const a = await post('a');
    await post('b');
    const w = await watch(`resourceVersion=${a.metadata.resourceVersion}`);
    await s.request(json('PUT', `${CM}/a`, { metadata: { name: 'a' }, data: { k: 'v' } }));
    expect(await events(w, 2)).toEqual(['ADDED:b', 'MODIFIED:a']);
  });

  it('sendInitialEvents=true: state as ADDED, then a bookmark annotated initial-events-end, then changes', async () => {
    await start(cached);
    const a = await post('a');
    await post('b');
    const w = await watch(
      `sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${a.metadata.resourceVersion}`,
    );
    expect(await events(w, 2)).toEqual(['ADDED:a', 'ADDED:b']);
    const end = await w.next();
    expect(end?.type).toBe('BOOKMARK');
    expect(end?.object?.metadata.annotations).toMatchObject({ 'k8s.io/initial-events-end': 'true' });
    expect(BigInt(end?.object?.metadata.resourceVersion ?? '0')).toBeGreaterThanOrEqual(
      BigInt(a.metadata.resourceVersion ?? ''),
    );
    await post('c');
    let next = await w.next();
    while (next?.type === 'BOOKMARK') next = await w.next();
    expect(next).toMatchObject({ type: 'ADDED', object: { metadata: { name: 'c' } } });
  });

  it('sendInitialEvents=true without bookmarks: the state as ADDED with no closing bookmark, then changes', async () => {
    await start(cached);
    await post('a');
    const w = await watch('sendInitialEvents=true&resourceVersionMatch=NotOlderThan');
    expect(await events(w, 1)).toEqual(['ADDED:a']);
    await post('b');
    // A closing bookmark would come before b's event.
    expect(await events(w, 1)).toEqual(['ADDED:b']);
  });

  it('sendInitialEvents needs NotOlderThan; resourceVersionMatch alone is invalid on a watch', async () => {
    await start(cached);
    for (const q of [
      'sendInitialEvents=true',
      'sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=Exact&resourceVersion=1',
      'resourceVersionMatch=NotOlderThan&resourceVersion=1',
    ]) {
      const r = await fetch(`${base}${CM}?watch=1&${q}`);
      expect(r.status, q).toBe(422);
      expect(((await r.json()) as KObj).reason).toBe('Invalid');
    }
  });

  it('allowWatchBookmarks: bookmarks carry only metadata.resourceVersion', async () => {
    await start(cached);
    const a = await post('a');
    const w = await watch(`allowWatchBookmarks=true&resourceVersion=${a.metadata.resourceVersion}`);
    const ev = await w.next();
    expect(ev).toMatchObject({ type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1' } });
    expect(Object.keys(ev?.object?.metadata ?? {})).toEqual(['resourceVersion']);
  });

  it('timeoutSeconds ends the stream', async () => {
    await start(cached);
    const w = await watch('timeoutSeconds=1');
    expect(await w.next()).toBeUndefined();
  });
});

describe('watch from the cache window', () => {
  it('a version compacted in storage but still in the window is served (no 410)', async () => {
    await start(true);
    const a = await post('a');
    await post('b');
    await post('c');
    await s.store.compact(await s.store.currentRevision());
    const w = await watch(`resourceVersion=${a.metadata.resourceVersion}`);
    expect(await events(w, 2)).toEqual(['ADDED:b', 'ADDED:c']);
  });

  it('a version older than the window is served from storage, which still holds that history', async () => {
    await start(true, { defaultSize: 2, minAgeMs: 0 });
    const a = await post('a');
    for (const n of ['b', 'c', 'd', 'e']) await post(n);
    const w = await watch(`resourceVersion=${a.metadata.resourceVersion}`);
    expect(await events(w, 4)).toEqual(['ADDED:b', 'ADDED:c', 'ADDED:d', 'ADDED:e']);
    await post('f');
    expect(await events(w, 1)).toEqual(['ADDED:f']);
  });

  it('a version older than the window and compacted in storage gets an ERROR event with a 410 Expired Status', async () => {
    await start(true, { defaultSize: 2, minAgeMs: 0 });
    const a = await post('a');
    for (const n of ['b', 'c', 'd', 'e']) await post(n);
    await s.store.compact(await s.store.currentRevision());
    const w = await watch(`resourceVersion=${a.metadata.resourceVersion}`);
    const ev = await w.next();
    expect(ev).toMatchObject({ type: 'ERROR', object: { kind: 'Status', reason: 'Expired', code: 410 } });
    expect(ev?.object?.message).toMatch(/^too old resource version: /);
    expect(await w.next()).toBeUndefined();
  });

  it('two watchers see the same events in the same order', async () => {
    await start(true);
    const w1 = await watch('resourceVersion=0');
    const w2 = await watch('resourceVersion=0');
    const writes = Promise.all(Array.from({ length: 30 }, (_, i) => post(`p${i}`)));
    const [e1, e2] = await Promise.all([events(w1, 30), events(w2, 30), writes]);
    expect(e1).toHaveLength(30);
    expect(e1).toEqual(e2);
  });
});
