/**
 * Restart: reopening rebuilds the in-memory index from disk and resumes at the same revision,
 * with the same compares, history, continue tokens and leases.
 */
import { MemoryLevel } from 'memory-level';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, UnavailableError } from '../../../storage/errors.js';
import type { Store, WatchEvent } from '../../../storage/interface.js';
import { openLevelStore, openMemoryStore } from '../../../storage/mvcc/index.js';
import { tempDir } from './support.js';

let dir: { path: string; remove: () => Promise<void> };
const open: Store[] = [];
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  await dir.remove();
});

async function level(): Promise<Store> {
  const store = await openLevelStore(dir.path);
  open.push(store);
  return store;
}

describe('restart', () => {
  it('resumes at the same revision with the same keys, history and compares', async () => {
    const first = await level();
    const a = await first.create('a', Buffer.from('1'));
    await first.create('b', Buffer.from('2'));
    await first.update('a', Buffer.from('3'), { ifModRevision: a.revision });
    await first.delete('b');
    const page = await first.range({ prefix: '' }, { limit: 1, revision: 3n });
    await first.close();

    const second = await level();
    expect(await second.currentRevision()).toBe(5n);
    expect((await second.get('a')).kv).toMatchObject({ createRevision: 2n, modRevision: 4n });
    expect((await second.get('b')).kv).toBeUndefined();
    expect((await second.get('b', { revision: 3n })).kv?.modRevision).toBe(3n);
    await expect(second.update('a', Buffer.from('x'), { ifModRevision: 2n })).rejects.toBeInstanceOf(
      ConflictError,
    );
    // Continue tokens survive: the secret is persisted.
    const next = await second.range({ prefix: '' }, { limit: 1, continue: page.continue as string });
    expect(next.items.map((kv) => kv.key)).toEqual(['b']);
    // The next write takes the next revision, and history replays across the restart.
    expect((await second.create('c', Buffer.from('4'))).revision).toBe(6n);
    const watch = second.watch({ prefix: '' }, { fromRevision: 2n });
    const events: WatchEvent[] = [];
    for await (const event of watch) {
      events.push(event);
      if (event.revision === 6n) break;
    }
    expect(events.map((e) => `${e.type}:${e.type === 'progress' ? '' : e.kv.key}@${e.revision}`)).toEqual([
      'put:a@2',
      'put:b@3',
      'put:a@4',
      'delete:b@5',
      'put:c@6',
    ]);
  });

  it('refuses a second open of a locked directory', async () => {
    await level();
    await expect(openLevelStore(dir.path)).rejects.toBeInstanceOf(UnavailableError);
  });

  it('rebuilds 100,000 keys and serves them after reopening', async () => {
    const first = await level();
    for (let chunk = 0; chunk < 100_000; chunk += 5000) {
      const writes: Promise<unknown>[] = [];
      for (let i = chunk; i < chunk + 5000; i++) {
        writes.push(
          first.create(`/registry/pods/ns-${i % 10}/pod-${String(i).padStart(6, '0')}`, Buffer.from('{}')),
        );
      }
      await Promise.all(writes);
    }
    await first.delete('/registry/pods/ns-0/pod-000000');
    await first.close();
    const second = await level();
    expect(await second.currentRevision()).toBe(100_002n);
    expect((await second.range({ prefix: '/registry/pods/' }, { countOnly: true })).count).toBe(99_999);
    await expect(second.create('/registry/pods/ns-1/pod-000001', Buffer.from('x'))).rejects.toMatchObject({
      code: 'STORAGE_ALREADY_EXISTS',
    });
    expect((await second.create('/registry/pods/ns-0/pod-000000', Buffer.from('x'))).kv.createRevision).toBe(
      100_003n,
    );
  });

  it('reopens a memory store over the same MemoryLevel', async () => {
    const memoryLevel = new MemoryLevel<Buffer, Buffer>({ keyEncoding: 'buffer', valueEncoding: 'buffer' });
    const first = await openMemoryStore({ memoryLevel });
    await first.create('k', Buffer.from('v'));
    await first.close();
    const second = await openMemoryStore({ memoryLevel });
    open.push(second);
    expect(await second.currentRevision()).toBe(2n);
    expect(Buffer.from((await second.get('k')).kv?.value ?? []).toString()).toBe('v');
    await expect(
      openMemoryStore({ memoryLevel: new MemoryLevel() as unknown as MemoryLevel<Buffer, Buffer> }),
    ).rejects.toBeInstanceOf(TypeError);
  });
});
