/**
 * Watches as cursors over the log: a consumer that stops reading never blocks writers or other
 * watchers and later catches up from disk, in order, without gaps or repeats; progress events;
 * close; compaction overtaking a lagging watcher.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CompactedError } from '../../../storage/errors.js';
import type { Store, Watch, WatchEvent } from '../../../storage/interface.js';
import { openMemoryStore } from '../../../storage/mvcc/index.js';

let store: Store;
afterEach(async () => {
  await store.close();
});

async function take(watch: Watch, n: number, skipProgress = true): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  if (n === 0) return events;
  for await (const event of watch) {
    if (skipProgress && event.type === 'progress') continue;
    events.push(event);
    if (events.length === n) break;
  }
  return events;
}

describe('watch', () => {
  it('lets writers run ahead of a stalled watcher, which then catches up from disk in order', async () => {
    store = await openMemoryStore({ recentEntries: 64, recentBytes: 64 * 1024 });
    const stalled = store.watch({ prefix: 'w/' });
    const live = store.watch({ prefix: 'w/' });
    const total = 3000;
    const liveEvents = take(live, total);
    // Twenty writers, each updating its own key: all acknowledged while `stalled` reads nothing.
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        let rev = (await store.create(`w/${w}`, Buffer.from('0'))).revision;
        for (let i = 1; i < total / 20; i++) {
          rev = (await store.update(`w/${w}`, Buffer.from(String(i)), { ifModRevision: rev })).revision;
        }
      }),
    );
    expect(await store.currentRevision()).toBe(1n + BigInt(total));
    const fast = await liveEvents;
    const slow = await take(stalled, total);
    for (const events of [fast, slow]) {
      expect(events.map((e) => e.revision)).toEqual(Array.from({ length: total }, (_, i) => 2n + BigInt(i)));
      for (const event of events) {
        if (event.type !== 'put') throw new Error(`unexpected ${event.type}`);
        const n = Number(Buffer.from(event.kv.value).toString());
        if (n === 0) expect(event.prevKv).toBeUndefined();
        else expect(Buffer.from(event.prevKv?.value ?? []).toString()).toBe(String(n - 1));
      }
    }
    stalled.close();
    live.close();
  });

  it('filters by span in UTF-8 order and starts at the requested revision', async () => {
    store = await openMemoryStore();
    for (const key of ['a', 'b', 'b\u{1f600}', 'b\uffff', 'c']) await store.create(key, Buffer.from(key));
    const watch = store.watch({ start: 'b', end: 'b\u{1f600}' }, { fromRevision: 2n });
    const events = await take(watch, 2);
    watch.close();
    expect(events.map((e) => (e.type === 'progress' ? '' : e.kv.key))).toEqual(['b', 'b\uffff']);
    const future = store.watch({ prefix: '' }, { fromRevision: (await store.currentRevision()) + 2n });
    await store.create('skipped', Buffer.from('x'));
    await store.create('seen', Buffer.from('x'));
    const [event] = await take(future, 1);
    future.close();
    expect(event).toMatchObject({ type: 'put', kv: { key: 'seen' } });
  });

  it('answers a progress request once caught up, and sends progress while idle', async () => {
    store = await openMemoryStore();
    await store.create('x', Buffer.from('1'));
    const watch = store.watch({ prefix: 'p/' }, { fromRevision: 2n });
    await store.create('p/1', Buffer.from('1'));
    watch.requestProgress();
    const events = await take(watch, 2, false);
    expect(events.map((e) => `${e.type}@${e.revision}`)).toEqual(['put@3', 'progress@3']);
    watch.close();
    const idle = store.watch({ prefix: 'p/' }, { progressIntervalMs: 20 });
    const [beat] = await take(idle, 1, false);
    idle.close();
    expect(beat).toEqual({ type: 'progress', revision: 3n });
  });

  it('ends pending and later next() calls when closed', async () => {
    store = await openMemoryStore();
    const watch = store.watch({ prefix: '' });
    const iterator = watch[Symbol.asyncIterator]();
    const pending = iterator.next();
    watch.close();
    watch.close();
    await expect(pending).resolves.toEqual({ done: true, value: undefined });
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
  });

  it('ends open watches when the store closes', async () => {
    store = await openMemoryStore();
    const watch = store.watch({ prefix: '' });
    const pending = watch[Symbol.asyncIterator]().next();
    await store.close();
    await expect(pending).resolves.toMatchObject({ done: true });
  });

  it('throws CompactedError when compaction overtakes a lagging watcher', async () => {
    store = await openMemoryStore({ recentEntries: 4, recentBytes: 1 });
    const watch = store.watch({ prefix: '' });
    const iterator = watch[Symbol.asyncIterator]();
    for (let i = 0; i < 10; i++) await store.create(`k${i}`, Buffer.from('v'));
    await store.compact(8n);
    await expect(iterator.next()).rejects.toBeInstanceOf(CompactedError);
    await expect(iterator.next()).resolves.toMatchObject({ done: true });
  });
});
