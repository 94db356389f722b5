/**
 * One parse per write: the bytes a handler stores carry their object (ObjectJson), and the
 * protobuf storage codec encodes from it instead of parsing the JSON again, with the same bytes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { encodeForStorage, ObjectJson, type KubeObject } from '../../src/api/object.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';
import { Representations } from '../../src/representation/representations.js';
import { StorageCodec } from '../../src/representation/storage-codec.js';

const reps = new Representations(loadRegistry(), loadSchemas, () => new Date());
const codec = new StorageCodec('application/vnd.kubernetes.protobuf', () => reps.protobuf);

const OBJECTS: readonly KubeObject[] = [
  {
    kind: 'ConfigMap',
    apiVersion: 'v1',
    metadata: { name: 'c', namespace: 'default', resourceVersion: '7', labels: { a: 'b' } },
    data: { k: 'v' },
  },
  {
    kind: 'Deployment',
    apiVersion: 'apps/v1',
    metadata: { name: 'd', namespace: 'default', uid: 'u', generation: 2 },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'x' } },
      template: {
        metadata: { labels: { app: 'x' } },
        spec: { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '500m' } } }] },
      },
    },
  },
  // No protobuf form: stored as the JSON itself.
  { kind: 'Widget', apiVersion: 'example.com/v1', metadata: { name: 'w' }, spec: { size: 1 } },
];

afterEach(() => vi.restoreAllMocks());

describe('parse once', () => {
  it('encodeForStorage keeps the stored form of the object beside its bytes', () => {
    const bytes = encodeForStorage(OBJECTS[0]!);
    expect(bytes).toBeInstanceOf(ObjectJson);
    expect(JSON.parse(Buffer.from(bytes).toString('utf8'))).toEqual(bytes.object);
    expect((bytes.object['metadata'] as Record<string, unknown>)['resourceVersion']).toBeUndefined();
    // Views of the bytes are plain arrays (species), not ObjectJson without an object.
    expect(bytes.subarray(1, 3)).not.toBeInstanceOf(ObjectJson);
    expect(bytes.slice(0, 2)).not.toBeInstanceOf(ObjectJson);
  });

  it.each(OBJECTS.map((o) => [o.kind ?? '', o] as const))(
    'the protobuf storage codec stores %s from the carried object without parsing, byte-identically',
    (_kind, obj) => {
      const bytes = encodeForStorage(obj);
      const plain = Uint8Array.from(bytes);
      const fromPlain = codec.toStorage(plain);
      const parse = vi.spyOn(JSON, 'parse');
      const fromCarried = codec.toStorage(bytes);
      expect(parse).not.toHaveBeenCalled();
      expect(Buffer.from(fromCarried).equals(Buffer.from(fromPlain))).toBe(true);
    },
  );
});
