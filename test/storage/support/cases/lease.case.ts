/**
 * Leases: attaching keys on create, update and txn, revocation and expiry deleting them.
 */
import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, LeaseNotFoundError } from '../../../../storage/errors.js';
import { bytes, plainKv } from '../compare.js';
import { eventually, useStores, type StoreFactory } from '../factory.js';
import { WatchCollector } from '../watch.js';

export function leaseCases(factory: StoreFactory): void {
  const stores = useStores(factory);

  describe('leases', () => {
    it('grants distinct leases; a key created with one carries it', async () => {
      const { store, k } = await stores.open();
      const one = await store.grantLease(600);
      const two = await store.grantLease(600);
      expect(typeof one).toBe('bigint');
      expect(one).not.toBe(two);
      expect(one).not.toBe(0n);
      const created = await store.create(k('a'), bytes('x'), { lease: one });
      expect(created.kv.lease).toBe(one);
      expect((await store.get(k('a'))).kv?.lease).toBe(one);
      expect((await store.range({ prefix: k('') })).items[0]?.lease).toBe(one);
      await store.revokeLease(one);
      await store.revokeLease(two);
    });

    it('revoking deletes the attached key at a new revision, seen by watches', async () => {
      const { store, k } = await stores.open();
      const lease = await store.grantLease(600);
      const watch = new WatchCollector(store.watch({ prefix: k('') }));
      const created = await store.create(k('a'), bytes('x'), { lease });
      await store.create(k('b'), bytes('y'));
      const before = await store.currentRevision();
      await store.revokeLease(lease);
      expect(await store.currentRevision()).toBe(before + 1n);
      expect((await store.get(k('a'))).kv).toBeUndefined();
      expect((await store.get(k('b'))).kv).toBeDefined();
      const events = await watch.changesAtLeast(3);
      const deleted = events[2];
      expect(deleted?.type).toBe('delete');
      if (deleted?.type === 'delete') {
        expect(deleted.revision).toBe(before + 1n);
        expect(deleted.kv.key).toBe(k('a'));
        expect(plainKv(deleted.prevKv)).toEqual(plainKv(created.kv));
      }
      await watch.close();
    });

    it('revoking deletes every attached key (update without a lease keeps it; 0n detaches)', async () => {
      const { store, k } = await stores.open();
      const lease = await store.grantLease(600);
      const a = await store.create(k('a'), bytes('1'), { lease });
      await store.update(k('a'), bytes('2'), { ifModRevision: a.revision });
      const b = await store.create(k('b'), bytes('3'), { lease });
      const detached = await store.update(k('b'), bytes('4'), { ifModRevision: b.revision, lease: 0n });
      expect(detached.kv.lease).toBe(0n);
      const c = await store.create(k('c'), bytes('5'));
      const attached = await store.update(k('c'), bytes('6'), { ifModRevision: c.revision, lease });
      expect(attached.kv.lease).toBe(lease);
      expect((await store.get(k('a'))).kv?.lease).toBe(lease);
      const before = await store.currentRevision();
      await store.revokeLease(lease);
      const after = await store.currentRevision();
      // Two keys go: in one revision (as etcd does) or one each.
      expect(after === before + 1n || after === before + 2n).toBe(true);
      expect((await store.range({ prefix: k('') })).items.map((kv) => kv.key)).toEqual([k('b')]);
    });

    it('revoking an unknown or already revoked lease is a no-op', async () => {
      const { store, k } = await stores.open();
      const lease = await store.grantLease(600);
      await store.create(k('a'), bytes('x'), { lease });
      await store.revokeLease(lease);
      const current = await store.currentRevision();
      await store.revokeLease(lease);
      await store.revokeLease(lease + 7777n);
      expect(await store.currentRevision()).toBe(current);
    });

    it('a write naming a revoked or unknown lease is LeaseNotFoundError and takes no revision', async () => {
      const { store, k } = await stores.open();
      const lease = await store.grantLease(600);
      await store.revokeLease(lease);
      const existing = await store.create(k('b'), bytes('y'));
      const current = await store.currentRevision();
      const failures = await Promise.all([
        store.create(k('a'), bytes('x'), { lease }).catch((err: unknown) => err),
        store.create(k('a'), bytes('x'), { lease: lease + 7777n }).catch((err: unknown) => err),
        store
          .update(k('b'), bytes('z'), { ifModRevision: existing.revision, lease })
          .catch((err: unknown) => err),
        store
          .txn({ key: k('c'), ifModRevision: undefined, then: { op: 'put', value: bytes('x'), lease } })
          .catch((err: unknown) => err),
      ]);
      for (const err of failures) {
        expect(err).toBeInstanceOf(LeaseNotFoundError);
        expect((err as LeaseNotFoundError).code).toBe('STORAGE_LEASE_NOT_FOUND');
      }
      expect((failures[0] as LeaseNotFoundError).lease).toBe(lease);
      // The write's own conditions are judged first.
      await expect(store.create(k('b'), bytes('x'), { lease })).rejects.toBeInstanceOf(AlreadyExistsError);
      expect(await store.currentRevision()).toBe(current);
      expect((await store.range({ prefix: k('') })).items.map((kv) => kv.key)).toEqual([k('b')]);
    });

    it('an expired lease deletes its keys', async () => {
      const { store, k } = await stores.open();
      const watch = new WatchCollector(store.watch({ prefix: k('') }));
      const lease = await store.grantLease(1);
      await store.create(k('short'), bytes('x'), { lease });
      await store.create(k('kept'), bytes('y'));
      await eventually(async () => (await store.get(k('short'))).kv === undefined, 'the lease to expire');
      const events = await watch.changesAtLeast(3);
      expect(events.map((e) => [e.type, e.type === 'progress' ? '' : e.kv.key])).toEqual([
        ['put', k('short')],
        ['put', k('kept')],
        ['delete', k('short')],
      ]);
      expect((await store.get(k('kept'))).kv).toBeDefined();
      await watch.close();
    });
  });
}
