/**
 * Watch progress on a real etcd (Debian's 3.4.23 answers progress requests out of band, see
 * `storage/etcd/server-version.ts`): requested and periodic progress events, and the ordering
 * promise under concurrent writes: no event ever follows a progress event at or above its
 * revision, and every event arrives once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompactedError } from '../../../storage/errors.js';
import type { Store, Watch, WatchEvent } from '../../../storage/interface.js';
import { openEtcdStore } from '../../../storage/etcd/index.js';
import { startEtcd, type LocalEtcd } from '../../../tools/etcd-local.js';
import { execFileSync } from 'node:child_process';
import { progressIsOrdered } from '../../../storage/etcd/server-version.js';
import { ETCD_BINARY } from '../../../tools/etcd-local.js';
import { bytes, runEtcdTests, text, waitFor } from './support.js';

/** The version of the etcd binary the tests start (e.g. `3.4.23`). */
function etcdVersion(): string | undefined {
  const out = execFileSync(ETCD_BINARY, ['--version'], { encoding: 'utf8' });
  return /etcd Version: (\S+)/.exec(out)?.[1];
}

function collect(watch: Watch): { events: WatchEvent[]; done: Promise<unknown> } {
  const events: WatchEvent[] = [];
  const done = (async () => {
    try {
      for await (const event of watch) events.push(event);
      return undefined;
    } catch (err) {
      return err;
    }
  })();
  return { events, done };
}

/** Throws unless revisions never go back and no change follows a progress at or above it. */
function checkOrder(events: readonly WatchEvent[]): void {
  let last = 0n;
  let progress = 0n;
  for (const [i, event] of events.entries()) {
    if (event.revision < last) throw new Error(`event ${i} at ${event.revision} goes back from ${last}`);
    if (event.type !== 'progress' && event.revision <= progress) {
      throw new Error(`event ${i} at ${event.revision} follows progress at ${progress}`);
    }
    if (event.type === 'progress') progress = event.revision;
    last = event.revision;
  }
}

describe.runIf(runEtcdTests)('etcd watch progress', () => {
  let etcd: LocalEtcd;
  let store: Store;
  let n = 0;
  const ns = (): string => `/watch/${++n}/`;

  beforeAll(async () => {
    etcd = await startEtcd();
    store = await openEtcdStore({ endpoints: etcd.endpoints });
  });
  afterAll(async () => {
    await store?.close();
    await etcd?.stop();
  });

  it('answers requestProgress on an idle watch with the current revision', async () => {
    const p = ns();
    await store.create(`/elsewhere${p}`, bytes('x'));
    const current = await store.currentRevision();
    const w = store.watch({ prefix: p });
    const c = collect(w);
    w.requestProgress();
    await waitFor(() => c.events.some((e) => e.type === 'progress'), 'a progress event');
    expect(c.events[0]).toEqual({ type: 'progress', revision: current });
    w.close();
    expect(await c.done).toBeUndefined();
  });

  it('emits progress after the events it covers', async () => {
    const p = ns();
    const w = store.watch({ prefix: p });
    const c = collect(w);
    const a = await store.create(`${p}a`, bytes('x'));
    const b = await store.create(`${p}b`, bytes('y'));
    w.requestProgress();
    await waitFor(() => c.events.some((e) => e.type === 'progress'), 'a progress event');
    await waitFor(() => c.events.filter((e) => e.type !== 'progress').length >= 2, 'both changes');
    const progress = c.events.find((e) => e.type === 'progress');
    expect(progress?.revision).toBeGreaterThanOrEqual(b.revision);
    const changes = c.events.filter((e) => e.type !== 'progress');
    expect(changes.map((e) => e.revision)).toEqual([a.revision, b.revision]);
    // etcd before 3.4.31 / 3.5.13 may answer a progress request ahead of the events it covers
    // (etcd-io/etcd#15220); the backend's double check makes that rare, not impossible, so the
    // strict order is asserted only where etcd guarantees it.
    if (progressIsOrdered(etcdVersion())) checkOrder(c.events);
    w.close();
  });

  it('keeps progress behind no event while writes race with requests', async () => {
    const p = ns();
    const w = store.watch({ prefix: p });
    const c = collect(w);
    w.requestProgress();
    await waitFor(() => c.events.length > 0, 'the watch to answer'); // then writes race with requests
    const written: bigint[] = [];
    const writers = Array.from({ length: 4 }, async (_, t) => {
      for (let i = 0; i < 60; i++) written.push((await store.create(`${p}${t}/${i}`, bytes('v'))).revision);
    });
    const asking = (async () => {
      while (written.length < 240) {
        w.requestProgress();
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      }
    })();
    await Promise.all([...writers, asking]);
    const last = await store.currentRevision();
    await waitFor(() => {
      w.requestProgress();
      return c.events.some((e) => e.type === 'progress' && e.revision >= last);
    }, 'progress past the last write');
    expect(c.events.filter((e) => e.type === 'progress').length).toBeGreaterThan(1);
    checkOrder(c.events);
    expect(c.events.filter((e) => e.type !== 'progress').map((e) => e.revision)).toEqual(
      [...written].sort((x, y) => (x < y ? -1 : 1)),
    );
    w.close();
  });

  it('a watch from a past revision reports progress only after its replay', async () => {
    const p = ns();
    const first = await store.create(`${p}a`, bytes('1'));
    for (let i = 0; i < 20; i++) await store.create(`${p}k${i}`, bytes('x'));
    const last = await store.currentRevision();
    const w = store.watch({ prefix: p }, { fromRevision: first.revision });
    w.requestProgress();
    const c = collect(w);
    await waitFor(() => c.events.some((e) => e.type === 'progress'), 'a progress event');
    expect(c.events.filter((e) => e.type !== 'progress')).toHaveLength(21);
    expect(c.events.find((e) => e.type === 'progress')?.revision).toBeGreaterThanOrEqual(last);
    checkOrder(c.events);
    w.close();
  });

  it('a compaction at exactly the start of a replaying watch never drops a delete silently', async () => {
    // etcd deletes a tombstone at the compacted revision itself and only reports "compacted" to
    // watchers starting strictly below it; a watcher created at that revision but not yet
    // replayed used to miss the delete with no error. Either outcome below is the contract's.
    for (let round = 0; round < 20; round++) {
      const p = ns();
      await store.create(`${p}a`, bytes('x'));
      const deleted = await store.delete(`${p}a`);
      const w = store.watch({ prefix: p }, { fromRevision: deleted.revision });
      const c = collect(w);
      let ended = false;
      void c.done.then(() => (ended = true));
      await store.compact(deleted.revision);
      const current = await store.currentRevision();
      await waitFor(() => {
        w.requestProgress();
        return ended || c.events.some((e) => e.type !== 'progress' || e.revision >= current);
      }, 'the delete, progress past it, or the end of the watch');
      w.close();
      const error = await c.done;
      const changes = c.events.filter((e) => e.type !== 'progress');
      if (error === undefined) {
        expect(
          changes.map((e) => [e.type, e.revision]),
          `round ${round}`,
        ).toEqual([['delete', deleted.revision]]);
      } else {
        expect(error, `round ${round}`).toBeInstanceOf(CompactedError);
        expect(changes, `round ${round}`).toEqual([]);
      }
    }
  });

  it('replays more than one etcd batch (1,000 revisions) without losing the rest', async () => {
    // etcd sends a long replay in batches of at most 1,000 revisions, each stamped with the
    // server's revision rather than the revision the batch reached.
    const p = ns();
    const first = await store.create(`${p}k0`, bytes('x'));
    const written = [first.revision];
    for (let i = 1; i < 1_200; i += 40) {
      const batch = await Promise.all(
        Array.from({ length: 40 }, (_, j) => store.create(`${p}k${i + j}`, bytes('x'))),
      );
      written.push(...batch.map((r) => r.revision));
    }
    const w = store.watch({ prefix: p }, { fromRevision: first.revision });
    const c = collect(w);
    await waitFor(() => c.events.length >= written.length, `${written.length} events`, 20_000);
    const late = await store.create(`${p}late`, bytes('y'));
    await waitFor(() => c.events.some((e) => e.revision === late.revision), 'the write after the replay');
    const revisions = c.events.filter((e) => e.type !== 'progress').map((e) => e.revision);
    expect(revisions).toEqual([...written.sort((x, y) => (x < y ? -1 : 1)), late.revision]);
    w.close();
  });

  it('a watch created while writes land reports no progress ahead of its events', async () => {
    // etcd stamps a new watcher's `created` answer with the revision it read before registering
    // the watcher: writes in between leave the watcher replaying though the stamp says otherwise.
    for (let round = 0; round < 10; round++) {
      const p = ns();
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing && i < 200; i++) await store.create(`${p}${i}`, bytes('v'));
      })();
      await new Promise((resolve) => setTimeout(resolve, 5));
      const w = store.watch({ prefix: p });
      const c = collect(w);
      for (let i = 0; i < 20; i++) {
        w.requestProgress();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      writing = false;
      await writer;
      const last = await store.currentRevision();
      await waitFor(() => {
        w.requestProgress();
        return c.events.some((e) => e.type === 'progress' && e.revision >= last);
      }, 'progress past the last write');
      w.close();
      try {
        checkOrder(c.events);
      } catch (err) {
        throw new Error(`round ${round}: ${(err as Error).message}`);
      }
    }
  });

  it('emits progress on its own while idle with progressIntervalMs', async () => {
    const p = ns();
    const current = await store.currentRevision();
    const w = store.watch({ prefix: p }, { progressIntervalMs: 100 });
    const c = collect(w);
    await waitFor(
      () => c.events.filter((e) => e.type === 'progress').length >= 2,
      'two periodic progress events',
    );
    expect(c.events.every((e) => e.type === 'progress' && e.revision >= current)).toBe(true);
    w.close();
  });

  it('an empty span delivers no change but answers progress', async () => {
    const p = ns();
    const w = store.watch({ start: `${p}b`, end: `${p}a` });
    const c = collect(w);
    await store.create(`${p}a`, bytes('x'));
    const current = await store.currentRevision();
    await waitFor(() => {
      w.requestProgress();
      return c.events.some((e) => e.type === 'progress' && e.revision >= current);
    }, 'progress on an empty span');
    expect(c.events.every((e) => e.type === 'progress')).toBe(true);
    w.close();
  });

  it('a watch without previous values gets the same changes, with no previous value but the key', async () => {
    const p = ns();
    const withPrev = store.watch({ prefix: p });
    const without = store.watch({ prefix: p }, { previousValues: false });
    const a = collect(withPrev);
    const b = collect(without);
    await store.create(`${p}k`, bytes('one'));
    const read = await store.get(`${p}k`);
    await store.update(`${p}k`, bytes('two'), { ifModRevision: read.kv?.modRevision ?? 0n });
    await store.delete(`${p}k`);
    await waitFor(() => a.events.length >= 3 && b.events.length >= 3, 'three events on each watch');
    const strip = (e: WatchEvent): unknown =>
      e.type === 'progress'
        ? e
        : { type: e.type, revision: e.revision, key: e.kv.key, value: text(e.kv.value) };
    expect(b.events.map(strip)).toEqual(a.events.map(strip));
    // With them: the update's and the delete's previous values. Without: none, and the key alone.
    const [, update, deleted] = a.events;
    expect(update?.type === 'put' ? text(update.prevKv?.value ?? new Uint8Array()) : '').toBe('one');
    expect(deleted?.type === 'delete' ? text(deleted.prevKv.value) : '').toBe('two');
    const [, update2, deleted2] = b.events;
    expect(update2?.type === 'put' ? update2.prevKv : 'not a put').toBeUndefined();
    if (deleted2?.type !== 'delete') throw new Error('the third event is not a delete');
    const { key, value, createRevision, modRevision, lease } = deleted2.prevKv;
    expect({ key, value: value.byteLength, createRevision, modRevision, lease }).toEqual({
      key: `${p}k`,
      value: 0,
      createRevision: 0n,
      modRevision: 0n,
      lease: 0n,
    });
    withPrev.close();
    without.close();
  });

  it('closing the store ends its watches', async () => {
    const own = await openEtcdStore({ endpoints: etcd.endpoints });
    const c = collect(own.watch({ prefix: ns() }));
    await own.close();
    expect(await c.done).toBeUndefined();
  });
});
