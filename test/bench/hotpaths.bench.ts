/**
 * Micro-benchmarks of the request hot paths that exist today, each beside the naive alternative
 * where there is one, so a change shows up as a ratio in one run:
 * stored-object decode/encode, resourceVersion injection, storage keys, label and field selector
 * matching, and list assembly from stored bytes.
 *
 * Run: npm run bench:micro (or npx vitest bench --run test/bench)
 */
import { bench, describe } from 'vitest';
import type { KeyValue } from '../../storage/interface.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { FieldSelector } from '../../src/resource/field-selector.js';
import { collectionSpan, objectKey } from '../../src/resource/keys.js';
import { LabelSelector } from '../../src/resource/label-selector.js';
import { listBody } from '../../src/resource/list.js';
import {
  decodeStored,
  encodeForStorage,
  withResourceVersion,
  type KubeObject,
} from '../../src/api/object.js';

/** Short runs: the machine is shared; compare within one run, not across runs. */
const OPTS = { time: 300, warmupTime: 100 };

const registry = loadRegistry();
const configmaps = registry.byResource('', 'v1', 'configmaps');
if (configmaps === undefined) throw new Error('no configmaps in the registry');

function configMap(i: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: `cm-${i}`,
      namespace: 'default',
      uid: '6f1d3c2a-0000-4000-8000-000000000000',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { app: `app-${i % 10}`, tier: i % 2 === 0 ? 'web' : 'db', 'example.com/owner': 'team-a' },
    },
    data: { payload: 'x'.repeat(1024) },
  };
}

const obj = configMap(1);
const stored = encodeForStorage(obj);
const items: KeyValue[] = Array.from({ length: 1000 }, (_, i) => ({
  key: `/configmaps/default/cm-${i}`,
  value: encodeForStorage(configMap(i)),
  createRevision: BigInt(i + 1),
  modRevision: BigInt(i + 1),
  lease: 0n,
}));

describe('stored object, ConfigMap 1 KiB', () => {
  bench(
    'decodeStored (parse + resourceVersion)',
    () => {
      decodeStored(stored, 12345n);
    },
    OPTS,
  );
  bench(
    'encodeForStorage',
    () => {
      encodeForStorage(obj);
    },
    OPTS,
  );
  bench(
    'withResourceVersion (bytes, no parse)',
    () => {
      withResourceVersion(stored, 12345n);
    },
    OPTS,
  );
  bench(
    'naive: parse, set resourceVersion, stringify',
    () => {
      const o = JSON.parse(Buffer.from(stored).toString('utf8')) as KubeObject;
      o.metadata.resourceVersion = '12345';
      Buffer.from(JSON.stringify(o));
    },
    OPTS,
  );
});

describe('storage keys', () => {
  bench(
    'objectKey',
    () => {
      objectKey(configmaps, 'default', 'cm-1');
    },
    OPTS,
  );
  bench(
    'collectionSpan',
    () => {
      collectionSpan(configmaps, 'default');
    },
    OPTS,
  );
});

describe('selectors over 1,000 objects', () => {
  const objects = items.map((kv) => decodeStored(kv.value, kv.modRevision));
  const labels = LabelSelector.parse('app in (app-1,app-2),tier!=db,example.com/owner');
  const fields = FieldSelector.parse('metadata.name!=cm-7,metadata.namespace=default', configmaps);
  bench(
    'label selector: parse',
    () => {
      LabelSelector.parse('app in (app-1,app-2),tier!=db,example.com/owner');
    },
    OPTS,
  );
  bench(
    'label selector: match 1,000',
    () => {
      let n = 0;
      for (const o of objects) if (labels.matches(o.metadata.labels)) n++;
      if (n === 0) throw new Error('selector matched nothing');
    },
    OPTS,
  );
  bench(
    'field selector: match 1,000',
    () => {
      let n = 0;
      for (const o of objects) if (fields.matches(o)) n++;
      if (n === 0) throw new Error('selector matched nothing');
    },
    OPTS,
  );
});

describe('list assembly, 1,000 ConfigMaps of 1 KiB', () => {
  bench(
    'listBody from stored bytes',
    () => {
      listBody('ConfigMapList', 'v1', { items, revision: 2000n });
    },
    OPTS,
  );
  bench(
    'naive: decode every item, stringify the list',
    () => {
      JSON.stringify({
        kind: 'ConfigMapList',
        apiVersion: 'v1',
        metadata: { resourceVersion: '2000' },
        items: items.map((kv) => decodeStored(kv.value, kv.modRevision)),
      });
    },
    OPTS,
  );
});
