/**
 * Random operation sequences against the in-process server on memory-level (offline), checked
 * against one reference model: the consistent list (from the watch cache), the `resourceVersion=0`
 * list, a chunked list (storage, limit 2), an Exact list at a version seen mid-way, and a watch
 * started before the sequence, whose events folded in order must give the model's final state.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { json, startResourceApp, type KObj } from './resources.support.js';
import { openWatchStream, readyCache, testCaches } from './watch.support.js';

const CM = '/api/v1/namespaces/default/configmaps';
const NAMES = ['a', 'b', 'c', 'd', 'e'];

type Op = { kind: 'put'; name: string; value: string } | { kind: 'delete'; name: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('put' as const),
    name: fc.constantFrom(...NAMES),
    value: fc.string({ maxLength: 4 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom(...NAMES) }),
);

type Model = Map<string, string>;

function items(body: KObj): Record<string, string> {
  return Object.fromEntries((body.items ?? []).map((i) => [i.metadata.name ?? '', i.data?.['v'] ?? '']));
}

describe('lists and watches against a reference model', () => {
  it('agree after random create/update/delete sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const store = await openMemoryStore();
        const caches = testCaches(store);
        const s = await startResourceApp({ store, watchCache: caches });
        try {
          await readyCache(caches);
          const base = await s.listen();
          const startRv = (await s.request(json('GET', CM))).json().metadata.resourceVersion ?? '';
          const w = await openWatchStream(base, `${CM}?watch=1&resourceVersion=${startRv}`);
          const model: Model = new Map();
          let midRv = startRv;
          let midModel: Model = new Map();
          let lastRv = startRv;
          for (const [i, o] of ops.entries()) {
            if (o.kind === 'put') {
              const body = { metadata: { name: o.name }, data: { v: o.value } };
              const r = model.has(o.name)
                ? await s.request(json('PUT', `${CM}/${o.name}`, body))
                : await s.request(json('POST', CM, body));
              expect(r.statusCode, r.body).toBeLessThan(300);
              model.set(o.name, o.value);
              lastRv = r.json().metadata.resourceVersion ?? lastRv;
            } else {
              const r = await s.request(json('DELETE', `${CM}/${o.name}`));
              expect(r.statusCode).toBe(model.has(o.name) ? 200 : 404);
              if (model.delete(o.name)) lastRv = String(await store.currentRevision());
            }
            if (i === Math.floor(ops.length / 2)) {
              midRv = String(await store.currentRevision());
              midModel = new Map(model);
            }
          }
          const want = Object.fromEntries(model);
          expect(items((await s.request(json('GET', CM))).json())).toEqual(want);
          expect(items((await s.request(json('GET', `${CM}?resourceVersion=${lastRv}`))).json())).toEqual(
            want,
          );
          let paged: Record<string, string> = {};
          let cont = '';
          do {
            const r = (
              await s.request(
                json('GET', `${CM}?limit=2${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`),
              )
            ).json();
            paged = { ...paged, ...items(r) };
            cont = r.metadata.continue ?? '';
          } while (cont !== '');
          expect(paged).toEqual(want);
          const exact = (
            await s.request(json('GET', `${CM}?resourceVersion=${midRv}&resourceVersionMatch=Exact`))
          ).json();
          expect(items(exact)).toEqual(Object.fromEntries(midModel));
          // The watch, folded in order, reaches the same state by the last change's version.
          const folded: Model = new Map();
          let seen = BigInt(startRv);
          while (seen < BigInt(lastRv)) {
            const ev = await w.next();
            if (ev === undefined) break;
            const name = ev.object?.metadata.name ?? '';
            const rv = BigInt(ev.object?.metadata.resourceVersion ?? '0');
            expect(rv).toBeGreaterThan(seen);
            seen = rv;
            if (ev.type === 'DELETED') folded.delete(name);
            else folded.set(name, ev.object?.data?.['v'] ?? '');
          }
          await w.close();
          expect(Object.fromEntries(folded)).toEqual(want);
        } finally {
          await s.close();
        }
      }),
      { numRuns: 12, seed: 7 },
    );
  });
});
