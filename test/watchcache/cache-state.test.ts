/**
 * The watch cache's state against a model: after any sequence of puts and deletes, a snapshot is
 * every live key's latest version in the store's key order, and a snapshot taken earlier never
 * changes. Keys include units above U+D800, where UTF-16 order and key order differ.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CacheState } from '../../src/watchcache/cache-state.js';
import { compareKeyOrder } from '../../src/watchcache/key-order.js';
import { ObjectVersion } from '../../src/watchcache/object-version.js';

type Op =
  | { readonly op: 'put'; readonly key: string }
  | { readonly op: 'delete'; readonly key: string }
  | { readonly op: 'snapshot' }
  | { readonly op: 'burst'; readonly count: number };

const EMPTY = new Uint8Array(0);
const KEY_PARTS = ['a', 'b', 'ab', 'z', '\u00e9', '\ue000', '\uffff', '\ud83d\ude00', '\ud800\udc00'];
const keyArb = fc
  .array(fc.constantFrom(...KEY_PARTS), { minLength: 1, maxLength: 3 })
  .map((parts) => `/configmaps/ns/${parts.join('')}`);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: keyArb.map((key) => ({ op: 'put' as const, key })) },
  { weight: 3, arbitrary: keyArb.map((key) => ({ op: 'delete' as const, key })) },
  { weight: 2, arbitrary: fc.constant({ op: 'snapshot' as const }) },
  // Many new keys at once: past the in-place threshold and the forced-rebuild floor.
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 1500 }).map((count) => ({ op: 'burst' as const, count })),
  },
);

const view = (items: readonly ObjectVersion[]): [string, bigint][] => items.map((v) => [v.key, v.revision]);

describe('CacheState', () => {
  it('matches the model: live keys in key order, latest versions, frozen snapshots', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 120 }), (ops) => {
        const state = new CacheState();
        const model = new Map<string, bigint>();
        const taken: { items: readonly ObjectVersion[]; expected: [string, bigint][] }[] = [];
        let revision = 0n;
        const expected = (): [string, bigint][] =>
          [...model].sort(([a], [b]) => compareKeyOrder(a, b)).map(([k, r]) => [k, r]);
        const put = (key: string): void => {
          revision++;
          state.put(new ObjectVersion(key, EMPTY, revision));
          model.set(key, revision);
        };
        for (const o of ops) {
          if (o.op === 'put') put(o.key);
          else if (o.op === 'delete') {
            state.delete(o.key);
            model.delete(o.key);
          } else if (o.op === 'burst') {
            for (let i = 0; i < o.count; i++) put(`/configmaps/ns/burst-${revision}-${i}`);
          } else {
            const items = state.snapshot();
            expect(view(items)).toEqual(expected());
            taken.push({ items, expected: view(items) });
          }
          expect(state.size).toBe(model.size);
        }
        expect(view(state.snapshot())).toEqual(expected());
        for (const key of model.keys()) expect(state.get(key)?.revision).toBe(model.get(key));
        for (const t of taken) expect(view(t.items)).toEqual(t.expected);
      }),
      { numRuns: 300 },
    );
  });
});
