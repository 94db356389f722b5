/**
 * The watch cache of one type over a real in-memory store: warm-up, state and window, watchers
 * (backlog, live, selectors, bookmarks), bounded queues, encode-once, rebuild from history.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  KeySpan,
  RangeOptions,
  RangeResult,
  Store,
  Watch,
  WatchOptions,
} from '../../storage/interface.js';
import { MappedWatch } from '../../storage/mapped-watch.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { encodeForStorage } from '../../src/api/object.js';
import { FieldSelector } from '../../src/resource/field-selector.js';
import { LabelSelector } from '../../src/resource/label-selector.js';
import { Selection } from '../../src/resource/selection.js';
import { TypeCache, type TypeCacheOptions } from '../../src/watchcache/type-cache.js';
import type { CacheWatcher } from '../../src/watchcache/watcher.js';

const PREFIX = '/configmaps/';
const everything = new Selection(
  LabelSelector.parse(undefined),
  FieldSelector.parse(undefined, { group: '', kind: 'ConfigMap' }),
);

/** Objects labelled app=x. */
const appX = new Selection(
  LabelSelector.parse('app=x'),
  FieldSelector.parse(undefined, { group: '', kind: 'ConfigMap' }),
);

function cm(
  name: string,
  labels: Record<string, string> = {},
  data: Record<string, string> = {},
): Uint8Array {
  return encodeForStorage({
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name, namespace: 'default', labels },
    data,
  });
}
const key = (name: string, ns = 'default'): string => `${PREFIX}${ns}/${name}`;

let store: Store;
const caches: TypeCache[] = [];
afterEach(async () => {
  for (const c of caches.splice(0)) c.close();
  await store.close();
});

function newCache(overrides: Partial<TypeCacheOptions> = {}): TypeCache {
  const cache = new TypeCache({
    store,
    prefix: PREFIX,
    window: { capacity: 100, minAgeMs: 300_000, maxEvents: 10_000 },
    watcherCapacity: 1000,
    bookmarkIntervalMs: 60_000,
    ...overrides,
  });
  caches.push(cache);
  cache.start();
  return cache;
}

async function ready(cache: TypeCache): Promise<void> {
  for (let i = 0; i < 200 && !cache.ready; i++) await new Promise((r) => setTimeout(r, 10));
  expect(cache.ready).toBe(true);
  expect(await cache.waitConsistent(3000)).toBe(true);
}

type Frame = { type: string; object: { metadata: Record<string, unknown> } };

/** Reads frames until `n` events were seen (or the stream ended). */
async function take(
  w: CacheWatcher,
  n: number,
): Promise<{ type: string; object: { metadata: Record<string, unknown> } }[]> {
  const out: { type: string; object: { metadata: Record<string, unknown> } }[] = [];
  const it = w.frames()[Symbol.asyncIterator]();
  while (out.length < n) {
    const r = await it.next();
    if (r.done) break;
    for (const line of r.value.toString('utf8').split('\n'))
      if (line !== '') out.push(JSON.parse(line) as Frame);
  }
  return out;
}

function open(
  cache: TypeCache,
  from: 'now' | bigint,
  extra: { initialEvents?: boolean; selection?: Selection; bookmarks?: boolean } = {},
): CacheWatcher {
  const w = cache.openWatcher({
    scope: { prefix: `${PREFIX}default/`, selection: extra.selection ?? everything },
    from,
    initialEvents: extra.initialEvents ?? false,
    initialEventsEnd: false,
    bookmarks: extra.bookmarks ?? false,
    kind: 'ConfigMap',
    apiVersion: 'v1',
  });
  if (w === 'expired') throw new Error('expired');
  return w;
}

describe('TypeCache', () => {
  it('warms from the store, serves the state, and catches up with later writes', async () => {
    store = await openMemoryStore();
    await store.create(key('a'), cm('a'));
    await store.create('/secrets/default/x', cm('x'));
    const cache = newCache();
    await ready(cache);
    expect(cache.snapshot().items.map((v) => v.key)).toEqual([key('a')]);
    const b = await store.create(key('b'), cm('b'));
    // Writes elsewhere move the store's revision; a consistent read still gets there via progress.
    await store.create('/secrets/default/y', cm('y'));
    expect(await cache.waitConsistent(3000)).toBe(true);
    expect(cache.revision).toBe(await store.currentRevision());
    expect(cache.get(key('b'))?.revision).toBe(b.revision);
  });

  it('a snapshot does not change under later writes (copy-on-write)', async () => {
    store = await openMemoryStore();
    await store.create(key('a'), cm('a'));
    const cache = newCache();
    await ready(cache);
    const snap = cache.snapshot();
    await store.create(key('b'), cm('b'));
    await store.delete(key('a'));
    await cache.waitConsistent(3000);
    expect(snap.items.map((v) => v.key)).toEqual([key('a')]);
    expect(cache.snapshot().items.map((v) => v.key)).toEqual([key('b')]);
  });

  it('watch from a revision replays the window, then live events; older than the window is expired', async () => {
    store = await openMemoryStore();
    const cache = newCache({ window: { capacity: 3, minAgeMs: 0, maxEvents: 3 } });
    await ready(cache);
    const revs: bigint[] = [];
    for (let i = 0; i < 6; i++) revs.push((await store.create(key(`o${i}`), cm(`o${i}`))).revision);
    await cache.waitConsistent(3000);
    expect(
      cache.openWatcher({
        scope: { prefix: PREFIX, selection: everything },
        from: revs[1] as bigint,
        initialEvents: false,
        initialEventsEnd: false,
        bookmarks: false,
        kind: 'ConfigMap',
        apiVersion: 'v1',
      }),
    ).toBe('expired');
    const w = open(cache, revs[3] as bigint);
    const p = take(w, 3);
    await store.create(key('live'), cm('live'));
    const evs = await p;
    expect(evs.map((e) => `${e.type}:${String(e.object.metadata['name'])}`)).toEqual([
      'ADDED:o4',
      'ADDED:o5',
      'ADDED:live',
    ]);
    w.end();
  });

  it('selectors: entering ADDED, leaving DELETED with the last selected state at the change revision', async () => {
    store = await openMemoryStore();
    const a = await store.create(key('a'), cm('a', { app: 'x' }));
    const cache = newCache();
    await ready(cache);
    const w = open(cache, 'now', { initialEvents: true, selection: appX });
    const p = take(w, 3);
    const moved = await store.update(key('a'), cm('a', { app: 'y' }), { ifModRevision: a.revision });
    await store.update(key('a'), cm('a', { app: 'x' }), { ifModRevision: moved.revision });
    const evs = await p;
    expect(evs.map((e) => e.type)).toEqual(['ADDED', 'DELETED', 'ADDED']);
    expect(evs[1]?.object.metadata['labels']).toEqual({ app: 'x' });
    expect(evs[1]?.object.metadata['resourceVersion']).toBe(String(moved.revision));
    w.end();
  });

  it("lets a replaced version's parsed object go once selecting watchers decided, and they still see the right types", async () => {
    store = await openMemoryStore();
    const a = await store.create(key('a'), cm('a', { app: 'x' }));
    const cache = newCache();
    await ready(cache);
    const w = open(cache, 'now', { selection: appX });
    const first = cache.get(key('a'));
    const parsed = first?.object();
    const moved = await store.update(key('a'), cm('a', { app: 'y' }), { ifModRevision: a.revision });
    await store.update(key('a'), cm('a', { app: 'x' }), { ifModRevision: moved.revision });
    await cache.waitConsistent(3000);
    // Replaced twice: its parse was dropped, and one made on demand (equal to the old) is not kept.
    expect(first?.object()).not.toBe(parsed);
    expect(first?.object()).toEqual(parsed);
    expect(first?.object()).not.toBe(first?.object());
    // The current version parses on demand and keeps that parse until the next change.
    const current = cache.get(key('a'));
    expect(current?.object()).toBe(current?.object());
    // Read only now: the types were decided when the events were offered.
    const evs = await take(w, 2);
    expect(evs.map((e) => e.type)).toEqual(['DELETED', 'ADDED']);
    expect(evs[0]?.object.metadata['labels']).toEqual({ app: 'x' });
    w.end();
  });

  it('asks for no previous values and serves deletes from its own state, as on etcd', async () => {
    const asked: (boolean | undefined)[] = [];
    const inner = await openMemoryStore();
    // What etcd gives a watch opened with previousValues: false.
    store = new Proxy(inner, {
      get(target, prop) {
        if (prop !== 'watch') {
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
        return (span: KeySpan, options?: WatchOptions): Watch => {
          asked.push(options?.previousValues);
          const w = target.watch(span, options);
          if (options?.previousValues !== false) return w;
          return new MappedWatch(w, (e) =>
            e.type === 'put'
              ? { ...e, prevKv: undefined }
              : e.type === 'delete'
                ? { ...e, prevKv: { ...e.kv, createRevision: 0n, modRevision: 0n, lease: 0n } }
                : e,
          );
        };
      },
    });
    const a = await store.create(key('a'), cm('a', { app: 'x' }, { k: 'first' }));
    const cache = newCache();
    await ready(cache);
    expect(asked).toEqual([false]);
    const w = open(cache, 'now');
    const p = take(w, 2);
    const b = await store.update(key('a'), cm('a', { app: 'x' }, { k: 'last' }), {
      ifModRevision: a.revision,
    });
    const gone = await store.delete(key('a'));
    const evs = await p;
    expect(evs.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
    // The deleted object is the last state the cache held, at the delete's revision.
    expect((evs[1]?.object as unknown as { data: unknown }).data).toEqual({ k: 'last' });
    expect(evs[1]?.object.metadata['resourceVersion']).toBe(String(gone.revision));
    expect(b.revision).toBeLessThan(gone.revision);
    expect(cache.get(key('a'))).toBeUndefined();
    w.end();
  });

  it('sends every watcher the same frames, with the resourceVersion, and keeps no encoding of a replaced version', async () => {
    store = await openMemoryStore();
    const cache = newCache();
    await ready(cache);
    const watchers = [open(cache, 'now'), open(cache, 'now'), open(cache, 'now')];
    const reads = watchers.map((w) => take(w, 6));
    const revisions: bigint[] = [];
    for (let i = 0; i < 5; i++) revisions.push((await store.create(key(`e${i}`), cm(`e${i}`))).revision);
    await cache.waitConsistent(3000);
    const first = cache.get(key('e0'));
    first?.encoded('protobuf', () => Uint8Array.of(1));
    expect(first?.hasEncoding('protobuf')).toBe(true);
    const [e0] = revisions;
    if (e0 === undefined) throw new Error('no create');
    revisions.push((await store.update(key('e0'), cm('e0', { app: 'x' }), { ifModRevision: e0 })).revision);
    const seen = await Promise.all(reads);
    for (const s of seen) expect(s).toHaveLength(6);
    expect(JSON.stringify(seen[0])).toBe(JSON.stringify(seen[2]));
    expect(seen[0]?.map((e) => e.object.metadata['resourceVersion'])).toEqual(revisions.map(String));
    // The replaced version dropped its encodings and keeps none made later.
    expect(first?.hasEncoding('protobuf')).toBe(false);
    first?.encoded('protobuf', () => Uint8Array.of(2));
    expect(first?.hasEncoding('protobuf')).toBe(false);
    for (const w of watchers) w.end();
  });

  it('a watcher that does not read is ended at its bound without delaying writers or others', async () => {
    store = await openMemoryStore();
    const cache = newCache({ watcherCapacity: 5 });
    await ready(cache);
    const slow = open(cache, 'now');
    const fast = open(cache, 'now');
    const fastRead = take(fast, 20);
    for (let i = 0; i < 20; i++) await store.create(key(`s${i}`), cm(`s${i}`));
    expect(await fastRead).toHaveLength(20);
    expect(slow.overflowed).toBe(true);
    expect(cache.stats.overflows).toBe(1);
    // The slow client still gets what was queued, then the end (it resumes from there).
    const got = await take(slow, 100);
    expect(got.map((e) => e.object.metadata['name'])).toEqual(['s0', 's1', 's2', 's3', 's4']);
    fast.end();
  });

  it('bookmarks carry only the resourceVersion', async () => {
    store = await openMemoryStore();
    const cache = newCache({ bookmarkIntervalMs: 50 });
    await ready(cache);
    const w = open(cache, 'now', { bookmarks: true });
    await store.create('/secrets/default/other', cm('other'));
    const [ev] = await take(w, 1);
    expect(ev?.type).toBe('BOOKMARK');
    expect(Object.keys(ev?.object.metadata ?? {})).toEqual(['resourceVersion']);
    w.end();
  });

  /**
   * `inner` whose range calls are recorded; `afterFirstPage` runs (on `inner`) once, after the
   * first paged read and before its result is given back.
   */
  function pagedStore(inner: Store, ranges: RangeOptions[], afterFirstPage: () => Promise<void>): Store {
    let first = true;
    return new Proxy(inner, {
      get(target, prop) {
        if (prop !== 'range') {
          const value = Reflect.get(target, prop, target) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        }
        return async (span: KeySpan, options?: RangeOptions): Promise<RangeResult> => {
          ranges.push(options ?? {});
          const result = await target.range(span, options);
          if (first && options?.limit !== undefined) {
            first = false;
            await afterFirstPage();
          }
          return result;
        };
      },
    });
  }

  const names = (n: number): string[] =>
    Array.from({ length: n }, (_, i) => `o${String(i).padStart(4, '0')}`);

  it('warms page by page at one revision, and keeps the writes made between pages', async () => {
    const inner = await openMemoryStore();
    for (const name of names(250)) await inner.create(key(name), cm(name));
    const ranges: RangeOptions[] = [];
    let updated = 0n;
    store = pagedStore(inner, ranges, async () => {
      // Already listed, not listed yet, and new: the watch from the first page's revision has them.
      const { kv } = await inner.get(key('o0000'));
      updated = (
        await inner.update(key('o0000'), cm('o0000', {}, { k: 'v' }), {
          ifModRevision: kv?.modRevision ?? 0n,
        })
      ).revision;
      await inner.delete(key('o0200'));
      await inner.create(key('zz'), cm('zz'));
    });
    const cache = newCache({ warmPageSize: 100 });
    await ready(cache);
    expect(ranges.map((r) => [r.limit, r.continue === undefined])).toEqual([
      [100, true],
      [100, false],
      [100, false],
    ]);
    expect(cache.stats.warmups).toBe(1);
    const expected = (await inner.range({ prefix: PREFIX })).items.map((kv) => kv.key);
    expect(expected).toHaveLength(250);
    expect(cache.snapshot().items.map((v) => v.key)).toEqual(expected);
    expect(cache.get(key('o0000'))?.revision).toBe(updated);
    expect(cache.get(key('o0200'))).toBeUndefined();
  });

  it('starts the warm-up again when a compaction passes its revision between pages', async () => {
    const inner = await openMemoryStore();
    for (const name of names(250)) await inner.create(key(name), cm(name));
    const ranges: RangeOptions[] = [];
    const errors: unknown[] = [];
    store = pagedStore(inner, ranges, async () => {
      await inner.create(key('zz'), cm('zz'));
      await inner.compact(await inner.currentRevision());
    });
    const cache = newCache({ warmPageSize: 100, onError: (err) => errors.push(err) });
    await ready(cache);
    expect(cache.stats.warmups).toBe(2);
    expect(errors).toHaveLength(1);
    expect(cache.snapshot().items).toHaveLength(251);
    expect(cache.get(key('zz'))).toBeDefined();
  });

  it('warms by listing at the current revision: no replay of history, which is left to storage', async () => {
    store = await openMemoryStore();
    const first = await store.create(key('a'), cm('a'));
    await store.create(key('b'), cm('b'));
    await store.delete(key('a'));
    const cache = newCache();
    await ready(cache);
    expect(cache.stats.warmups).toBe(1);
    expect(cache.startRevision).toBe(await store.currentRevision());
    expect(cache.snapshot().items.map((v) => v.key)).toEqual([key('b')]);
    // The cache never saw these changes: src/resource/reads.ts sends such a watch to storage.
    expect(
      cache.openWatcher({
        scope: { prefix: PREFIX, selection: everything },
        from: first.revision,
        initialEvents: false,
        initialEventsEnd: false,
        bookmarks: false,
        kind: 'ConfigMap',
        apiVersion: 'v1',
      }),
    ).toBe('expired');
    const w = open(cache, cache.startRevision);
    const p = take(w, 1);
    await store.create(key('c'), cm('c'));
    expect((await p).map((e) => `${e.type}:${String(e.object.metadata['name'])}`)).toEqual(['ADDED:c']);
    w.end();
  });
});
