/**
 * Leases: expiry and revocation delete the lease's keys, one revision and one delete event
 * each (with prevKv); leases survive restarts with their absolute expiry.
 */
import { MemoryLevel } from 'memory-level';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaseNotFoundError } from '../../../storage/errors.js';
import type { Store, Watch, WatchEvent } from '../../../storage/interface.js';
import { openMemoryStore } from '../../../storage/mvcc/index.js';

const open: Store[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

async function memory(memoryLevel?: MemoryLevel<Buffer, Buffer>): Promise<Store> {
  const store = await openMemoryStore(memoryLevel === undefined ? {} : { memoryLevel });
  open.push(store);
  return store;
}

async function take(watch: Watch, n: number): Promise<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for await (const event of watch) {
    if (event.type === 'progress') continue;
    events.push(event);
    if (events.length === n) break;
  }
  return events;
}

describe('leases', () => {
  it('deletes the keys of an expired lease, each delete a revision with an event and prevKv', async () => {
    const store = await memory();
    const lease = await store.grantLease(1);
    await store.create('l/a', Buffer.from('A'), { lease });
    await store.create('l/b', Buffer.from('B'), { lease });
    await store.create('l/keep', Buffer.from('K'));
    const before = await store.currentRevision();
    const watch = store.watch({ prefix: 'l/' });
    const events = await take(watch, 2); // arrives once the lease expires, about a second later
    watch.close();
    expect(events.map((e) => e.type)).toEqual(['delete', 'delete']);
    expect(events.map((e) => e.revision)).toEqual([before + 1n, before + 2n]);
    expect(
      events
        .map((e) =>
          e.type === 'delete'
            ? `${e.prevKv.key}=${Buffer.from(e.prevKv.value).toString()}@${e.prevKv.lease}`
            : '',
        )
        .sort(),
    ).toEqual([`l/a=A@${lease}`, `l/b=B@${lease}`]);
    expect((await store.range({ prefix: 'l/' })).items.map((kv) => kv.key)).toEqual(['l/keep']);
    await expect(store.create('l/c', Buffer.from('C'), { lease })).rejects.toBeInstanceOf(LeaseNotFoundError);
  });

  it('revokes at once, and a key moved off the lease survives', async () => {
    const store = await memory();
    const lease = await store.grantLease(3600);
    const a = await store.create('a', Buffer.from('1'), { lease });
    await store.create('b', Buffer.from('2'), { lease });
    await store.update('a', Buffer.from('3'), { ifModRevision: a.revision, lease: 0n });
    const b = await store.get('b');
    await store.revokeLease(lease);
    expect((await store.get('a')).kv?.lease).toBe(0n);
    expect((await store.get('b')).kv).toBeUndefined();
    expect((await store.get('b', { revision: b.revision })).kv?.lease).toBe(lease);
    await store.revokeLease(lease); // unknown now: a no-op
    await store.revokeLease(12345n);
    expect(await store.currentRevision()).toBe(b.revision + 1n);
  });

  it('keeps the lease of a key on update unless told otherwise', async () => {
    const store = await memory();
    const lease = await store.grantLease(3600);
    const created = await store.create('k', Buffer.from('1'), { lease });
    const updated = await store.update('k', Buffer.from('2'), { ifModRevision: created.revision });
    expect(updated.kv.lease).toBe(lease);
    await store.revokeLease(lease);
    expect((await store.get('k')).kv).toBeUndefined();
  });

  it('survives a restart and expires on time afterwards', async () => {
    const memoryLevel = new MemoryLevel<Buffer, Buffer>({ keyEncoding: 'buffer', valueEncoding: 'buffer' });
    const first = await memory(memoryLevel);
    const lease = await first.grantLease(1);
    const long = await first.grantLease(3600);
    await first.create('short', Buffer.from('s'), { lease });
    await first.create('long', Buffer.from('l'), { lease: long });
    await first.close();
    const second = await memory(memoryLevel);
    const watch = second.watch({ prefix: '' });
    const [event] = await take(watch, 1);
    watch.close();
    expect(event).toMatchObject({ type: 'delete', kv: { key: 'short' } });
    expect((await second.get('long')).kv?.lease).toBe(long);
    // The lease record is gone with its keys: attaching to it fails.
    await expect(second.create('again', Buffer.from('x'), { lease })).rejects.toBeInstanceOf(
      LeaseNotFoundError,
    );
    await second.revokeLease(long);
    expect((await second.get('long')).kv).toBeUndefined();
  });

  it('rejects TTLs below one second', async () => {
    const store = await memory();
    await expect(store.grantLease(0)).rejects.toBeInstanceOf(RangeError);
    await expect(store.grantLease(Number.NaN)).rejects.toBeInstanceOf(RangeError);
  });
});
