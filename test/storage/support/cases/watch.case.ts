/**
 * Watches: event shapes, span filtering, history replay from old and future revisions, progress
 * (requested and periodic), and ending on close.
 */
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../../../storage/errors.js';
import type { WatchEvent } from '../../../../storage/interface.js';
import { bytes, plainEvent, plainKv } from '../compare.js';
import { useStores, withDeadline, type StoreFactory } from '../factory.js';
import { checkWatchOrder, WatchCollector } from '../watch.js';

const EMPTY = '';

export function watchCases(factory: StoreFactory): void {
  const stores = useStores(factory);

  describe('watch', () => {
    it('delivers puts and deletes with prevKv, in revision order', async () => {
      const { store, k } = await stores.open();
      const watch = new WatchCollector(store.watch({ prefix: k('') }));
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.update(k('a'), bytes('v2'), { ifModRevision: c.revision });
      const d = await store.delete(k('a'));
      const events = await watch.changesAtLeast(3);
      expect(events.map(plainEvent)).toEqual([
        { type: 'put', revision: c.revision, kv: plainKv(c.kv), prevKv: undefined },
        { type: 'put', revision: u.revision, kv: plainKv(u.kv), prevKv: plainKv(c.kv) },
        {
          type: 'delete',
          revision: d.revision,
          kv: { key: k('a'), value: EMPTY, modRevision: d.revision },
          prevKv: plainKv(u.kv),
        },
      ]);
      checkWatchOrder(watch.events);
      await watch.close();
    });

    it('without fromRevision sees only writes made after the call, even one made at once', async () => {
      const { store, k } = await stores.open();
      await store.create(k('before'), bytes('x'));
      const watch = new WatchCollector(store.watch({ prefix: k('') }));
      // No await between the call and the write: "current revision + 1 at the time of the call".
      const after = await store.create(k('after'), bytes('y'));
      const events = await watch.changesAtLeast(1);
      expect(events.map((e) => [e.type, e.revision])).toEqual([['put', after.revision]]);
      expect(await watch.caughtUp(after.revision)).toBe(true);
      expect(watch.changes).toHaveLength(1);
      await watch.close();
    });

    it('delivers only keys in its span (prefix and [start, end))', async () => {
      const { store, k } = await stores.open();
      const byPrefix = new WatchCollector(store.watch({ prefix: k('a/') }));
      const byRange = new WatchCollector(store.watch({ start: k('b'), end: k('é') }));
      for (const name of ['a', 'a/1', 'a0', 'b', 'c/x', 'é', '😀', 'a/2'])
        await store.create(k(name), bytes(name));
      const last = await store.currentRevision();
      expect(await byPrefix.caughtUp(last)).toBe(true);
      expect(await byRange.caughtUp(last)).toBe(true);
      expect(byPrefix.changes.map((e) => (e.type === 'progress' ? '' : e.kv.key))).toEqual([
        k('a/1'),
        k('a/2'),
      ]);
      expect(byRange.changes.map((e) => (e.type === 'progress' ? '' : e.kv.key))).toEqual([k('b'), k('c/x')]);
      await byPrefix.close();
      await byRange.close();
    });

    it('from a past revision replays history, then continues live, never repeating', async () => {
      const { store, k } = await stores.open();
      const first = await store.create(k('a'), bytes('1'));
      await store.create(k('b'), bytes('2'));
      await store.update(k('a'), bytes('3'), { ifModRevision: first.revision });
      const watch = new WatchCollector(store.watch({ prefix: k('') }, { fromRevision: first.revision + 1n }));
      await watch.changesAtLeast(2);
      await store.delete(k('b'));
      await store.create(k('c'), bytes('4'));
      const last = await store.currentRevision();
      expect(await watch.caughtUp(last)).toBe(true);
      expect(watch.changes.map((e) => e.revision)).toEqual(
        [2n, 3n, 4n, 5n].map((i) => first.revision + i - 1n),
      );
      checkWatchOrder(watch.events);
      await watch.close();
    });

    it('from a future revision delivers nothing before it', async () => {
      const { store, k } = await stores.open();
      const base = await store.currentRevision();
      const watch = new WatchCollector(store.watch({ prefix: k('') }, { fromRevision: base + 3n }));
      for (const name of ['a', 'b', 'c', 'd']) await store.create(k(name), bytes(name));
      await watch.changesAtLeast(2);
      expect(await watch.caughtUp(base + 4n)).toBe(true);
      expect(watch.changes.map((e) => e.revision)).toEqual([base + 3n, base + 4n]);
      await watch.close();
    });

    it('answers requestProgress with a progress event at or past the current revision', async () => {
      const { store, k } = await stores.open();
      const watch = new WatchCollector(store.watch({ prefix: k('in/') }));
      const inside = await store.create(k('in/a'), bytes('x'));
      await store.create(k('out'), bytes('y'));
      const current = await store.currentRevision();
      await watch.changesAtLeast(1);
      const seen = watch.events.length;
      watch.watch.requestProgress();
      await watch.until(
        () => watch.events.slice(seen).some((e) => e.type === 'progress'),
        'a progress event',
      );
      const progress = watch.events.slice(seen).find((e) => e.type === 'progress');
      expect(progress?.revision).toBeGreaterThanOrEqual(current);
      expect(watch.changes.map((e) => e.revision)).toEqual([inside.revision]);
      checkWatchOrder(watch.events);
      await watch.close();
    });

    it('emits progress events on its own while idle when progressIntervalMs is set', async () => {
      const { store, k } = await stores.open();
      await store.create(k('a'), bytes('x'));
      const current = await store.currentRevision();
      const watch = new WatchCollector(store.watch({ prefix: k('') }, { progressIntervalMs: 100 }));
      await watch.until(
        () => watch.events.some((e) => e.type === 'progress'),
        'a periodic progress event',
        20_000,
      );
      const progress = watch.events.find((e) => e.type === 'progress');
      expect(progress?.revision).toBeGreaterThanOrEqual(current);
      expect(watch.changes).toEqual([]);
      await watch.close();
    });

    it('close ends a pending next(), is idempotent, and leaves other watches running', async () => {
      const { store, k } = await stores.open();
      const closing = store.watch({ prefix: k('') });
      const other = new WatchCollector(store.watch({ prefix: k('') }));
      const iterator = closing[Symbol.asyncIterator]();
      const pending = iterator.next();
      closing.close();
      closing.close();
      expect(await withDeadline(pending, 'next() to end after close()')).toEqual({
        done: true,
        value: undefined,
      });
      expect((await withDeadline(iterator.next(), 'next() after close()')).done).toBe(true);
      const c = await store.create(k('a'), bytes('x'));
      const events: WatchEvent[] = await other.changesAtLeast(1);
      expect(events.map((e) => e.revision)).toEqual([c.revision]);
      await other.close();
    });

    it('ends when the store closes', async () => {
      const { store, k } = await stores.open();
      const watch = new WatchCollector(store.watch({ prefix: k('') }));
      await store.create(k('a'), bytes('x'));
      await watch.changesAtLeast(1);
      await store.close();
      await watch.ended();
      expect(watch.done).toBe(true);
      // It ends by returning; a backend may instead report that it cannot continue.
      if (watch.error !== undefined) expect(watch.error).toBeInstanceOf(UnavailableError);
    });
  });
}
