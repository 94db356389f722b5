/**
 * `StorageCodec.encode`: the value a handler hands the store for an object. With protobuf storage
 * it is the protobuf envelope made straight from the object, byte for byte what the JSON path
 * (`toStorage(encodeForStorage(obj))`) stores, and `toStorage` passes it through; kinds the JSON
 * path converts or cannot encode as protobuf still take that path.
 */
import { describe, expect, it } from 'vitest';
import { encodeForStorage, ObjectJson, type KubeObject } from '../../src/api/object.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';
import { Representations } from '../../src/representation/representations.js';
import { EncodedObject, StorageCodec } from '../../src/representation/storage-codec.js';

const reps = new Representations(loadRegistry(), loadSchemas, () => new Date());
const protobuf = new StorageCodec('application/vnd.kubernetes.protobuf', () => reps.protobuf);
const json = new StorageCodec('application/json', () => reps.protobuf);

const pod: KubeObject = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: {
    name: 'web-1',
    namespace: 'default',
    resourceVersion: '12',
    uid: '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9',
    creationTimestamp: '2026-12-06T00:00:00Z',
    labels: { app: 'web' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'u', controller: true }],
  },
  spec: {
    containers: [{ name: 'nginx', image: 'nginx', resources: { requests: { cpu: '100m' } } }],
  },
  status: { phase: 'Pending' },
};
const configMap: KubeObject = {
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: 'c', namespace: 'default', annotations: {} },
  data: { payload: 'x'.repeat(1024) },
};

describe('StorageCodec.encode', () => {
  it.each([
    ['Pod', pod],
    ['ConfigMap', configMap],
  ])('%s: the protobuf the JSON path stores, made without JSON, and passed through', (_n, obj) => {
    const before = JSON.stringify(obj);
    const encoded = protobuf.encode(obj);
    expect(encoded).toBeInstanceOf(EncodedObject);
    expect(Buffer.from(encoded)).toEqual(Buffer.from(protobuf.toStorage(encodeForStorage(obj))));
    expect(protobuf.toStorage(encoded)).toBe(encoded);
    // The read form of both is the same object, without the resourceVersion.
    const read = JSON.parse(Buffer.from(protobuf.fromStorage(encoded)).toString('utf8')) as KubeObject;
    expect(read.metadata.name).toBe(obj.metadata.name);
    expect(read.metadata.resourceVersion).toBeUndefined();
    expect(JSON.stringify(obj)).toBe(before); // not modified
  });

  it('takes the JSON path for kinds stored in another version and for kinds without protobuf', () => {
    const event: KubeObject = {
      kind: 'Event',
      apiVersion: 'events.k8s.io/v1',
      metadata: { name: 'e', namespace: 'default' },
      eventTime: '2026-12-06T00:00:00.000000Z',
      reason: 'R',
      action: 'A',
      reportingController: 'c',
      reportingInstance: 'i',
      type: 'Normal',
    };
    const custom: KubeObject = { kind: 'Widget', apiVersion: 'example.com/v1', metadata: { name: 'w' } };
    for (const obj of [event, custom]) {
      const encoded = protobuf.encode(obj);
      expect(encoded).toBeInstanceOf(ObjectJson);
      expect(Buffer.from(protobuf.toStorage(encoded))).toEqual(
        Buffer.from(protobuf.toStorage(encodeForStorage(obj))),
      );
    }
  });

  it('with JSON storage gives the JSON layout', () => {
    expect(Buffer.from(json.encode(pod))).toEqual(Buffer.from(encodeForStorage(pod)));
  });
});
