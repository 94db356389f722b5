/**
 * Point reads and the four writes: results, revisions, and every typed error with its fields.
 */
import { describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  ConflictError,
  NotFoundError,
  RevisionTooLargeError,
} from '../../../../storage/errors.js';
import type { Store, WriteResult } from '../../../../storage/interface.js';
import { bytes, expectError, hex, plainKv } from '../compare.js';
import { useStores, type StoreFactory } from '../factory.js';

export function kvCases(factory: StoreFactory): void {
  const stores = useStores(factory);

  describe('get and create', () => {
    it('create returns the key as written at the next revision; get returns it', async () => {
      const { store, k } = await stores.open();
      const before = await store.currentRevision();
      const created = await store.create(k('a'), bytes('one'));
      expect(created.revision).toBe(before + 1n);
      expect(plainKv(created.kv)).toEqual({
        key: k('a'),
        value: hex(bytes('one')),
        createRevision: before + 1n,
        modRevision: before + 1n,
        lease: 0n,
      });
      expect(await store.currentRevision()).toBe(before + 1n);
      const got = await store.get(k('a'));
      expect(got.revision).toBe(before + 1n);
      expect(plainKv(got.kv)).toEqual(plainKv(created.kv));
    });

    it('get of an absent key has no kv and reports the current revision', async () => {
      const { store, k } = await stores.open();
      await store.create(k('other'), bytes('x'));
      const current = await store.currentRevision();
      expect(await store.get(k('missing'))).toEqual({ kv: undefined, revision: current });
    });

    it('create of an existing key is AlreadyExistsError and takes no revision', async () => {
      const { store, k } = await stores.open();
      const first = await store.create(k('a'), bytes('one'));
      const err = await expectError(store.create(k('a'), bytes('two')), AlreadyExistsError, {
        code: 'STORAGE_ALREADY_EXISTS',
        key: k('a'),
      });
      if (err.current !== undefined) expect(plainKv(err.current)).toEqual(plainKv(first.kv));
      expect(await store.currentRevision()).toBe(first.revision);
      expect(hex((await store.get(k('a'))).kv?.value ?? bytes('gone'))).toBe(hex(bytes('one')));
    });

    it('stores values as opaque bytes: empty, binary, and independent of the caller buffer', async () => {
      const { store, k } = await stores.open();
      const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
      await store.create(k('empty'), new Uint8Array(0));
      await store.create(k('binary'), binary);
      const reused = bytes('before');
      await store.create(k('reused'), reused);
      reused.fill(0x21); // the caller may reuse its buffer once the call returned
      expect((await store.get(k('empty'))).kv?.value.byteLength).toBe(0);
      expect(hex((await store.get(k('binary'))).kv?.value ?? new Uint8Array(0))).toBe(hex(binary));
      expect(hex((await store.get(k('reused'))).kv?.value ?? new Uint8Array(0))).toBe(hex(bytes('before')));
    });

    it('keeps non-ASCII keys exactly (accents, astral-plane characters, NUL)', async () => {
      const { store, k } = await stores.open();
      const names = ['é', '日本', '😀/x', 'a\u0000b', '\uffff'];
      for (const name of names) await store.create(k(name), bytes(name));
      for (const name of names) {
        const got = await store.get(k(name));
        expect(got.kv?.key).toBe(k(name));
        expect(hex(got.kv?.value ?? new Uint8Array(0))).toBe(hex(bytes(name)));
      }
      expect((await store.get(k('a'))).kv).toBeUndefined();
    });

    it('get at a past revision sees exactly the writes up to it', async () => {
      const { store, k } = await stores.open();
      await store.create(k('z'), bytes('first')); // so the revision before `c` is a written one, never 0
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.update(k('a'), bytes('v2'), { ifModRevision: c.revision });
      const d = await store.delete(k('a'));
      await store.create(k('a'), bytes('v3'));
      expect(hex((await store.get(k('a'), { revision: c.revision })).kv?.value ?? bytes('-'))).toBe(
        hex(bytes('v1')),
      );
      expect(await store.get(k('a'), { revision: c.revision - 1n })).toEqual({
        kv: undefined,
        revision: c.revision - 1n,
      });
      const atUpdate = await store.get(k('a'), { revision: u.revision });
      expect(atUpdate.revision).toBe(u.revision);
      expect(plainKv(atUpdate.kv)).toEqual(plainKv(u.kv));
      expect((await store.get(k('a'), { revision: d.revision })).kv).toBeUndefined();
      const now = await store.get(k('a'));
      expect(now.kv?.createRevision).toBe(d.revision + 1n);
    });

    it('get above the current revision is RevisionTooLargeError', async () => {
      const { store, k } = await stores.open();
      await store.create(k('a'), bytes('x'));
      const current = await store.currentRevision();
      await expectError(store.get(k('a'), { revision: current + 1n }), RevisionTooLargeError, {
        code: 'STORAGE_REVISION_TOO_LARGE',
        requestedRevision: current + 1n,
        currentRevision: current,
      });
      await expectError(store.get(k('a'), { revision: current + 1000n }), RevisionTooLargeError);
    });
  });

  describe('update', () => {
    /** The result of updating `key` (created by `c`) to `v2` with `u`, and the store reading the same. */
    async function expectUpdated(store: Store, key: string, c: WriteResult, u: WriteResult): Promise<void> {
      expect(plainKv(u.kv)).toEqual({
        key,
        value: hex(bytes('v2')),
        createRevision: c.revision,
        modRevision: u.revision,
        lease: 0n,
      });
      expect(plainKv((await store.get(key)).kv)).toEqual(plainKv(u.kv));
    }

    it('replaces the value at the expected mod revision, keeping the create revision', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.update(k('a'), bytes('v2'), { ifModRevision: c.revision });
      expect(u.revision).toBe(c.revision + 1n);
      await expectUpdated(store, k('a'), c, u);
    });

    it("with the lease and the read version's create revision named, the result and the stored key agree", async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.update(k('a'), bytes('v2'), {
        ifModRevision: c.revision,
        lease: 0n,
        createRevision: c.kv.createRevision,
      });
      await expectUpdated(store, k('a'), c, u);
      // A stale compare still fails with the current key, hint or not.
      const err = await expectError(
        store.update(k('a'), bytes('v3'), {
          ifModRevision: c.revision,
          lease: 0n,
          createRevision: c.revision,
        }),
        ConflictError,
        { expectedModRevision: c.revision, revision: u.revision },
      );
      expect(plainKv(err.current)).toEqual(plainKv(u.kv));
    });

    it('a stale mod revision is ConflictError carrying the current key, and takes no revision', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.update(k('a'), bytes('v2'), { ifModRevision: c.revision });
      const err = await expectError(
        store.update(k('a'), bytes('v3'), { ifModRevision: c.revision }),
        ConflictError,
        {
          code: 'STORAGE_CONFLICT',
          key: k('a'),
          expectedModRevision: c.revision,
          revision: u.revision,
        },
      );
      expect(plainKv(err.current)).toEqual(plainKv(u.kv));
      await expectError(store.update(k('a'), bytes('v3'), { ifModRevision: 0n }), ConflictError, {
        expectedModRevision: 0n,
      });
      await expectError(store.update(k('a'), bytes('v3'), { ifModRevision: u.revision + 5n }), ConflictError);
      expect(await store.currentRevision()).toBe(u.revision);
    });

    it('a missing key is NotFoundError whatever the expected mod revision', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      await store.delete(k('a'));
      const current = await store.currentRevision();
      for (const ifModRevision of [0n, c.revision, current]) {
        await expectError(store.update(k('a'), bytes('x'), { ifModRevision }), NotFoundError, {
          code: 'STORAGE_NOT_FOUND',
          key: k('a'),
        });
      }
      await expectError(store.update(k('never'), bytes('x'), { ifModRevision: 0n }), NotFoundError, {
        key: k('never'),
      });
      expect(await store.currentRevision()).toBe(current);
    });
  });

  describe('delete', () => {
    it('returns the deleted key-value at a new revision; the key is gone', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const d = await store.delete(k('a'));
      expect(d.revision).toBe(c.revision + 1n);
      expect(plainKv(d.kv)).toEqual(plainKv(c.kv));
      expect((await store.get(k('a'))).kv).toBeUndefined();
      const again = await store.create(k('a'), bytes('v2'));
      expect(again.kv.createRevision).toBe(d.revision + 1n);
    });

    it('with ifModRevision deletes only at that mod revision (ConflictError otherwise)', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      const u = await store.update(k('a'), bytes('v2'), { ifModRevision: c.revision });
      const err = await expectError(store.delete(k('a'), { ifModRevision: c.revision }), ConflictError, {
        key: k('a'),
        expectedModRevision: c.revision,
        revision: u.revision,
      });
      expect(plainKv(err.current)).toEqual(plainKv(u.kv));
      expect(await store.currentRevision()).toBe(u.revision);
      const d = await store.delete(k('a'), { ifModRevision: u.revision });
      expect(plainKv(d.kv)).toEqual(plainKv(u.kv));
    });

    it('of an absent key is NotFoundError and takes no revision', async () => {
      const { store, k } = await stores.open();
      const c = await store.create(k('a'), bytes('v1'));
      await store.delete(k('a'));
      const current = await store.currentRevision();
      await expectError(store.delete(k('a')), NotFoundError, { key: k('a') });
      await expectError(store.delete(k('never')), NotFoundError, { key: k('never') });
      await expectError(store.delete(k('a'), { ifModRevision: c.revision }), NotFoundError, { key: k('a') });
      expect(await store.currentRevision()).toBe(current);
    });
  });
}
