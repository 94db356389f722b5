/**
 * The embedded store's own behaviour on memory-level: revisions, compares, multi-version reads
 * at old revisions, paging, and the errors of the contract. (The shared conformance suite
 * covers the contract in depth; these pin down what this engine does on its own layout.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  AlreadyExistsError,
  CompactedError,
  ConflictError,
  InvalidContinueError,
  NotFoundError,
  RevisionTooLargeError,
  UnavailableError,
} from '../../../storage/errors.js';
import type { Store } from '../../../storage/interface.js';
import { openMemoryStore } from '../../../storage/mvcc/index.js';

const text = (s: string): Uint8Array => Buffer.from(s);
const str = (v: Uint8Array | undefined): string | undefined =>
  v === undefined ? undefined : Buffer.from(v).toString();

let store: Store;
afterEach(async () => {
  await store.close();
});

describe('mvcc store basics', () => {
  it('starts at revision 1 and gives every write the next revision', async () => {
    store = await openMemoryStore();
    expect(await store.currentRevision()).toBe(1n);
    const a = await store.create('a', text('1'));
    const b = await store.create('b', text('2'));
    const u = await store.update('a', text('3'), { ifModRevision: a.revision });
    expect([a.revision, b.revision, u.revision]).toEqual([2n, 3n, 4n]);
    expect(u.kv).toMatchObject({ key: 'a', createRevision: 2n, modRevision: 4n, lease: 0n });
    expect(await store.currentRevision()).toBe(4n);
  });

  it('copies written values: mutating the caller buffer afterwards changes nothing', async () => {
    store = await openMemoryStore();
    const value = text('abc');
    await store.create('k', value);
    value[0] = 0x7a;
    expect(str((await store.get('k')).kv?.value)).toBe('abc');
  });

  it('decides compares against accepted writes, and failed writes take no revision', async () => {
    store = await openMemoryStore();
    const results = await Promise.allSettled([store.create('k', text('1')), store.create('k', text('2'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(AlreadyExistsError);
    expect(await store.currentRevision()).toBe(2n);
    await expect(store.update('k', text('x'), { ifModRevision: 99n })).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof ConflictError && e.current?.modRevision === 2n && str(e.current.value) === '1',
    );
    await expect(store.update('missing', text('x'), { ifModRevision: 2n })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(store.delete('missing')).rejects.toBeInstanceOf(NotFoundError);
    await expect(store.txn({ key: 'missing', ifModRevision: 5n, then: { op: 'delete' } })).rejects.toSatisfy(
      (e: unknown) => e instanceof ConflictError && e.current === undefined,
    );
    expect(await store.currentRevision()).toBe(2n);
  });

  it('delete returns the deleted value and a later create starts a new incarnation', async () => {
    store = await openMemoryStore();
    await store.create('k', text('v1'));
    const del = await store.delete('k', { ifModRevision: 2n });
    expect(del.revision).toBe(3n);
    expect(del.kv).toMatchObject({ key: 'k', modRevision: 2n, createRevision: 2n });
    expect(str(del.kv.value)).toBe('v1');
    const again = await store.create('k', text('v2'));
    expect(again.kv.createRevision).toBe(4n);
    expect((await store.get('k', { revision: 2n })).kv?.createRevision).toBe(2n);
    expect((await store.get('k', { revision: 3n })).kv).toBeUndefined();
  });

  it('reads every retained revision exactly as it was', async () => {
    store = await openMemoryStore();
    await store.create('a', text('a1')); // 2
    await store.create('b', text('b1')); // 3
    await store.update('a', text('a2'), { ifModRevision: 2n }); // 4
    await store.delete('b'); // 5
    await store.create('c', text('c1')); // 6
    const at = async (revision: bigint): Promise<string[]> =>
      (await store.range({ prefix: '' }, { revision })).items.map(
        (kv) => `${kv.key}=${str(kv.value)}@${kv.modRevision}`,
      );
    expect(await at(1n)).toEqual([]);
    expect(await at(3n)).toEqual(['a=a1@2', 'b=b1@3']);
    expect(await at(4n)).toEqual(['a=a2@4', 'b=b1@3']);
    expect(await at(5n)).toEqual(['a=a2@4']);
    expect(await at(6n)).toEqual(['a=a2@4', 'c=c1@6']);
    await expect(store.get('a', { revision: 7n })).rejects.toBeInstanceOf(RevisionTooLargeError);
  });

  it('pages with limit and continue at one revision, counting what remains', async () => {
    store = await openMemoryStore();
    for (let i = 0; i < 10; i++) await store.create(`p/${i}`, text(String(i)));
    await store.create('q', text('outside'));
    const first = await store.range({ prefix: 'p/' }, { limit: 4 });
    expect(first.items.map((kv) => kv.key)).toEqual(['p/0', 'p/1', 'p/2', 'p/3']);
    expect([first.more, first.count]).toEqual([true, 10]);
    await store.delete('p/5'); // after the list revision: later chunks still see it
    const second = await store.range({ prefix: 'p/' }, { limit: 4, continue: first.continue as string });
    expect(second.items.map((kv) => kv.key)).toEqual(['p/4', 'p/5', 'p/6', 'p/7']);
    expect([second.revision, second.count]).toEqual([first.revision, 6]);
    const third = await store.range({ prefix: 'p/' }, { limit: 4, continue: second.continue as string });
    expect(third.items.map((kv) => kv.key)).toEqual(['p/8', 'p/9']);
    expect([third.more, third.continue]).toEqual([false, undefined]);
    const keysOnly = await store.range({ start: 'p/2', end: 'p/4' }, { keysOnly: true });
    expect(keysOnly.items.map((kv) => [kv.key, kv.value.byteLength])).toEqual([
      ['p/2', 0],
      ['p/3', 0],
    ]);
    expect((await store.range({ prefix: 'p/' }, { countOnly: true })).count).toBe(9);
  });

  it('rejects tokens that are forged, of another span, or of another revision', async () => {
    store = await openMemoryStore();
    for (let i = 0; i < 3; i++) await store.create(`p/${i}`, text(String(i)));
    const { continue: token } = await store.range({ prefix: 'p/' }, { limit: 1 });
    await expect(store.range({ prefix: 'x/' }, { continue: token as string })).rejects.toBeInstanceOf(
      InvalidContinueError,
    );
    await expect(store.range({ prefix: 'p/' }, { continue: `${token as string}A` })).rejects.toBeInstanceOf(
      InvalidContinueError,
    );
    await expect(
      store.range({ prefix: 'p/' }, { continue: token as string, revision: 2n }),
    ).rejects.toBeInstanceOf(InvalidContinueError);
    await store.compact(await store.currentRevision());
    await expect(store.range({ prefix: 'p/' }, { continue: token as string })).resolves.toMatchObject({
      count: 2,
    });
    await store.create('p/9', text('9'));
    await store.compact(await store.currentRevision());
    await expect(store.range({ prefix: 'p/' }, { continue: token as string })).rejects.toBeInstanceOf(
      CompactedError,
    );
  });

  it('keeps keys with U+0000 and astral characters in UTF-8 byte order', async () => {
    store = await openMemoryStore();
    const keys = ['a', 'a\u0000', 'a\u0000b', 'a\u0001', 'a\uffff', 'a\u{1f600}', 'b'];
    for (const key of [...keys].reverse()) await store.create(key, text(key));
    const { items } = await store.range({ prefix: 'a' });
    expect(items.map((kv) => kv.key)).toEqual(keys.slice(0, -1));
    expect((await store.range({ prefix: 'a\u0000' })).items.map((kv) => kv.key)).toEqual([
      'a\u0000',
      'a\u0000b',
    ]);
    expect(str((await store.get('a\u0000b')).kv?.value)).toBe('a\u0000b');
  });

  it('is unavailable after close, and close is idempotent', async () => {
    store = await openMemoryStore();
    await store.create('k', text('v'));
    await Promise.all([store.close(), store.close()]);
    await expect(store.get('k')).rejects.toBeInstanceOf(UnavailableError);
    await expect(store.create('j', text('v'))).rejects.toBeInstanceOf(UnavailableError);
    await expect(store.checkHealth()).rejects.toBeInstanceOf(UnavailableError);
    await expect(store.watch({ prefix: '' })[Symbol.asyncIterator]().next()).rejects.toBeInstanceOf(
      UnavailableError,
    );
  });
});
