/**
 * Compaction: history before the compacted revision becomes unreadable, everything at or
 * after it reads as before, and the disk space of the dropped versions and records is
 * reclaimed (including after a crash in the middle of reclaiming).
 */
import { ClassicLevel } from 'classic-level';
import { MemoryLevel } from 'memory-level';
import { afterEach, describe, expect, it } from 'vitest';
import { CompactedError, RevisionTooLargeError } from '../../../storage/errors.js';
import type { Store } from '../../../storage/interface.js';
import { openLevelStore, openMemoryStore } from '../../../storage/mvcc/index.js';
import { tempDir } from './support.js';

/** The one method `families` needs, so any level of any encodings fits. */
interface KeyLister {
  keys(range: { gte: Buffer; lt: Buffer }): { all(): Promise<unknown[]> };
}

/** Entries per key family of the engine's layout (k versions, r log records). */
async function families(db: KeyLister): Promise<{ versions: number; records: number }> {
  const count = async (prefix: string): Promise<number> => {
    const gte = Buffer.from(prefix);
    const lt = Buffer.of((gte[0] as number) + 1);
    return (await db.keys({ gte, lt }).all()).length;
  };
  return { versions: await count('k'), records: await count('r') };
}

/** Ten keys written twenty times, two of them deleted, then a new key (no prev version). */
async function churn(store: Store, size = 16): Promise<bigint> {
  const value = Buffer.alloc(size, 1);
  for (let k = 0; k < 10; k++) {
    let rev = (await store.create(`c/${k}`, value)).revision;
    for (let i = 1; i < 20; i++) rev = (await store.update(`c/${k}`, value, { ifModRevision: rev })).revision;
  }
  await store.delete('c/3');
  await store.delete('c/7');
  return (await store.create('c/new', value)).revision;
}

const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

describe('compaction', () => {
  it('drops unreachable versions and records; reads at or after the revision are unchanged', async () => {
    const memoryLevel = new MemoryLevel<Buffer, Buffer>({ keyEncoding: 'buffer', valueEncoding: 'buffer' });
    const store = await openMemoryStore({ memoryLevel, compactionChunk: 7 });
    open.push(store);
    const last = await churn(store);
    expect(await families(memoryLevel)).toEqual({ versions: 203, records: 203 });
    const middle = last - 30n;
    const atMiddle = await store.range({ prefix: 'c/' }, { revision: middle });
    const atLast = await store.range({ prefix: 'c/' });

    await store.compact(middle);
    expect(await store.compactedRevision()).toBe(middle);
    expect(await store.range({ prefix: 'c/' }, { revision: middle })).toEqual(atMiddle);
    await expect(store.get('c/0', { revision: middle - 1n })).rejects.toBeInstanceOf(CompactedError);
    const watchOld = store.watch({ prefix: 'c/' }, { fromRevision: middle - 1n });
    await expect(watchOld[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(CompactedError);
    // A watch from exactly the compacted revision still replays it, prevKv included.
    const watchAt = store.watch({ prefix: 'c/' }, { fromRevision: middle });
    const first = await watchAt[Symbol.asyncIterator]().next();
    watchAt.close();
    expect(first.value).toMatchObject({ revision: middle, prevKv: { modRevision: middle - 1n } });

    await store.compact(last);
    expect(await store.range({ prefix: 'c/' })).toEqual(atLast);
    // One version per live key; the only record left is the one at the compacted revision.
    expect(await families(memoryLevel)).toEqual({ versions: 9, records: 1 });
    await store.compact(middle); // older than the compacted revision: a no-op
    await expect(store.compact(last + 1n)).rejects.toBeInstanceOf(RevisionTooLargeError);
  });

  it('finishes reclaiming after a restart when a crash interrupted it', async () => {
    const memoryLevel = new MemoryLevel<Buffer, Buffer>({ keyEncoding: 'buffer', valueEncoding: 'buffer' });
    const first = await openMemoryStore({ memoryLevel });
    const last = await churn(first);
    await first.close();
    // What a crash right after recording the compaction leaves: the mark, nothing reclaimed.
    const mark = Buffer.alloc(8);
    mark.writeBigUInt64BE(last);
    await memoryLevel.open();
    await memoryLevel.put(Buffer.from('mcompacted'), mark);
    await memoryLevel.close();

    const second = await openMemoryStore({ memoryLevel });
    open.push(second);
    expect(await second.compactedRevision()).toBe(last);
    await second.compact(last); // waits for the background pass
    expect(await families(memoryLevel)).toEqual({ versions: 9, records: 1 });
    expect((await second.range({ prefix: 'c/' })).count).toBe(9);
  });

  it('reclaims LevelDB disk space', async () => {
    const dir = await tempDir();
    try {
      const store = await openLevelStore(dir.path);
      const last = await churn(store, 4096);
      await store.compact(last);
      await store.close();
      const db = new ClassicLevel<Buffer, Buffer>(dir.path, {
        keyEncoding: 'buffer',
        valueEncoding: 'buffer',
      });
      await db.open();
      try {
        expect(await families(db)).toEqual({ versions: 9, records: 1 });
        // compactRange rewrote the tables: about 9 values of 4 KiB remain, not 200.
        const size = await db.approximateSize(Buffer.from('k'), Buffer.from('l'));
        expect(size).toBeLessThan(50 * 4096);
      } finally {
        await db.close();
      }
    } finally {
      await dir.remove();
    }
  });
});
