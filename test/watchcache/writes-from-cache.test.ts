/**
 * Updates, patches and deletes start from the watch cache's copy of the object (no storage read)
 * and stay correct when that copy is stale: the watch feeding the cache is held shut while
 * another server (storage only, same store) changes the object, so the cache's copy is stale for
 * certain. Every write must then act on the stored object, as if there were no cache.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { WatchCaches } from '../../src/watchcache/cache-set.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { json, startResourceApp, type KObj, type ResourceApp } from '../server/resources.support.js';
import { countingGets, Gate, heldWatch, overriding } from '../support/store-wrappers.js';

const CM = '/api/v1/namespaces/default/configmaps';

const reads = { gets: 0 };
const gate = new Gate();
let caches: WatchCaches;
let cached: ResourceApp;
let storageOnly: ResourceApp;
const configMaps = loadRegistry().byResource('', 'v1', 'configmaps');

async function cm(
  app: ResourceApp,
  method: string,
  path: string,
  body?: unknown,
  type?: string,
): Promise<KObj> {
  const res = await app.request({
    ...json(method, `${CM}${path}`, body),
    ...(type === undefined ? {} : { headers: { 'content-type': type } }),
  });
  return Object.assign(res.json(), { code: res.statusCode });
}

/** The body of a PUT (or create) of ConfigMap x with `data`. */
function configMapX(data: Record<string, string>): KObj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data };
}

beforeAll(async () => {
  const store = await openMemoryStore();
  // Every watch of the cache is held while the gate is shut: the cache stops seeing changes.
  const gated = overriding(store, { watch: (span, options) => heldWatch(store.watch(span, options), gate) });
  caches = new WatchCaches({ store: gated, defaultSize: 100, bookmarkIntervalMs: 60_000 });
  cached = await startResourceApp({ store: countingGets(store, reads), watchCache: caches });
  storageOnly = await startResourceApp({ store, watchCache: false });
  await cached.request(
    json('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'default' },
    }),
  );
  await cm(cached, 'POST', '', configMapX({ v: '1' }));
  const cache = caches.for(configMaps!);
  for (let i = 0; i < 300 && cache?.get('/configmaps/default/x') === undefined; i++)
    await new Promise((r) => setTimeout(r, 10));
  expect(cache?.ready).toBe(true);
});

afterAll(async () => {
  gate.open();
  caches.close();
  await storageOnly.app.close();
  await cached.close();
});

describe('writes that start from a stale cached copy', () => {
  it('read nothing from storage when the cached copy is current', async () => {
    reads.gets = 0;
    const patched = await cm(cached, 'PATCH', '/x', { data: { u: '0' } }, 'application/merge-patch+json');
    expect(patched['code']).toBe(200);
    expect(reads.gets).toBe(0);
    // Let the cache see that write before the stale cases start.
    const cache = caches.for(configMaps!);
    for (
      let i = 0;
      i < 300 &&
      cache?.get('/configmaps/default/x')?.revision !== BigInt(patched.metadata.resourceVersion ?? '0');
      i++
    )
      await new Promise((r) => setTimeout(r, 10));
  });

  it('act on the stored object: a PUT equal to the stale copy is still written, a patch merges into the stored state', async () => {
    gate.shut();
    const stale = caches.for(configMaps!)?.get('/configmaps/default/x')?.revision;
    const changed = await cm(storageOnly, 'PUT', '/x', configMapX({ v: '2' }));
    expect(changed['code']).toBe(200);
    // Equal to the cache's (stale) copy: without a storage check this would be taken as a no-op.
    const put = await cm(cached, 'PUT', '/x', configMapX({ u: '0', v: '1' }));
    expect(put['code']).toBe(200);
    expect(put.data).toEqual({ u: '0', v: '1' });
    expect(BigInt(put.metadata.resourceVersion ?? '0')).toBeGreaterThan(
      BigInt(changed.metadata.resourceVersion ?? '0'),
    );
    expect((await cm(storageOnly, 'GET', '/x')).data).toEqual({ u: '0', v: '1' });

    await cm(storageOnly, 'PATCH', '/x', { data: { w: '2' } }, 'application/merge-patch+json');
    const patched = await cm(cached, 'PATCH', '/x', { data: { z: '3' } }, 'application/merge-patch+json');
    expect(patched.data).toEqual({ u: '0', v: '1', w: '2', z: '3' });
    expect(caches.for(configMaps!)?.get('/configmaps/default/x')?.revision).toBe(stale);
  });

  it('rebuild a lost race on the object its failed compare found, without reading storage', async () => {
    const changed = await cm(
      storageOnly,
      'PATCH',
      '/x',
      { data: { s: '1' } },
      'application/merge-patch+json',
    );
    reads.gets = 0;
    // Starts from the stale cached copy; the write's compare fails and carries the stored object.
    const put = await cm(cached, 'PUT', '/x', configMapX({ fresh: 'yes' }));
    expect(put['code']).toBe(200);
    expect(reads.gets).toBe(0);
    expect(BigInt(put.metadata.resourceVersion ?? '0')).toBeGreaterThan(
      BigInt(changed.metadata.resourceVersion ?? '0'),
    );
    expect((await cm(storageOnly, 'GET', '/x')).data).toEqual({ fresh: 'yes' });
  });

  it('judge a resourceVersion precondition by the stored object, not the stale copy', async () => {
    const current = await cm(storageOnly, 'GET', '/x');
    const body = { ...current, data: { v: 'pinned' } };
    const ok = await cm(cached, 'PUT', '/x', body);
    expect(ok['code']).toBe(200);
    // The same (now old) version again: a real conflict.
    const again = await cm(cached, 'PUT', '/x', body);
    expect(again['code']).toBe(409);
  });

  it('delete with a uid precondition and the stored state', async () => {
    const current = await cm(storageOnly, 'GET', '/x');
    const gone = await cm(cached, 'DELETE', '/x', { preconditions: { uid: current.metadata.uid } });
    expect(gone['code']).toBe(200);
    expect((await cm(storageOnly, 'GET', '/x'))['code']).toBe(404);
    gate.open();
  });
});
