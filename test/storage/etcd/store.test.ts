/**
 * The etcd backend against a real local etcd: write outcomes and the current key-value carried by
 * failed compares, compaction errors, continue tokens shared through etcd by two stores, leases,
 * health, and option handling. The shared conformance suite covers the rest of the contract.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  CompactedError,
  ConflictError,
  InvalidContinueError,
  LeaseNotFoundError,
  NotFoundError,
  RevisionTooLargeError,
  UnavailableError,
} from '../../../storage/errors.js';
import type { Store, WatchEvent } from '../../../storage/interface.js';
import { CONTINUE_SECRET_KEY, openEtcdStore } from '../../../storage/etcd/index.js';
import { startEtcd, type LocalEtcd } from '../../../tools/etcd-local.js';
import { bytes, runEtcdTests, text, waitFor } from './support.js';

describe.runIf(runEtcdTests)('etcd store', () => {
  let etcd: LocalEtcd;
  let store: Store;
  let n = 0;
  /** A key prefix no other test in this file uses. */
  const ns = (): string => `/test/${++n}/`;

  beforeAll(async () => {
    etcd = await startEtcd();
    store = await openEtcdStore({ endpoints: etcd.endpoints });
  });
  afterAll(async () => {
    await store?.close();
    await etcd?.stop();
  });

  it('declares the etcd3 capabilities', () => {
    expect(store.capabilities).toEqual({ backend: 'etcd3', persistent: true, durable: true, shared: true });
  });

  it('creates, reads, updates and deletes with etcd revisions', async () => {
    const p = ns();
    const c = await store.create(`${p}a`, bytes('one'));
    expect(c.kv).toMatchObject({
      key: `${p}a`,
      createRevision: c.revision,
      modRevision: c.revision,
      lease: 0n,
    });
    expect(await store.currentRevision()).toBe(c.revision);
    const u = await store.update(`${p}a`, bytes('two'), { ifModRevision: c.revision });
    expect(u.revision).toBe(c.revision + 1n);
    expect(u.kv).toMatchObject({ createRevision: c.revision, modRevision: u.revision });
    const old = await store.get(`${p}a`, { revision: c.revision });
    expect(text(old.kv?.value ?? new Uint8Array())).toBe('one');
    expect(old.revision).toBe(c.revision);
    const d = await store.delete(`${p}a`, { ifModRevision: u.revision });
    expect(text(d.kv.value)).toBe('two');
    expect(d.kv.modRevision).toBe(u.revision);
    expect((await store.get(`${p}a`)).kv).toBeUndefined();
  });

  it('failed compares carry the current key-value read in the same transaction', async () => {
    const p = ns();
    const c = await store.create(`${p}a`, bytes('v1'));
    const exists = await store.create(`${p}a`, bytes('again')).catch((e: unknown) => e);
    expect(exists).toBeInstanceOf(AlreadyExistsError);
    expect((exists as AlreadyExistsError).current).toMatchObject({ key: `${p}a`, modRevision: c.revision });

    const conflict = await store
      .update(`${p}a`, bytes('v2'), { ifModRevision: c.revision - 1n })
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    const err = conflict as ConflictError;
    expect(err.expectedModRevision).toBe(c.revision - 1n);
    expect(text(err.current?.value ?? new Uint8Array())).toBe('v1');
    expect(err.current?.modRevision).toBe(c.revision);
    expect(err.revision).toBe(await store.currentRevision());

    await expect(store.delete(`${p}a`, { ifModRevision: 1n })).rejects.toBeInstanceOf(ConflictError);
    await expect(store.update(`${p}missing`, bytes('x'), { ifModRevision: 5n })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(store.update(`${p}a`, bytes('x'), { ifModRevision: 0n })).rejects.toBeInstanceOf(
      ConflictError,
    );
    await expect(store.update(`${p}missing`, bytes('x'), { ifModRevision: 0n })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(store.delete(`${p}missing`)).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.delete(`${p}missing`, { ifModRevision: 0n })).rejects.toBeInstanceOf(NotFoundError);
    // A failed write takes no revision.
    expect(await store.currentRevision()).toBe(c.revision);
  });

  it('txn: compare outcomes per the contract', async () => {
    const p = ns();
    const c = await store.txn({ key: `${p}a`, ifModRevision: 0n, then: { op: 'put', value: bytes('1') } });
    await expect(
      store.txn({ key: `${p}a`, ifModRevision: 0n, then: { op: 'put', value: bytes('2') } }),
    ).rejects.toBeInstanceOf(AlreadyExistsError);
    await expect(
      store.txn({ key: `${p}a`, ifModRevision: 0n, then: { op: 'delete' } }),
    ).rejects.toBeInstanceOf(AlreadyExistsError);
    const missing = await store
      .txn({ key: `${p}b`, ifModRevision: 9n, then: { op: 'put', value: bytes('x') } })
      .catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ConflictError);
    expect((missing as ConflictError).current).toBeUndefined();
    const blind = await store.txn({
      key: `${p}a`,
      ifModRevision: undefined,
      then: { op: 'put', value: bytes('3') },
    });
    expect(blind.kv).toMatchObject({ createRevision: c.revision, modRevision: blind.revision });
    const del = await store.txn({ key: `${p}a`, ifModRevision: blind.revision, then: { op: 'delete' } });
    expect(text(del.kv.value)).toBe('3');
    await expect(
      store.txn({ key: `${p}a`, ifModRevision: undefined, then: { op: 'delete' } }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });

  it('pages a range with limit, keysOnly and counts', async () => {
    const p = ns();
    for (const name of ['a', 'b', 'c', 'd', 'e']) await store.create(`${p}${name}`, bytes(name));
    await store.create(`${p.slice(0, -1)}0`, bytes('outside'));
    const first = await store.range({ prefix: p }, { limit: 2, keysOnly: true });
    expect(first.items.map((kv) => kv.key)).toEqual([`${p}a`, `${p}b`]);
    expect(first.items.every((kv) => kv.value.byteLength === 0)).toBe(true);
    expect(first).toMatchObject({ more: true, count: 5 });
    const second = await store.range({ prefix: p }, { limit: 2, continue: first.continue ?? '' });
    expect(second.items.map((kv) => text(kv.value))).toEqual(['c', 'd']);
    expect(second).toMatchObject({ more: true, count: 3, revision: first.revision });
    const last = await store.range({ prefix: p }, { limit: 2, continue: second.continue ?? '' });
    expect(last.items.map((kv) => text(kv.value))).toEqual(['e']);
    expect(last.more).toBe(false);
    expect(last.continue).toBeUndefined();
    expect(await store.range({ start: `${p}b`, end: `${p}d` }, { countOnly: true })).toMatchObject({
      items: [],
      count: 2,
      more: false,
    });
    expect(await store.range({ start: `${p}d`, end: `${p}b` })).toMatchObject({ items: [], count: 0 });
    await expect(
      store.range({ prefix: p }, { continue: first.continue ?? '', revision: first.revision + 1n }),
    ).rejects.toBeInstanceOf(InvalidContinueError);
    await expect(store.range({ prefix: `${p}x` }, { continue: first.continue ?? '' })).rejects.toBeInstanceOf(
      InvalidContinueError,
    );
  });

  it('continue tokens open on another store on the same etcd (the secret is shared through etcd)', async () => {
    const p = ns();
    for (const name of ['a', 'b', 'c']) await store.create(`${p}${name}`, bytes(name));
    const other = await openEtcdStore({ endpoints: etcd.endpoints });
    const foreign = await openEtcdStore({
      endpoints: etcd.endpoints,
      continueSecret: new Uint8Array(32).fill(9),
    });
    try {
      const first = await store.range({ prefix: p }, { limit: 1 });
      const next = await other.range({ prefix: p }, { limit: 5, continue: first.continue ?? '' });
      expect(next.items.map((kv) => kv.key)).toEqual([`${p}b`, `${p}c`]);
      await expect(foreign.range({ prefix: p }, { continue: first.continue ?? '' })).rejects.toBeInstanceOf(
        InvalidContinueError,
      );
      const secret = await store.get(CONTINUE_SECRET_KEY);
      expect(secret.kv?.value.byteLength).toBe(32);
      // The first store created the secret; opening more stores did not replace it.
      expect(secret.kv?.createRevision).toBe(secret.kv?.modRevision);
    } finally {
      await other.close();
      await foreign.close();
    }
  });

  it('reports revisions in the future and compacted ones with typed errors', async () => {
    const p = ns();
    const a = await store.create(`${p}a`, bytes('1'));
    const b = await store.update(`${p}a`, bytes('2'), { ifModRevision: a.revision });
    const page = await store.range({ prefix: '/test/' }, { limit: 1, revision: a.revision });
    const future = await store.get(`${p}a`, { revision: b.revision + 1000n }).catch((e: unknown) => e);
    expect(future).toBeInstanceOf(RevisionTooLargeError);
    expect(future).toMatchObject({ requestedRevision: b.revision + 1000n, currentRevision: b.revision });
    await expect(store.compact(b.revision + 1000n)).rejects.toBeInstanceOf(RevisionTooLargeError);

    await store.compact(b.revision);
    expect(await store.compactedRevision()).toBe(b.revision);
    const gone = await store.get(`${p}a`, { revision: a.revision }).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(CompactedError);
    expect(gone).toMatchObject({ requestedRevision: a.revision, compactedRevision: b.revision });
    await expect(store.range({ prefix: p }, { revision: a.revision })).rejects.toBeInstanceOf(CompactedError);
    await expect(store.range({ prefix: '/test/' }, { continue: page.continue ?? '' })).rejects.toBeInstanceOf(
      CompactedError,
    );
    expect(text((await store.get(`${p}a`, { revision: b.revision })).kv?.value ?? new Uint8Array())).toBe(
      '2',
    );
    // At or below the compacted revision: a no-op.
    await store.compact(a.revision);
    expect(await store.compactedRevision()).toBe(b.revision);

    // Another store learns the compacted revision from etcd, not from its own calls.
    const other = await openEtcdStore({ endpoints: etcd.endpoints });
    try {
      expect(await other.compactedRevision()).toBe(b.revision);
      const watch = other.watch({ prefix: p }, { fromRevision: a.revision });
      const failed = await watch[Symbol.asyncIterator]()
        .next()
        .catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(CompactedError);
      expect(failed).toMatchObject({ compactedRevision: b.revision });
      watch.close();
    } finally {
      await other.close();
    }
  });

  it('attaches keys to leases; expiry and revocation delete them as delete events', async () => {
    const p = ns();
    const short = await store.grantLease(1);
    const long = await store.grantLease(60);
    const watch = store.watch({ prefix: p });
    const events: WatchEvent[] = [];
    const drained = (async () => {
      for await (const event of watch) events.push(event);
    })();
    const a = await store.create(`${p}short`, bytes('x'), { lease: short });
    expect(a.kv.lease).toBe(short);
    await store.create(`${p}long`, bytes('y'), { lease: long });
    const u = await store.update(`${p}long`, bytes('z'), {
      ifModRevision: (await store.get(`${p}long`)).kv?.modRevision ?? 0n,
    });
    expect(u.kv.lease).toBe(long); // update without a lease keeps the key's lease
    await store.revokeLease(long);
    await store.revokeLease(long); // unknown now: a no-op
    await waitFor(() => events.filter((e) => e.type === 'delete').length === 2, 'lease deletes', 15_000);
    const deletes = events.filter((e) => e.type === 'delete');
    expect(deletes.map((e) => (e.type === 'delete' ? e.prevKv.key : ''))).toEqual(
      expect.arrayContaining([`${p}short`, `${p}long`]),
    );
    expect((await store.range({ prefix: p })).items).toEqual([]);
    const stale = await store.create(`${p}again`, bytes('x'), { lease: long }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(LeaseNotFoundError);
    expect((stale as LeaseNotFoundError).lease).toBe(long);
    watch.close();
    await drained;
  });

  it('passes health checks, and fails them (and calls) with UnavailableError once closed', async () => {
    const own = await openEtcdStore({ endpoints: etcd.endpoints });
    await own.checkHealth();
    await own.close();
    await own.close();
    await expect(own.checkHealth()).rejects.toBeInstanceOf(UnavailableError);
    await expect(own.get('/x')).rejects.toBeInstanceOf(UnavailableError);
    await expect(own.create('/x', bytes('x'))).rejects.toBeInstanceOf(UnavailableError);
  });

  it('rejects options it cannot use, and times out dialling an etcd that is not there', async () => {
    await expect(openEtcdStore({ endpoints: [] })).rejects.toBeInstanceOf(RangeError);
    await expect(
      openEtcdStore({ endpoints: etcd.endpoints, continueSecret: new Uint8Array(4) }),
    ).rejects.toBeInstanceOf(RangeError);
    await expect(openEtcdStore({ endpoints: ['127.0.0.1:1'], dialTimeoutMs: 300 })).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });
});
