/**
 * A store's life: fresh, open, closed and (for persistent backends) reopened, with the same trait
 * checks at each stage; the revision counter across successful and failed writes.
 */
import { describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  ConflictError,
  NotFoundError,
  UnavailableError,
} from '../../../../storage/errors.js';
import type { WriteResult } from '../../../../storage/interface.js';
import { StoreModel } from '../../model.js';
import { bytes, expectError, plainKv, plainRange } from '../compare.js';
import { useStores, type StoreFactory, type TestStore } from '../factory.js';
import { expectFreshStore, expectMatchesModel } from '../traits.js';

/** Writes a little of everything through both the store and the model. */
async function writeHistory(t: TestStore, model: StoreModel): Promise<void> {
  const { store, k } = t;
  const mirror = async (write: () => Promise<WriteResult>, expected: () => WriteResult): Promise<void> => {
    const actual = await write();
    const wanted = expected();
    expect({ revision: actual.revision, kv: plainKv(actual.kv) }).toEqual({
      revision: wanted.revision,
      kv: plainKv(wanted.kv),
    });
  };
  for (const name of ['b', 'a', 'é', 'c']) {
    await mirror(
      () => store.create(k(name), bytes(name)),
      () => model.create(k(name), bytes(name)),
    );
  }
  const a = model.get(k('a')).kv?.modRevision ?? 0n;
  await mirror(
    () => store.update(k('a'), bytes('a2'), { ifModRevision: a }),
    () => model.update(k('a'), bytes('a2'), a),
  );
  await mirror(
    () => store.delete(k('b')),
    () => model.delete(k('b')),
  );
  await mirror(
    () => store.txn({ key: k('b'), ifModRevision: 0n, then: { op: 'put', value: bytes('b2') } }),
    () => model.txn({ key: k('b'), ifModRevision: 0n, then: { op: 'put', value: bytes('b2') } }),
  );
  await mirror(
    () => store.delete(k('c')),
    () => model.delete(k('c')),
  );
}

export function lifecycleCases(factory: StoreFactory): void {
  const stores = useStores(factory);

  describe('lifecycle', () => {
    if (stores.canOpenFresh)
      it('a fresh store is empty at revision 0 or 1 and writes from the next revision', async () => {
        await expectFreshStore(await stores.openFresh());
      });

    it('the factory can reopen the store exactly when the backend is persistent', async () => {
      const { store } = await stores.open();
      expect(factory.reopen !== undefined, 'reopen() given (the reopen tests run)').toBe(
        store.capabilities.persistent,
      );
    });

    it('each successful write takes exactly the next revision; failed writes take none', async () => {
      const { store, k } = await stores.open();
      let expected = await store.currentRevision();
      const wrote = async (pending: Promise<{ revision: bigint }>): Promise<void> => {
        expected += 1n;
        expect((await pending).revision).toBe(expected);
        expect(await store.currentRevision()).toBe(expected);
      };
      const failed = async (
        pending: Promise<unknown>,
        type: abstract new (...args: never[]) => Error,
      ): Promise<void> => {
        await expectError(pending, type);
        expect(await store.currentRevision()).toBe(expected);
      };
      await wrote(store.create(k('a'), bytes('1')));
      await failed(store.create(k('a'), bytes('2')), AlreadyExistsError);
      await failed(store.update(k('a'), bytes('2'), { ifModRevision: expected + 1n }), ConflictError);
      await failed(store.update(k('x'), bytes('2'), { ifModRevision: expected }), NotFoundError);
      await wrote(store.update(k('a'), bytes('2'), { ifModRevision: expected }));
      await failed(store.delete(k('a'), { ifModRevision: expected - 1n }), ConflictError);
      await failed(store.delete(k('x')), NotFoundError);
      await failed(store.txn({ key: k('a'), ifModRevision: 0n, then: { op: 'delete' } }), AlreadyExistsError);
      await wrote(
        store.txn({ key: k('b'), ifModRevision: undefined, then: { op: 'put', value: bytes('3') } }),
      );
      await wrote(store.delete(k('a')));
      await failed(
        store.txn({ key: k('a'), ifModRevision: undefined, then: { op: 'delete' } }),
        NotFoundError,
      );
      await wrote(store.create(k('a'), bytes('4')));
    });

    it('an open store with history matches the model of what was written', async () => {
      const t = await stores.open();
      const model = new StoreModel({
        baseRevision: await t.store.currentRevision(),
        compactedRevision: await t.store.compactedRevision(),
      });
      await writeHistory(t, model);
      await expectMatchesModel(t.store, model, { prefix: t.k('') });
    });

    it('close is idempotent and later calls reject with UnavailableError', async () => {
      const { store, k } = await stores.open();
      await store.create(k('a'), bytes('x'));
      await store.checkHealth();
      await store.close();
      await store.close();
      await expectError(store.get(k('a')), UnavailableError, { code: 'STORAGE_UNAVAILABLE' });
      await expectError(store.create(k('b'), bytes('y')), UnavailableError);
      await expectError(store.range({ prefix: k('') }), UnavailableError);
      await expectError(store.currentRevision(), UnavailableError);
      await expectError(store.checkHealth(), UnavailableError);
    });
  });

  // Declared only for backends the factory can reopen: persistent ones (checked above).
  if (factory.reopen === undefined) return;
  describe('reopen (persistent backends)', () => {
    it('keeps keys, history, compaction and the revision counter', async () => {
      const t = await stores.open();
      const model = new StoreModel({
        baseRevision: await t.store.currentRevision(),
        compactedRevision: await t.store.compactedRevision(),
      });
      await writeHistory(t, model);
      const compactAt = model.writes[2]?.revision ?? 0n;
      await t.store.compact(compactAt);
      model.compact(compactAt);
      await expectMatchesModel(t.store, model, { prefix: t.k('') });
      await t.reopen();
      await expectMatchesModel(t.store, model, { prefix: t.k('') });
      const next = await t.store.create(t.k('after'), bytes('x'));
      expect(next.revision).toBe(model.revision + 1n);
      await t.reopen();
      expect((await t.store.get(t.k('after'))).kv?.modRevision).toBe(next.revision);
    });

    it('keeps a deleted key deleted and a failed write unwritten across reopen', async () => {
      const t = await stores.open();
      const c = await t.store.create(t.k('a'), bytes('x'));
      await t.store.delete(t.k('a'));
      await expectError(t.store.delete(t.k('a')), NotFoundError);
      const current = await t.store.currentRevision();
      await t.reopen();
      expect(await t.store.currentRevision()).toBe(current);
      expect((await t.store.get(t.k('a'))).kv).toBeUndefined();
      expect(plainKv((await t.store.get(t.k('a'), { revision: c.revision })).kv)).toEqual(plainKv(c.kv));
    });

    it('honours a continue token issued before the reopen', async () => {
      const t = await stores.open();
      for (const name of ['a', 'b', 'c']) await t.store.create(t.k(name), bytes(name));
      const first = await t.store.range({ prefix: t.k('') }, { limit: 1 });
      const expected = plainRange(
        await t.store.range({ prefix: t.k('') }, { limit: 1, continue: first.continue ?? '' }),
      );
      await t.reopen();
      const again = await t.store.range({ prefix: t.k('') }, { limit: 1, continue: first.continue ?? '' });
      expect(plainRange(again)).toEqual(expected);
    });
  });
}
