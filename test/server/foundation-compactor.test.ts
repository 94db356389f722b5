/**
 * The compactor keeps one interval of history and coordinates several servers through
 * `compact_rev_key`, as kube-apiserver does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../storage/interface.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { COMPACT_REV_KEY, startCompactor, type Compactor } from '../../src/server/compactor.js';

const stores: Store[] = [];
const compactors: Compactor[] = [];
afterEach(async () => {
  await Promise.all(compactors.splice(0).map((c) => c.stop()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

async function store(): Promise<Store> {
  const s = await openMemoryStore();
  stores.push(s);
  return s;
}

function compactor(s: Store, errors: unknown[] = []): Compactor {
  const c = startCompactor(s, 0, (_m, e) => errors.push(e));
  compactors.push(c);
  return c;
}

async function write(s: Store, n: number): Promise<bigint> {
  let rev = 0n;
  for (let i = 0; i < n; i++)
    rev = (
      await s.txn({ key: `/k/${i}`, ifModRevision: undefined, then: { op: 'put', value: Buffer.from('v') } })
    ).revision;
  return rev;
}

describe('compactor', () => {
  it('compacts to the revision recorded one tick earlier', async () => {
    const s = await store();
    const errors: unknown[] = [];
    const c = compactor(s, errors);
    await write(s, 3);
    await c.tick(); // records the current revision, compacts nothing
    expect(await s.compactedRevision()).toBe(0n);
    const recorded = BigInt((await s.get(COMPACT_REV_KEY)).kv?.modRevision ?? -1n);
    await write(s, 3);
    await c.tick(); // compacts to the revision of the first tick
    expect(await s.compactedRevision()).toBe(recorded);
    // History after the compacted revision is still readable.
    await expect(s.get('/k/0', { revision: recorded })).resolves.toBeDefined();
    expect(errors).toEqual([]);
  });

  it('lets only one of several servers compact per interval', async () => {
    const s = await store();
    const errors: unknown[] = [];
    const a = compactor(s, errors);
    const b = compactor(s, errors);
    await write(s, 2);
    await a.tick(); // a writes the key
    await b.tick(); // b sees a foreign key: adopts its state
    const afterFirstRound = (await s.get(COMPACT_REV_KEY)).kv?.modRevision;
    await write(s, 2);
    await b.tick(); // b is current now: b wins and compacts to what it adopted
    const compacted = await s.compactedRevision();
    expect(compacted).toBeGreaterThan(0n);
    expect(compacted).toBeLessThanOrEqual(afterFirstRound ?? 0n);
    await a.tick(); // a lost this round: no second compaction
    expect(await s.compactedRevision()).toBe(compacted);
    expect(errors).toEqual([]);
  });

  it('never compacts with interval 0 unless ticked, and stops cleanly', async () => {
    const s = await store();
    const c = compactor(s);
    await write(s, 2);
    await new Promise((r) => setTimeout(r, 20));
    expect((await s.get(COMPACT_REV_KEY)).kv).toBeUndefined();
    await c.stop();
    await c.tick();
    expect((await s.get(COMPACT_REV_KEY)).kv).toBeUndefined();
  });
});
