/**
 * Range reads: span forms, UTF-8 byte order, paging with count/more/continue at one revision,
 * keysOnly/countOnly, and every way a continue token can be wrong.
 */
import { describe, expect, it } from 'vitest';
import { InvalidContinueError, RevisionTooLargeError } from '../../../../storage/errors.js';
import type { KeySpan, RangeOptions, RangeResult, Store } from '../../../../storage/interface.js';
import { bytes, expectError, plainKv } from '../compare.js';
import { useStores, type StoreFactory } from '../factory.js';

/** Keys in UTF-8 byte order, which differs from JavaScript's UTF-16 order for the last two. */
const ORDERED = ['a', 'a/b', 'a0', 'b', 'z', 'é', '\uffff', '😀'];

/** Reads every chunk of a paged range, checking the per-chunk invariants on the way. */
async function readAll(store: Store, span: KeySpan, options: RangeOptions): Promise<RangeResult[]> {
  const chunks: RangeResult[] = [];
  let token: string | undefined;
  do {
    const chunk: RangeResult = await store.range(
      span,
      token === undefined ? options : { ...options, continue: token },
    );
    expect(chunk.more).toBe(chunk.continue !== undefined);
    if (chunks[0] !== undefined) expect(chunk.revision).toBe(chunks[0].revision);
    chunks.push(chunk);
    token = chunk.continue;
    if (chunks.length > 100) throw new Error('paging does not end');
  } while (token !== undefined);
  return chunks;
}

export function rangeCases(factory: StoreFactory): void {
  const stores = useStores(factory);

  async function seeded(): Promise<{ store: Store; k: (name: string) => string; revision: bigint }> {
    const { store, k } = await stores.open();
    // Created out of order so an implementation that returns insertion order fails.
    for (const name of [...ORDERED].reverse()) await store.create(k(name), bytes(`value of ${name}`));
    return { store, k, revision: await store.currentRevision() };
  }

  describe('range', () => {
    it('returns a prefix span in UTF-8 byte order with every field', async () => {
      const { store, k, revision } = await seeded();
      const result = await store.range({ prefix: k('') });
      expect(result.items.map((kv) => kv.key)).toEqual(ORDERED.map(k));
      expect(result).toMatchObject({ revision, count: ORDERED.length, more: false });
      expect(result.continue).toBeUndefined();
      const got = await store.get(k('é'));
      expect(plainKv(result.items[5])).toEqual(plainKv(got.kv));
    });

    it('a prefix span holds exactly the keys starting with it', async () => {
      const { store, k } = await seeded();
      const keys = async (span: KeySpan): Promise<string[]> =>
        (await store.range(span)).items.map((kv) => kv.key);
      expect(await keys({ prefix: k('a') })).toEqual([k('a'), k('a/b'), k('a0')]);
      expect(await keys({ prefix: k('a/') })).toEqual([k('a/b')]);
      expect(await keys({ prefix: k('😀') })).toEqual([k('😀')]);
      expect(await keys({ prefix: k('c') })).toEqual([]);
    });

    it('a [start, end) span includes start, excludes end, and compares UTF-8 bytes', async () => {
      const { store, k } = await seeded();
      const keys = async (span: KeySpan): Promise<string[]> =>
        (await store.range(span)).items.map((kv) => kv.key);
      expect(await keys({ start: k('a0'), end: k('é') })).toEqual([k('a0'), k('b'), k('z')]);
      expect(await keys({ start: k('a/'), end: k('a0') })).toEqual([k('a/b')]);
      expect(await keys({ start: k('\uffff'), end: k('😀') })).toEqual([k('\uffff')]);
      expect(await keys({ start: k('é'), end: k('\u{10ffff}') })).toEqual([k('é'), k('\uffff'), k('😀')]);
      expect(await keys({ start: k('b'), end: k('b') })).toEqual([]);
    });

    it('pages with limit: count from each chunk on, more and continue, one revision', async () => {
      const { store, k, revision } = await seeded();
      const chunks = await readAll(store, { prefix: k('') }, { limit: 3 });
      expect(chunks.map((c) => [c.items.length, c.count, c.more, c.revision])).toEqual([
        [3, 8, true, revision],
        [3, 5, true, revision],
        [2, 2, false, revision],
      ]);
      expect(chunks.flatMap((c) => c.items.map((kv) => kv.key))).toEqual(ORDERED.map(k));
    });

    it('a limit at or above the count returns everything with no token', async () => {
      const { store, k } = await seeded();
      for (const limit of [8, 9, 1000]) {
        const result = await store.range({ prefix: k('') }, { limit });
        expect(result).toMatchObject({ count: 8, more: false });
        expect(result.items).toHaveLength(8);
        expect(result.continue).toBeUndefined();
      }
    });

    it('later chunks are read at the first chunk revision, whatever was written since', async () => {
      const { store, k, revision } = await seeded();
      const before = (await store.range({ prefix: k('') })).items.map((kv) => plainKv(kv));
      const first = await store.range({ prefix: k('') }, { limit: 2 });
      const third = await store.get(k('a0'));
      await store.update(k('a0'), bytes('changed'), { ifModRevision: third.kv?.modRevision ?? 0n });
      await store.delete(k('z'));
      await store.create(k('y'), bytes('new'));
      const rest = await readAll(
        store,
        { prefix: k('') },
        { limit: 2, continue: first.continue ?? 'missing' },
      );
      expect(rest.every((c) => c.revision === revision)).toBe(true);
      expect([...first.items, ...rest.flatMap((c) => c.items)].map((kv) => plainKv(kv))).toEqual(before);
    });

    it('sealContinue makes the token range would issue; openContinue reads any token back', async () => {
      const { store, k, revision } = await seeded();
      const span = { prefix: k('') };
      const first = await store.range(span, { limit: 3 });
      const issued = store.openContinue(span, first.continue ?? 'missing');
      expect(issued.revision).toBe(revision);
      expect(issued.lastKey).toBe(k(ORDERED[2] ?? ''));
      await store.create(k('later'), bytes('x'));
      // A token made by a cache at the same revision resumes in storage exactly like range's own.
      const sealed = store.sealContinue(span, { revision, lastKey: k(ORDERED[2] ?? '') });
      expect(store.openContinue(span, sealed)).toMatchObject({ revision, lastKey: k(ORDERED[2] ?? '') });
      const rest = await store.range(span, { continue: sealed });
      expect(rest.revision).toBe(revision);
      expect(rest.items.map((kv) => kv.key)).toEqual(ORDERED.slice(3).map(k));
      expect(() => store.openContinue({ prefix: k('a') }, sealed)).toThrow(InvalidContinueError);
      expect(() => store.openContinue(span, `${sealed}x`)).toThrow(InvalidContinueError);
    });

    it('continue with the same revision is fine; another revision is InvalidContinueError', async () => {
      const { store, k, revision } = await seeded();
      const first = await store.range({ prefix: k('') }, { limit: 4 });
      await store.create(k('later'), bytes('x'));
      const token = first.continue ?? 'missing';
      const same = await store.range({ prefix: k('') }, { limit: 4, continue: token, revision });
      expect(same.items.map((kv) => kv.key)).toEqual(ORDERED.slice(4).map(k));
      await expectError(
        store.range({ prefix: k('') }, { continue: token, revision: revision + 1n }),
        InvalidContinueError,
        {
          code: 'STORAGE_INVALID_CONTINUE',
        },
      );
    });

    it('rejects garbled, arbitrary and foreign tokens with InvalidContinueError', async () => {
      const { store, k } = await seeded();
      const span = { prefix: k('') };
      const token = (await store.range(span, { limit: 2 })).continue ?? 'missing';
      const flip = token.slice(0, 5) + (token[5] === 'A' ? 'B' : 'A') + token.slice(6);
      for (const bad of [
        flip,
        `${token}x`,
        token.slice(0, -1),
        'not-a-token',
        'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
        '%%%',
      ]) {
        await expectError(store.range(span, { continue: bad }), InvalidContinueError);
      }
      // The same keys under another span form, and a narrower prefix: foreign tokens.
      await expectError(
        store.range({ start: k('a'), end: k('\u{10ffff}') }, { continue: token }),
        InvalidContinueError,
      );
      await expectError(store.range({ prefix: k('a') }, { continue: token }), InvalidContinueError);
    });

    it('rejects a token with a trailing character that base64 decoding would drop', async () => {
      const { store, k } = await stores.open();
      // Three last keys of consecutive lengths: one token's byte length is a multiple of 3, where
      // a lenient base64url decoder ignores one extra character and would accept the token.
      for (const name of ['p', 'pq', 'pqr', 'pqrs']) await store.create(k(name), bytes(name));
      const span = { prefix: k('p') };
      const tokens: string[] = [];
      let token = (await store.range(span, { limit: 1 })).continue;
      while (token !== undefined) {
        tokens.push(token);
        token = (await store.range(span, { limit: 1, continue: token })).continue;
      }
      expect(tokens).toHaveLength(3);
      for (const valid of tokens) {
        await expectError(store.range(span, { limit: 1, continue: `${valid}A` }), InvalidContinueError);
      }
    });

    it('keysOnly returns empty values and every other field; countOnly only the count', async () => {
      const { store, k, revision } = await seeded();
      const full = await store.range({ prefix: k('') });
      const keysOnly = await store.range({ prefix: k('') }, { keysOnly: true });
      expect(keysOnly.items.map((kv) => plainKv(kv))).toEqual(
        full.items.map((kv) => ({ ...plainKv(kv), value: '' })),
      );
      const counted = await store.range({ prefix: k('a') }, { countOnly: true });
      expect(counted).toMatchObject({ items: [], count: 3, more: false, revision });
      const pagedKeys = await readAll(store, { prefix: k('') }, { keysOnly: true, limit: 3 });
      expect(pagedKeys.flatMap((c) => c.items.map((kv) => kv.value.byteLength))).toEqual(
        ORDERED.map(() => 0),
      );
    });

    it('an empty span reads as no items, count 0, no more', async () => {
      const { store, k } = await seeded();
      const result = await store.range({ prefix: k('nothing/') }, { limit: 1 });
      expect(result).toMatchObject({ items: [], count: 0, more: false });
      expect(result.continue).toBeUndefined();
    });

    it('reads at a past revision, and rejects a revision above the current one', async () => {
      const { store, k, revision } = await seeded();
      await store.delete(k('b'));
      await store.create(k('c'), bytes('c'));
      const past = await store.range({ prefix: k('') }, { revision, limit: 5 });
      expect(past.items.map((kv) => kv.key)).toEqual(ORDERED.slice(0, 5).map(k));
      expect(past).toMatchObject({ revision, count: 8, more: true });
      const now = await store.currentRevision();
      await expectError(store.range({ prefix: k('') }, { revision: now + 1n }), RevisionTooLargeError, {
        requestedRevision: now + 1n,
        currentRevision: now,
      });
    });
  });
}
