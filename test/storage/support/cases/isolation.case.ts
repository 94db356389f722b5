/**
 * Two prefixes over one store: each sees only its own keys, events and tokens, while revisions
 * stay the store's one counter. And, for shared backends, a second client sees the first's writes.
 */
import { describe, expect, it } from 'vitest';
import { InvalidContinueError, NotFoundError } from '../../../../storage/errors.js';
import type { Store } from '../../../../storage/interface.js';
import { prefixed } from '../../../../storage/prefixed.js';
import { bytes, expectError, hex } from '../compare.js';
import { uniqueNamespace } from '../factory.js';
import { WatchCollector } from '../watch.js';

/**
 * @param shared the backend's `capabilities.shared` (checked): the cross-client case is declared
 *   only for shared backends, so no case skips at run time.
 * @param openClients two handles on the same data (the same store twice, or two clients of one
 *   etcd); the cases close both.
 */
export function isolationCases(
  name: string,
  shared: boolean,
  openClients: () => Promise<[Store, Store]>,
): void {
  describe(name, () => {
    it('two prefixes over one store see only their own keys, events and tokens', async () => {
      const [one, two] = await openClients();
      const run = uniqueNamespace();
      const a = prefixed(one, `/a-${run}`);
      const b = prefixed(two, `/b-${run}`);
      try {
        expect(one.capabilities.shared, 'capabilities.shared').toBe(shared);
        const watchA = new WatchCollector(a.watch({ prefix: '' }));
        const watchB = new WatchCollector(b.watch({ prefix: '' }));
        const revisions: bigint[] = [];
        for (const [i, key] of ['x', 'y', 'x/1', 'z'].entries()) {
          revisions.push((await a.create(key, bytes(`a${i}`))).revision);
          revisions.push((await b.create(key, bytes(`b${i}`))).revision);
        }
        // One revision counter under both prefixes.
        expect(revisions).toEqual(revisions.map((_, i) => (revisions[0] ?? 0n) + BigInt(i)));
        await b.create('only-b', bytes('b'));
        const listA = await a.range({ prefix: '' });
        const listB = await b.range({ prefix: '' });
        expect(listA.items.map((kv) => [kv.key, hex(kv.value)])).toEqual(
          [
            ['x', 'a0'],
            ['x/1', 'a2'],
            ['y', 'a1'],
            ['z', 'a3'],
          ].map(([k, v]) => [k, hex(bytes(v ?? ''))]),
        );
        expect(listB.items.map((kv) => kv.key)).toEqual(['only-b', 'x', 'x/1', 'y', 'z']);
        expect((await a.get('only-b')).kv).toBeUndefined();
        await expectError(a.delete('only-b'), NotFoundError, { key: 'only-b' });
        const tokenA = (await a.range({ prefix: '' }, { limit: 1 })).continue ?? 'missing';
        await expectError(b.range({ prefix: '' }, { continue: tokenA }), InvalidContinueError);
        const last = await a.currentRevision();
        expect(await watchA.caughtUp(last)).toBe(true);
        expect(await watchB.caughtUp(last)).toBe(true);
        // etcd before 3.4.31 may answer a progress request ahead of a new watcher's replay
        // (etcd-io/etcd#15220): give the events a moment before comparing them exactly.
        await watchA.until(() => watchA.changes.length >= 4, 'the four changes under prefix A', 5_000);
        await watchB.until(() => watchB.changes.length >= 5, 'the five changes under prefix B', 5_000);
        expect(watchA.changes.map((e) => (e.type === 'progress' ? '' : e.kv.key))).toEqual([
          'x',
          'y',
          'x/1',
          'z',
        ]);
        expect(watchB.changes.map((e) => (e.type === 'progress' ? '' : e.kv.key))).toEqual([
          'x',
          'y',
          'x/1',
          'z',
          'only-b',
        ]);
        await watchA.close();
        await watchB.close();
      } finally {
        await a.close();
        await b.close();
      }
    });

    if (!shared) return;
    it("a write through one client appears in the other client's reads and watches (shared backends)", async () => {
      const [one, two] = await openClients();
      try {
        const ns = uniqueNamespace();
        const watch = new WatchCollector(two.watch({ prefix: ns }));
        const written = await one.create(`${ns}k`, bytes('v'));
        expect((await watch.changesAtLeast(1)).map((e) => e.revision)).toEqual([written.revision]);
        expect((await two.get(`${ns}k`)).kv?.modRevision).toBe(written.revision);
        expect(await two.currentRevision()).toBeGreaterThanOrEqual(written.revision);
        await watch.close();
      } finally {
        await one.close();
        await two.close();
      }
    });
  });
}
