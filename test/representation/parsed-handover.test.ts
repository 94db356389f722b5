/**
 * The object a protobuf decode makes is handed to the watch cache instead of parsed again: the
 * transcoding store's watch events offer it (`parsed`) to the call that decodes their value, and
 * `ObjectVersion.object()` takes it. It must be the object the JSON bytes would parse to, for
 * every kind with a protobuf form.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeForStorage, type KubeObject } from '../../src/api/object.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';
import { Representations } from '../../src/representation/representations.js';
import { StorageCodec } from '../../src/representation/storage-codec.js';
import { transcodingStore } from '../../src/representation/transcoding-store.js';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { readyTypeCache } from './type-cache.js';

const reps = new Representations(loadRegistry(), loadSchemas, () => new Date());
const codec = (): StorageCodec =>
  new StorageCodec('application/vnd.kubernetes.protobuf', () => reps.protobuf);
const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');
const FIXTURES = join(import.meta.dirname, '../../fixtures/protobuf');

let closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
  vi.restoreAllMocks();
});

describe('the decoded object handed over', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.pb'));

  it('is, for every golden protobuf value, the object its JSON text parses to', () => {
    expect(files.length).toBeGreaterThan(50);
    const c = codec();
    for (const file of files) {
      const decoded = c.fromStorageParsed(new Uint8Array(readFileSync(join(FIXTURES, file))));
      expect(decoded.parsed, file).toBeDefined();
      expect(decoded.parsed, file).toStrictEqual(JSON.parse(text(decoded.value)));
    }
  });

  it('is none for JSON values, which pass through', () => {
    const value = encodeForStorage({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' } });
    expect(codec().fromStorageParsed(value)).toStrictEqual({ value });
  });

  it('is what the watch cache gives as a new version object, with no second parse', async () => {
    const c = codec();
    const store = transcodingStore(await openMemoryStore(), c);
    closers.push(() => store.close());
    const cache = await readyTypeCache(store, '/pods/');
    closers.push(() => cache.close());
    const decode = vi.spyOn(c, 'fromStorageParsed');
    const pod: KubeObject = {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { name: 'p', namespace: 'default', uid: 'u', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    };
    const { revision } = await store.create('/pods/default/p', c.encode(pod));
    expect(await cache.waitFresh(revision, 5_000)).toBe(true);
    const version = cache.get('/pods/default/p');
    const object = version?.object();
    expect(decode).toHaveBeenCalledTimes(1);
    const result: unknown = decode.mock.results[0]?.value;
    expect(object).toBe((result as { parsed?: unknown } | undefined)?.parsed);
    expect(object).toStrictEqual(JSON.parse(text(version?.json() ?? new Uint8Array())));
    expect(object?.metadata.resourceVersion).toBe(String(revision));
    // Shown at another revision, the same bytes are parsed afresh: the handed object is not shared.
    const later = version?.at(revision + 3n).object();
    expect(later).not.toBe(object);
    expect(later?.metadata.resourceVersion).toBe(String(revision + 3n));
    expect(object?.metadata.resourceVersion).toBe(String(revision));
  });
});
