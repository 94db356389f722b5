/**
 * The per-request store of custom resources over a real memory store: reads under the kind's
 * prefix come back in the request's version and defaulted (kube defaults on read from storage),
 * writes are stored in the storage version, other keys pass through untouched, and a watch's
 * events are converted too.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { encodeForStorage, type KubeObject } from '../../src/api/object.js';
import { ConvertingStore } from '../../src/apiextensions/converting-store.js';
import { convertNone } from '../../src/apiextensions/webhook.js';

const text = (v: Uint8Array): KubeObject => JSON.parse(Buffer.from(v).toString('utf8')) as KubeObject;

function defaults(obj: KubeObject): void {
  const spec = (obj['spec'] ?? {}) as Record<string, unknown>;
  spec['size'] ??= 1;
  obj['spec'] = spec;
}

describe('the converting store', () => {
  it('converts and defaults reads, stores writes in the storage version', async () => {
    const inner = await openMemoryStore();
    const store = new ConvertingStore(inner, '/g.io/things/', 'g.io/v2', 'g.io/v1', convertNone, defaults);
    await inner.create(
      '/g.io/things/ns/a',
      encodeForStorage({ apiVersion: 'g.io/v1', kind: 'Thing', metadata: { name: 'a' }, spec: {} }),
    );
    await inner.create('/configmaps/ns/x', Buffer.from('{"kind":"ConfigMap","metadata":{}}'));
    const got = await store.get('/g.io/things/ns/a');
    expect(text(got.kv?.value ?? new Uint8Array())).toMatchObject({
      apiVersion: 'g.io/v2',
      spec: { size: 1 },
    });
    const other = await store.get('/configmaps/ns/x');
    expect(Buffer.from(other.kv?.value ?? []).toString('utf8')).toBe('{"kind":"ConfigMap","metadata":{}}');
    const listed = await store.range({ prefix: '/g.io/things/' });
    expect(listed.items.map((kv) => text(kv.value).apiVersion)).toEqual(['g.io/v2']);
    const watch = store.watch({ prefix: '/g.io/things/' }, { fromRevision: listed.revision + 1n });
    await store.create(
      '/g.io/things/ns/b',
      encodeForStorage({ apiVersion: 'g.io/v2', kind: 'Thing', metadata: { name: 'b' }, spec: { size: 3 } }),
    );
    const stored = await inner.get('/g.io/things/ns/b');
    expect(text(stored.kv?.value ?? new Uint8Array())).toMatchObject({
      apiVersion: 'g.io/v1',
      spec: { size: 3 },
    });
    for await (const ev of watch) {
      expect(ev.type).toBe('put');
      if (ev.type === 'put')
        expect(text(ev.kv.value)).toMatchObject({ apiVersion: 'g.io/v2', spec: { size: 3 } });
      break;
    }
    watch.close();
    await inner.close();
  });
});
