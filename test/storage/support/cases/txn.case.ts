/**
 * The compare-then-write transaction: every compare form, both operations, and their errors.
 */
import { describe, expect, it } from 'vitest';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../../../../storage/errors.js';
import { bytes, expectError, hex, plainKv } from '../compare.js';
import { useStores, type StoreFactory } from '../factory.js';

export function txnCases(factory: StoreFactory): void {
  const stores = useStores(factory);

  describe('txn', () => {
    it('ifModRevision 0n puts only when the key is absent (AlreadyExistsError otherwise)', async () => {
      const { store, k } = await stores.open();
      const put = await store.txn({
        key: k('a'),
        ifModRevision: 0n,
        then: { op: 'put', value: bytes('v1') },
      });
      expect(put.kv.createRevision).toBe(put.revision);
      expect(put.kv.modRevision).toBe(put.revision);
      const err = await expectError(
        store.txn({ key: k('a'), ifModRevision: 0n, then: { op: 'put', value: bytes('v2') } }),
        AlreadyExistsError,
        { key: k('a') },
      );
      if (err.current !== undefined) expect(plainKv(err.current)).toEqual(plainKv(put.kv));
      expect(await store.currentRevision()).toBe(put.revision);
    });

    it('without a compare puts whether or not the key exists', async () => {
      const { store, k } = await stores.open();
      const first = await store.txn({
        key: k('a'),
        ifModRevision: undefined,
        then: { op: 'put', value: bytes('v1') },
      });
      const second = await store.txn({
        key: k('a'),
        ifModRevision: undefined,
        then: { op: 'put', value: bytes('v2') },
      });
      expect(second.revision).toBe(first.revision + 1n);
      expect(plainKv(second.kv)).toEqual({
        key: k('a'),
        value: hex(bytes('v2')),
        createRevision: first.revision,
        modRevision: second.revision,
        lease: 0n,
      });
    });

    it('with a mod revision puts only on a match; a mismatch is ConflictError with the current key', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.txn({
        key: k('a'),
        ifModRevision: c.revision,
        then: { op: 'put', value: bytes('v2') },
      });
      expect(u.kv.createRevision).toBe(c.revision);
      const err = await expectError(
        store.txn({ key: k('a'), ifModRevision: c.revision, then: { op: 'put', value: bytes('v3') } }),
        ConflictError,
        { key: k('a'), expectedModRevision: c.revision, revision: u.revision },
      );
      expect(plainKv(err.current)).toEqual(plainKv(u.kv));
      expect(await store.currentRevision()).toBe(u.revision);
    });

    it('a mod-revision compare on an absent key is ConflictError with no current key', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      await store.delete(k('a'));
      const current = await store.currentRevision();
      for (const then of [{ op: 'put', value: bytes('v2') }, { op: 'delete' }] as const) {
        const err = await expectError(
          store.txn({ key: k('a'), ifModRevision: c.revision, then }),
          ConflictError,
          {
            key: k('a'),
            expectedModRevision: c.revision,
            revision: current,
          },
        );
        expect(err.current).toBeUndefined();
      }
      expect(await store.currentRevision()).toBe(current);
    });

    it('delete: on a match returns the deleted key; on a mismatch ConflictError', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.update(k('a'), bytes('v2'), { ifModRevision: c.revision });
      const err = await expectError(
        store.txn({ key: k('a'), ifModRevision: c.revision, then: { op: 'delete' } }),
        ConflictError,
        { expectedModRevision: c.revision, revision: u.revision },
      );
      expect(plainKv(err.current)).toEqual(plainKv(u.kv));
      const d = await store.txn({ key: k('a'), ifModRevision: u.revision, then: { op: 'delete' } });
      expect(d.revision).toBe(u.revision + 1n);
      expect(plainKv(d.kv)).toEqual(plainKv(u.kv));
      expect((await store.get(k('a'))).kv).toBeUndefined();
    });

    it('delete without a compare removes an existing key; an absent key is NotFoundError', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const d = await store.txn({ key: k('a'), ifModRevision: undefined, then: { op: 'delete' } });
      expect(plainKv(d.kv)).toEqual(plainKv(c.kv));
      await expectError(
        store.txn({ key: k('a'), ifModRevision: undefined, then: { op: 'delete' } }),
        NotFoundError,
        {
          key: k('a'),
        },
      );
      expect(await store.currentRevision()).toBe(d.revision);
    });

    it('put with a lease attaches it; an explicit 0n lease puts without one', async () => {
      const { store, k } = await stores.open();
      const lease = await store.grantLease(600);
      const put = await store.txn({
        key: k('a'),
        ifModRevision: 0n,
        then: { op: 'put', value: bytes('v1'), lease },
      });
      expect(put.kv.lease).toBe(lease);
      expect((await store.get(k('a'))).kv?.lease).toBe(lease);
      const detached = await store.txn({
        key: k('a'),
        ifModRevision: put.revision,
        then: { op: 'put', value: bytes('v2'), lease: 0n },
      });
      expect(detached.kv.lease).toBe(0n);
      await store.revokeLease(lease);
      expect((await store.get(k('a'))).kv?.modRevision).toBe(detached.revision);
    });
  });
}
