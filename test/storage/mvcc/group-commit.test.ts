/**
 * Group commit on LevelDB: concurrent writers share synced batches, each batch is one atomic
 * LevelDB write, and revisions stay contiguous and in acknowledgement order.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../storage/interface.js';
import { openLevelStore, type BatchInfo } from '../../../storage/mvcc/index.js';
import { tempDir } from './support.js';

let dir: { path: string; remove: () => Promise<void> };
let store: Store | undefined;
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await store?.close();
  store = undefined;
  await dir.remove();
});

describe('group commit', () => {
  it('shares one synced batch among many concurrent writers', async () => {
    const batches: BatchInfo[] = [];
    store = await openLevelStore(dir.path, { onBatchWritten: (info) => batches.push(info) });
    const s = store;
    const writers = 128;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        s.create(`k/${String(i).padStart(3, '0')}`, Buffer.from(`v${i}`)),
      ),
    );
    const revisions = results.map((r) => r.revision).sort((a, b) => (a < b ? -1 : 1));
    expect(revisions).toEqual(Array.from({ length: writers }, (_, i) => 2n + BigInt(i)));
    const writeBatches = batches.filter((b) => b.writes > 0);
    expect(writeBatches.reduce((n, b) => n + b.writes, 0)).toBe(writers);
    // All 128 were issued in one turn of the event loop: they share a single sync.
    expect(writeBatches).toHaveLength(1);
    expect((await s.range({ prefix: 'k/' }, { countOnly: true })).count).toBe(writers);
  });

  it('keeps batching while a batch is being written, and writers see their own revisions', async () => {
    const batches: BatchInfo[] = [];
    store = await openLevelStore(dir.path, {
      onBatchWritten: (info) => batches.push(info),
      maxBatchWrites: 16,
    });
    const s = store;
    // 32 writers each doing 20 sequential updates of their own key.
    const writers = 32;
    const rounds = 20;
    const seen: bigint[] = [];
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        let rev = (await s.create(`w/${w}`, Buffer.from('0'))).revision;
        seen.push(rev);
        for (let i = 1; i < rounds; i++) {
          const result = await s.update(`w/${w}`, Buffer.from(String(i)), { ifModRevision: rev });
          expect(result.revision).toBeGreaterThan(rev);
          rev = result.revision;
          seen.push(rev);
        }
      }),
    );
    const total = writers * rounds;
    expect(new Set(seen).size).toBe(total);
    expect(await s.currentRevision()).toBe(1n + BigInt(total));
    const writeBatches = batches.filter((b) => b.writes > 0);
    expect(writeBatches.every((b) => b.writes <= 16)).toBe(true);
    // Far fewer syncs than writes.
    expect(writeBatches.length).toBeLessThan(total / 4);
  });

  it('acknowledges a write only once it is readable at the returned revision', async () => {
    store = await openLevelStore(dir.path);
    const s = store;
    const pending = Array.from({ length: 50 }, (_, i) => s.create(`r/${i}`, Buffer.from('x')));
    const checks = pending.map(async (p) => {
      const { revision, kv } = await p;
      expect(await s.currentRevision()).toBeGreaterThanOrEqual(revision);
      expect((await s.get(kv.key, { revision })).kv?.modRevision).toBe(revision);
    });
    await Promise.all(checks);
  });
});
