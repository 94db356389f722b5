/**
 * Cost per object of JSON (JSON.stringify / JSON.parse) against the protobuf codec, for a
 * ConfigMap of about 1 KiB and a realistic Deployment, plus protobufjs's generated-type
 * encoder/decoder on the same messages (the alternative the codec was measured against: it
 * would still need a JSON ⇄ message-object conversion on top, not timed here), and list
 * assembly from cached item bytes.
 *
 * Run: npx vitest bench --run test/codec
 */
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { bench, describe } from 'vitest';
import { decodeEnvelope, encodeEnvelope } from '../../src/codec/index.js';
import { configMap1KiB, deployment } from './bench-objects.js';
import { ROOT, testCodec } from './support.js';

const codec = testCodec();

function protobufjsType(file: string, name: string): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(ROOT, 'proto', target);
  root.loadSync(file, { keepCase: true });
  return root.lookupType(name);
}

const cases = [
  {
    label: 'ConfigMap 1 KiB',
    type: 'k8s.io.api.core.v1.ConfigMap',
    file: 'k8s.io/api/core/v1/types.proto',
    obj: configMap1KiB(),
  },
  {
    label: 'Deployment',
    type: 'k8s.io.api.apps.v1.Deployment',
    file: 'k8s.io/api/apps/v1/types.proto',
    obj: deployment(),
  },
];

for (const { label, type, file, obj } of cases) {
  const json = JSON.stringify(obj);
  const bytes = codec.encodeMessage(type, obj);
  const body = codec.encodeObject(type, obj);
  const pbjs = protobufjsType(file, type);
  const pbjsMessage = pbjs.decode(bytes);

  describe(`${label}: encode (JSON ${json.length} B, protobuf ${bytes.length} B)`, () => {
    bench('JSON.stringify', () => {
      JSON.stringify(obj);
    });
    bench('codec.encodeMessage', () => {
      codec.encodeMessage(type, obj);
    });
    bench('codec.encodeObject (with envelope)', () => {
      codec.encodeObject(type, obj);
    });
    bench('protobufjs Type.encode (message object prepared)', () => {
      pbjs.encode(pbjsMessage).finish();
    });
  });

  describe(`${label}: decode`, () => {
    bench('JSON.parse', () => {
      JSON.parse(json);
    });
    bench('codec.decodeMessage', () => {
      codec.decodeMessage(type, bytes);
    });
    bench('codec.decodeObject (with envelope)', () => {
      codec.decodeObject(type, body);
    });
    bench('protobufjs Type.decode (to message object, no JSON form)', () => {
      pbjs.decode(bytes);
    });
  });
}

describe('list of 50,000 ConfigMaps from per-object caches', () => {
  const type = 'k8s.io.api.core.v1.ConfigMap';
  const items = Array.from({ length: 50_000 }, (_, i) => configMap1KiB(`cm-${i}`));
  const cachedPb = items.map((o) => codec.encodeMessage(type, o));
  const cachedJson = items.map((o) => JSON.stringify(o));
  const meta = { resourceVersion: '123456' };

  const sink: string[] = [];
  bench('JSON: join cached item texts', () => {
    sink[0] = `{"kind":"ConfigMapList","apiVersion":"v1","metadata":${JSON.stringify(meta)},"items":[${cachedJson.join(',')}]}`;
  });
  bench('protobuf: encodeListParts of cached item bytes (no copy)', () => {
    codec.encodeListParts('v1', 'ConfigMapList', meta, cachedPb);
  });
  bench('protobuf: encodeListFromItems of cached item bytes', () => {
    codec.encodeListFromItems('v1', 'ConfigMapList', meta, cachedPb);
  });
  bench('protobuf: envelope of one cached object (GET)', () => {
    decodeEnvelope(encodeEnvelope('v1', 'ConfigMap', cachedPb[0] as Uint8Array));
  });
});
