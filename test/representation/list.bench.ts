/**
 * LIST of 50,000 ConfigMaps of about 1 KiB through the resource routes (inject, in-memory store),
 * JSON against protobuf, with the store holding JSON and holding protobuf (`--storage-media-type`).
 * Prints the body size of each once. The items are written straight into the store.
 *
 * Run: npx vitest bench --run test/representation/list.bench.ts
 */
import { bench, describe } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { encodeForStorage, type KubeObject } from '../../src/api/object.js';
import { configMap1KiB } from '../codec/bench-objects.js';
import { startResourceApp, type ResourceApp } from '../server/resources.support.js';
import { StorageCodec } from '../../src/representation/storage-codec.js';
import { Representations } from '../../src/representation/representations.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';

const COUNT = 50_000;
const URL = '/api/v1/namespaces/default/configmaps';
const PB = 'application/vnd.kubernetes.protobuf';

async function seeded(media: 'application/json' | typeof PB): Promise<ResourceApp> {
  const store = await openMemoryStore();
  const reps = new Representations(loadRegistry(), loadSchemas, () => new Date());
  const codec = new StorageCodec(media, () => reps.protobuf);
  for (let i = 0; i < COUNT; i++) {
    const cm = configMap1KiB(`cm-${String(i).padStart(6, '0')}`) as KubeObject;
    await store.create(`/configmaps/default/${cm.metadata.name}`, codec.toStorage(encodeForStorage(cm)));
  }
  return startResourceApp({ store, storageMediaType: media, startControllers: false });
}

const apps = {
  json: await seeded('application/json'),
  protobuf: await seeded(PB),
};

for (const [storage, app] of Object.entries(apps)) {
  for (const accept of ['application/json', PB]) {
    const r = await app.app.inject({ method: 'GET', url: URL, headers: { accept } });
    console.log(`storage ${storage}, Accept ${accept}: ${r.statusCode}, ${r.rawPayload.length} bytes`);
  }
}

describe(`LIST ${COUNT} ConfigMaps`, () => {
  for (const [storage, app] of Object.entries(apps)) {
    for (const accept of ['application/json', PB]) {
      bench(
        `storage ${storage} → ${accept}`,
        async () => {
          await app.app.inject({ method: 'GET', url: URL, headers: { accept } });
        },
        { iterations: 3, warmupIterations: 1, time: 0 },
      );
    }
  }
});
