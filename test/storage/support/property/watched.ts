/**
 * The watches a property run keeps open, checked against the model's history whenever the run
 * settles: every event the model has, in order, nothing else — or, for a watch that fell behind a
 * compaction, a correct prefix ending in a justified CompactedError.
 */
import { expect } from 'vitest';
import { CompactedError } from '../../../../storage/errors.js';
import type { KeySpan } from '../../../../storage/interface.js';
import type { StoreModel } from '../../model.js';
import { plainEvent, plainError } from '../compare.js';
import { checkWatchOrder, type WatchCollector } from '../watch.js';

/** One watch of a property run. */
export interface Watched {
  readonly label: string;
  readonly collector: WatchCollector;
  readonly span: KeySpan;
  /** The first revision it delivers. */
  readonly from: bigint;
  /** The compacted revision when it started, if `from` was already older (it must fail). */
  readonly compactedAtStart: bigint | undefined;
}

/** Waits until `watched` has delivered everything up to the model's revision, then checks it. */
export async function settleWatch(watched: Watched, model: StoreModel): Promise<void> {
  const { collector, label } = watched;
  if (watched.compactedAtStart !== undefined) {
    // A live watch answers progress: then it did not fail, and there is no need to wait longer.
    if (!collector.done) await collector.caughtUp(model.revision);
    expect(plainError(collector.error), `${label}: a watch from a compacted revision`).toMatchObject({
      error: 'CompactedError',
    });
    const err = collector.error as CompactedError;
    expect(
      err.compactedRevision >= watched.compactedAtStart && err.compactedRevision <= model.compacted,
      label,
    ).toBe(true);
    expect(collector.changes, `${label}: no events before CompactedError`).toEqual([]);
    return;
  }
  if (!collector.done) await collector.caughtUp(model.revision);
  const modelEvents = model.events(watched.span, watched.from);
  const expected = modelEvents.map(plainEvent);
  // Old etcd servers can answer a progress request just ahead of the events it covers
  // (etcd-io/etcd#15220): give late events a moment before comparing exactly.
  const last = modelEvents[modelEvents.length - 1]?.revision;
  if (last !== undefined && !collector.done) {
    await collector.until(
      () => collector.changes.some((e) => e.revision >= last),
      `${label}: events up to ${last}`,
      5_000,
    );
  }
  checkWatchOrder(collector.events.filter((e) => e.type !== 'progress'));
  const actual = collector.changes.map(plainEvent);
  if (!collector.done) {
    expect(actual, `${label}: events up to revision ${model.revision}`).toEqual(expected);
    return;
  }
  // It ended: legitimately only by falling behind a compaction, after a correct prefix.
  expect(collector.error, `${label}: ended without close()`).toBeInstanceOf(CompactedError);
  expect(actual, `${label}: events before CompactedError`).toEqual(expected.slice(0, actual.length));
  const position = positionOf(watched);
  const err = collector.error as CompactedError;
  expect(
    // A watch whose next revision is exactly the compacted one is backend-defined (interface.ts):
    // etcd may end it, since a delete made at that revision is gone.
    position <= err.compactedRevision && err.compactedRevision <= model.compacted,
    `${label}: CompactedError(${err.compactedRevision}) at position ${position}, compacted ${model.compacted}`,
  ).toBe(true);
}

/** The next revision the watch had to deliver when it stopped. */
function positionOf(watched: Watched): bigint {
  let position = watched.from;
  for (const event of watched.collector.events) {
    if (event.revision + 1n > position) position = event.revision + 1n;
  }
  return position;
}
