/**
 * Model test of the engine's layout: random writes, compactions and restarts against a plain
 * reference model; then every retained revision is read back (get, range, paged range) and
 * the watch history is replayed. Small recent-log bounds force the disk paths (prevKv loads,
 * history reads) that the in-memory tail would otherwise hide.
 */
import fc from 'fast-check';
import { MemoryLevel } from 'memory-level';
import { describe, expect, it } from 'vitest';
import { CompactedError } from '../../../storage/errors.js';
import type { KeyValue, Store, WatchEvent } from '../../../storage/interface.js';
import { openMemoryStore, type MvccOptions } from '../../../storage/mvcc/index.js';

type Op =
  | { kind: 'put'; key: string; value: string; guard: boolean }
  | { kind: 'delete'; key: string }
  | { kind: 'compact'; back: number }
  | { kind: 'restart' };

interface Version {
  value: string;
  createRevision: bigint;
  modRevision: bigint;
}

/** Keys' version histories; `undefined` marks a deletion. */
class Model {
  readonly history = new Map<string, { rev: bigint; version: Version | undefined }[]>();
  revision = 1n;
  compacted = 0n;

  at(key: string, rev: bigint): Version | undefined {
    const versions = this.history.get(key) ?? [];
    let found: Version | undefined;
    for (const v of versions) if (v.rev <= rev) found = v.version;
    return found;
  }

  write(key: string, version: Version | undefined): void {
    const list = this.history.get(key) ?? [];
    list.push({ rev: this.revision, version });
    this.history.set(key, list);
  }

  keysAt(rev: bigint): string[] {
    return [...this.history.keys()]
      .filter((k) => this.at(k, rev) !== undefined)
      .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  }
}

const keyArb = fc.constantFrom('a', 'a/1', 'a/2', 'b', 'b/x', 'c\u0000', 'é');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('put' as const),
      key: keyArb,
      value: fc.string({ maxLength: 6 }),
      guard: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), key: keyArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), back: fc.nat(6) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
);

const show = (kv: KeyValue | undefined): string | undefined =>
  kv === undefined ? undefined : `${Buffer.from(kv.value).toString()}|${kv.createRevision}|${kv.modRevision}`;
const showV = (v: Version | undefined): string | undefined =>
  v === undefined ? undefined : `${v.value}|${v.createRevision}|${v.modRevision}`;

async function apply(store: Store, model: Model, op: Op): Promise<Store> {
  if (op.kind === 'put') {
    const current = model.at(op.key, model.revision);
    const result = await store.txn({
      key: op.key,
      ifModRevision: op.guard ? (current?.modRevision ?? 0n) : undefined,
      then: { op: 'put', value: Buffer.from(op.value) },
    });
    model.revision++;
    expect(result.revision).toBe(model.revision);
    model.write(op.key, {
      value: op.value,
      createRevision: current?.createRevision ?? model.revision,
      modRevision: model.revision,
    });
  } else if (op.kind === 'delete') {
    const current = model.at(op.key, model.revision);
    if (current === undefined) {
      await expect(store.delete(op.key)).rejects.toMatchObject({ code: 'STORAGE_NOT_FOUND' });
      return store;
    }
    const result = await store.delete(op.key);
    expect(show(result.kv)).toBe(showV(current));
    model.revision++;
    model.write(op.key, undefined);
  } else if (op.kind === 'compact') {
    const target = model.revision - BigInt(op.back);
    await store.compact(target > 1n ? target : 1n);
    if (target > model.compacted) model.compacted = target;
  }
  return store;
}

async function verify(store: Store, model: Model): Promise<void> {
  expect(await store.currentRevision()).toBe(model.revision);
  const from = model.compacted > 1n ? model.compacted : 1n;
  for (let rev = from; rev <= model.revision; rev++) {
    const expected = model.keysAt(rev);
    const all = await store.range({ prefix: '' }, { revision: rev });
    expect(all.items.map((kv) => kv.key)).toEqual(expected);
    for (const kv of all.items) expect(show(kv)).toBe(showV(model.at(kv.key, rev)));
    // Paged by two: the same keys, same revision, and counts of what remains.
    const paged: string[] = [];
    let token: string | undefined;
    do {
      const chunk = await store.range(
        { prefix: '' },
        token === undefined ? { revision: rev, limit: 2 } : { limit: 2, continue: token },
      );
      expect(chunk.count).toBe(expected.length - paged.length);
      paged.push(...chunk.items.map((kv) => kv.key));
      token = chunk.continue;
    } while (token !== undefined);
    expect(paged).toEqual(expected);
    expect((await store.range({ prefix: 'a/' }, { revision: rev, countOnly: true })).count).toBe(
      expected.filter((k) => k.startsWith('a/')).length,
    );
    for (const key of model.history.keys())
      expect(show((await store.get(key, { revision: rev })).kv)).toBe(showV(model.at(key, rev)));
  }
  if (model.compacted > 1n) {
    await expect(store.get('a', { revision: model.compacted - 1n })).rejects.toBeInstanceOf(CompactedError);
  }
  // The watch history from the compacted revision + 1 replays every later write with its prevKv.
  const watchFrom = model.compacted + 1n > 2n ? model.compacted + 1n : 2n;
  const watch = store.watch({ prefix: '' }, { fromRevision: watchFrom });
  const events: WatchEvent[] = [];
  if (watchFrom <= model.revision) {
    for await (const event of watch) {
      events.push(event);
      if (event.revision === model.revision) break;
    }
  }
  watch.close();
  expect(events.map((e) => e.revision)).toEqual(
    Array.from({ length: Number(model.revision - watchFrom + 1n) }, (_, i) => watchFrom + BigInt(i)),
  );
  for (const event of events) {
    if (event.type === 'progress') continue;
    const before = model.at(event.kv.key, event.revision - 1n);
    expect(show(event.prevKv)).toBe(showV(before));
    if (event.type === 'put') expect(show(event.kv)).toBe(showV(model.at(event.kv.key, event.revision)));
    else expect(model.at(event.kv.key, event.revision)).toBeUndefined();
  }
}

describe('mvcc store against a reference model', () => {
  it('agrees at every retained revision, across compactions and restarts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
        const memoryLevel = new MemoryLevel<Buffer, Buffer>({
          keyEncoding: 'buffer',
          valueEncoding: 'buffer',
        });
        const options: MvccOptions = { memoryLevel, recentEntries: 3, recentBytes: 1, compactionChunk: 2 };
        let store = await openMemoryStore(options);
        const model = new Model();
        try {
          for (const op of ops) {
            if (op.kind === 'restart') {
              await store.close();
              store = await openMemoryStore(options);
            } else {
              store = await apply(store, model, op);
            }
          }
          await verify(store, model);
        } finally {
          await store.close();
        }
      }),
      { numRuns: 60 },
    );
  });
});
