/**
 * Compaction exactly as the interface module comment states it: reads at or after the compacted
 * revision see what they saw before; older reads, watches and continue tokens are CompactedError.
 */
import { describe, expect, it } from 'vitest';
import { CompactedError, RevisionTooLargeError } from '../../../../storage/errors.js';
import type { Store } from '../../../../storage/interface.js';
import { bytes, expectError, plainEvent, plainKv, plainRange } from '../compare.js';
import { useStores, withDeadline, type StoreFactory } from '../factory.js';
import { WatchCollector } from '../watch.js';

interface History {
  store: Store;
  k: (name: string) => string;
  /** Revisions of the writes, in order. */
  r: bigint[];
}

export function compactionCases(factory: StoreFactory): void {
  const stores = useStores(factory);

  /** a: created r0, updated r2; b: created r1, deleted r3; c: created r4; d: created r5. */
  async function history(): Promise<History> {
    const { store, k } = await stores.open();
    const a = await store.create(k('a'), bytes('a1'));
    const b = await store.create(k('b'), bytes('b1'));
    const a2 = await store.update(k('a'), bytes('a2'), { ifModRevision: a.revision });
    const bd = await store.delete(k('b'));
    const c = await store.create(k('c'), bytes('c1'));
    const d = await store.create(k('d'), bytes('d1'));
    return { store, k, r: [a, b, a2, bd, c, d].map((w) => w.revision) };
  }

  const at = (r: bigint[], i: number): bigint => r[i] ?? -1n;

  describe('compaction', () => {
    it('keeps every read at or after the compacted revision exactly as it was', async () => {
      const { store, k, r } = await history();
      const R = at(r, 4);
      const snapshot = async (): Promise<unknown[]> => [
        plainRange(await store.range({ prefix: k('') }, { revision: R })),
        plainRange(await store.range({ prefix: k('') }, { revision: at(r, 5) })),
        plainRange(await store.range({ prefix: k('') })),
        plainKv((await store.get(k('a'), { revision: R })).kv),
        plainKv((await store.get(k('b'), { revision: R })).kv),
        plainKv((await store.get(k('c'), { revision: R })).kv),
      ];
      const before = await snapshot();
      const current = await store.currentRevision();
      await store.compact(R);
      expect(await store.compactedRevision()).toBe(R);
      expect(await store.currentRevision()).toBe(current); // compaction is not a write
      expect(await snapshot()).toEqual(before);
      expect((await store.get(k('a'), { revision: R })).kv?.modRevision).toBe(at(r, 2));
    });

    it('rejects reads before the compacted revision with CompactedError and its fields', async () => {
      const { store, k, r } = await history();
      const R = at(r, 4);
      await store.compact(R);
      const fields = { code: 'STORAGE_COMPACTED', requestedRevision: R - 1n, compactedRevision: R };
      await expectError(store.get(k('a'), { revision: R - 1n }), CompactedError, fields);
      await expectError(store.range({ prefix: k('') }, { revision: R - 1n }), CompactedError, fields);
      await expectError(store.get(k('a'), { revision: at(r, 0) }), CompactedError, {
        requestedRevision: at(r, 0),
        compactedRevision: R,
      });
    });

    it('above the current revision is RevisionTooLargeError; at or below the compacted one a no-op', async () => {
      const { store, k, r } = await history();
      const current = await store.currentRevision();
      await expectError(store.compact(current + 1n), RevisionTooLargeError, {
        requestedRevision: current + 1n,
        currentRevision: current,
      });
      await store.compact(at(r, 3));
      await store.compact(at(r, 3));
      await store.compact(at(r, 1));
      expect(await store.compactedRevision()).toBe(at(r, 3));
      expect((await store.get(k('a'), { revision: at(r, 3) })).kv?.modRevision).toBe(at(r, 2));
      await store.compact(current);
      expect(await store.compactedRevision()).toBe(current);
      expect((await store.range({ prefix: k('') })).items.map((kv) => kv.key)).toEqual([
        k('a'),
        k('c'),
        k('d'),
      ]);
      const next = await store.create(k('e'), bytes('e'));
      expect(next.revision).toBe(current + 1n);
    });

    it('watches from after the compacted revision replay; from before it are CompactedError', async () => {
      const { store, k, r } = await history();
      const R = at(r, 3);
      await store.compact(R);
      const replay = new WatchCollector(store.watch({ prefix: k('') }, { fromRevision: R + 1n }));
      const events = await replay.changesAtLeast(2);
      expect(events.map(plainEvent)).toEqual([
        { type: 'put', revision: at(r, 4), kv: plainKv((await store.get(k('c'))).kv), prevKv: undefined },
        { type: 'put', revision: at(r, 5), kv: plainKv((await store.get(k('d'))).kv), prevKv: undefined },
      ]);
      await replay.close();
      const stale = store.watch({ prefix: k('') }, { fromRevision: R - 1n });
      const failed = withDeadline(stale[Symbol.asyncIterator]().next(), 'a compacted watch to fail');
      await expectError(failed, CompactedError, { code: 'STORAGE_COMPACTED', compactedRevision: R });
      stale.close();
    });

    // On a store that starts at 0 too: revision 0 is older than the retained history.
    if (stores.canOpenFresh)
      it('a watch from the initial revision fails once the first write is the compacted revision', async () => {
        const store = await stores.openFresh();
        const initial = await store.currentRevision();
        const first = await store.create('first', bytes('x'));
        await store.compact(first.revision);
        const stale = store.watch({ prefix: '' }, { fromRevision: initial });
        const failed = withDeadline(stale[Symbol.asyncIterator]().next(), 'a compacted watch to fail');
        await expectError(failed, CompactedError, {
          requestedRevision: initial,
          compactedRevision: first.revision,
        });
        stale.close();
      });

    it('continue tokens older than the compacted revision are CompactedError; at it they still work', async () => {
      const { store, k, r } = await history();
      const first = await store.range({ prefix: k('') }, { limit: 1 });
      const token = first.continue ?? 'missing';
      await store.create(k('z'), bytes('later'));
      await store.compact(first.revision);
      const second = await store.range({ prefix: k('') }, { limit: 1, continue: token });
      expect(second.revision).toBe(first.revision);
      expect(second.items.map((kv) => kv.key)).toEqual([k('c')]);
      await store.compact(first.revision + 1n);
      await expectError(store.range({ prefix: k('') }, { limit: 1, continue: token }), CompactedError, {
        requestedRevision: at(r, 5),
        compactedRevision: first.revision + 1n,
      });
    });
  });
}
