/**
 * The serialization-cache contract of the representations: with a source that caches by key (as
 * the watch cache's object versions do), every format encodes an object version once, however
 * many watchers and lists ask.
 */
import { describe, expect, it } from 'vitest';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';
import type { KubeObject } from '../../src/api/object.js';
import { Representations } from '../../src/representation/representations.js';
import type { ObjectSource } from '../../src/representation/types.js';

/** A source that caches encodings and counts how often each key was produced. */
class CountingSource implements ObjectSource {
  readonly produced = new Map<string, number>();
  readonly #cache = new Map<string, Uint8Array>();
  readonly #obj: KubeObject;
  constructor(obj: KubeObject) {
    this.#obj = obj;
  }
  object(): KubeObject {
    return this.#obj;
  }
  json(): Uint8Array {
    return this.encoded('json', () => Buffer.from(JSON.stringify(this.#obj)));
  }
  encoded(key: string, produce: () => Uint8Array): Uint8Array {
    let bytes = this.#cache.get(key);
    if (bytes === undefined) {
      bytes = produce();
      this.#cache.set(key, bytes);
      this.produced.set(key, (this.produced.get(key) ?? 0) + 1);
    }
    return bytes;
  }
}

const registry = loadRegistry();
const reps = new Representations(registry, loadSchemas, () => new Date());
const type = registry.byResource('', 'v1', 'configmaps');
if (type === undefined) throw new Error('no configmaps');

describe('each object version is encoded once per format', () => {
  it.each([
    ['json', { format: 'json' as const }],
    ['protobuf', { format: 'protobuf' as const }],
    [
      'protobuf metadata-only',
      {
        format: 'protobuf' as const,
        transform: { kind: 'PartialObjectMetadataList' as const, version: 'v1' as const },
      },
    ],
  ])('%s: 1,000 watchers and 10 lists', (_name, negotiated) => {
    const source = new CountingSource({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'x', namespace: 'default', resourceVersion: '5' },
      data: { a: 'b' },
    });
    const frames = new Set<Uint8Array>();
    for (let i = 0; i < 1000; i++) {
      // Each watcher has its own representation object, as each request does.
      frames.add(reps.representation(negotiated, type, undefined).event('ADDED', source));
    }
    for (let i = 0; i < 10; i++) {
      reps.representation(negotiated, type, undefined).list({ resourceVersion: '5' }, [source]);
    }
    expect(frames.size).toBe(1);
    expect([...source.produced.values()].every((n) => n === 1)).toBe(true);
    expect(source.produced.size).toBeGreaterThan(0);
  });
});
