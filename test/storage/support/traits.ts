/**
 * Trait checks run on a fresh, an open and a reopened store: the same assertions at each stage
 * of a store's life, comparing it with the reference model of what was written.
 */
import { expect } from 'vitest';
import type { KeySpan, Store } from '../../../storage/interface.js';
import type { StoreModel } from '../model.js';
import { bytes, plainEvent, plainRange } from './compare.js';
import { WatchCollector } from './watch.js';

/** A never-written store: revision 0 or 1, nothing compacted, no keys, writes start right after. */
export async function expectFreshStore(store: Store): Promise<void> {
  const current = await store.currentRevision();
  expect([0n, 1n]).toContain(current);
  expect(await store.compactedRevision()).toBe(0n);
  await store.checkHealth();
  const all = await store.range({ prefix: '' });
  expect(plainRange(all)).toEqual({ items: [], revision: current, count: 0, more: false });
  const watch = new WatchCollector(store.watch({ prefix: '' }));
  const first = await store.create('fresh', bytes('x'));
  expect(first.revision).toBe(current + 1n);
  expect(first.kv.createRevision).toBe(current + 1n);
  expect((await watch.changesAtLeast(1)).map((e) => e.revision)).toEqual([current + 1n]);
  await watch.close();
}

/**
 * `store` holds what `model` says under `span`: the same revisions, and at every retained
 * revision the same range and the same watch history.
 */
export async function expectMatchesModel(store: Store, model: StoreModel, span: KeySpan): Promise<void> {
  expect(await store.currentRevision()).toBe(model.revision);
  expect(await store.compactedRevision()).toBe(model.compacted);
  const oldest = model.writes[0]?.revision ?? model.revision;
  const from = model.compacted > oldest ? model.compacted : oldest;
  for (let revision = from; revision <= model.revision; revision++) {
    const actual = plainRange(await store.range(span, { revision }));
    expect(actual, `range at revision ${revision}`).toEqual(plainRange(model.range(span, { revision })));
  }
  const watchFrom = model.compacted + 1n > oldest ? model.compacted + 1n : oldest;
  const watch = new WatchCollector(store.watch(span, { fromRevision: watchFrom }));
  expect(await watch.caughtUp(model.revision)).toBe(true);
  expect(watch.changes.map(plainEvent)).toEqual(model.events(span, watchFrom).map(plainEvent));
  await watch.close();
  await store.checkHealth();
}
