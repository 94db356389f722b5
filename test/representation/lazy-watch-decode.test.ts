/**
 * Watch events through the transcoding store are decoded when first read, not when delivered: the
 * watch cache keeps every event of its type, and a server that takes writes but serves no list or
 * watch of the type never decodes them. Reads give the same bytes as an eager decode.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeForStorage, type KubeObject } from '../../src/api/object.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';
import { Representations } from '../../src/representation/representations.js';
import { StorageCodec } from '../../src/representation/storage-codec.js';
import { transcodingStore } from '../../src/representation/transcoding-store.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { readyTypeCache } from './type-cache.js';
import type { Store, WatchEvent } from '../../storage/interface.js';

const reps = new Representations(loadRegistry(), loadSchemas, () => new Date());

const configMap = (name: string, value: string): KubeObject => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name, namespace: 'default', uid: `uid-${name}` },
  data: { k: value },
});

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

let closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
  vi.restoreAllMocks();
});

async function setUp(): Promise<{ codec: StorageCodec; store: Store }> {
  const codec = new StorageCodec('application/vnd.kubernetes.protobuf', () => reps.protobuf);
  const store = transcodingStore(await openMemoryStore(), codec);
  closers.push(() => store.close());
  return { codec, store };
}

describe('lazy decoding of watch events', () => {
  it('decodes an event value on its first read only, to the bytes a read gives', async () => {
    const { codec, store } = await setUp();
    const decode = vi.spyOn(codec, 'fromStorageParsed');
    const watch = store.watch({ prefix: '/configmaps/' });
    closers.push(() => watch.close());
    await store.create('/configmaps/default/a', encodeForStorage(configMap('a', 'one')));
    const events = watch[Symbol.asyncIterator]();
    const ev: WatchEvent | undefined = (await events.next()).value as WatchEvent | undefined;
    if (ev?.type !== 'put') throw new Error(`expected a put, got ${JSON.stringify(ev?.type)}`);
    expect(decode).not.toHaveBeenCalled();
    const first = ev.kv.value;
    expect(decode).toHaveBeenCalledTimes(1);
    expect(ev.kv.value).toBe(first);
    expect(decode).toHaveBeenCalledTimes(1);
    const read = await store.get('/configmaps/default/a');
    expect(text(first)).toBe(text(read.kv?.value ?? new Uint8Array()));
    expect(JSON.parse(text(first))).toMatchObject({ kind: 'ConfigMap', data: { k: 'one' } });
  });

  it('the watch cache decodes no event until a version is read, then that one alone', async () => {
    const { codec, store } = await setUp();
    const cache = await readyTypeCache(store, '/configmaps/');
    closers.push(() => cache.close());
    const decode = vi.spyOn(codec, 'fromStorageParsed');
    let last = 0n;
    for (let i = 0; i < 20; i++) {
      const key = `/configmaps/default/c${i}`;
      last = (await store.create(key, encodeForStorage(configMap(`c${i}`, `v${i}`)))).revision;
    }
    expect(await cache.waitFresh(last, 5_000)).toBe(true);
    expect(decode).not.toHaveBeenCalled();
    const version = cache.get('/configmaps/default/c7');
    expect(version?.object()).toMatchObject({
      data: { k: 'v7' },
      metadata: { resourceVersion: String(version?.revision) },
    });
    expect(decode).toHaveBeenCalledTimes(1);
    // The same version read again, and shown at another revision, decodes nothing more.
    expect(text(version?.at((version?.revision ?? 0n) + 5n).value ?? new Uint8Array())).toBe(
      text(version?.value ?? new Uint8Array()),
    );
    expect(decode).toHaveBeenCalledTimes(1);
  });
});
