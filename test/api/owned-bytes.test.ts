/**
 * Bytes kept for long have a backing store of their own: a small pooled Buffer (Node's 8 KiB
 * slabs) kept alive keeps its whole slab, which a cache holding thousands of versions multiplies.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryStore } from '../../storage/mvcc/index.js';
import { ownedUtf8 } from '../../src/api/bytes.js';
import { encodeForStorage, withResourceVersion } from '../../src/api/object.js';

/** True when `bytes` is the whole of its backing store. */
const owned = (bytes: Uint8Array): boolean =>
  bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.byteLength;

describe('owned bytes', () => {
  it('pooled small Buffers are slices of a larger slab (what the helpers avoid)', () => {
    expect(owned(Buffer.from('{"a":1}'))).toBe(false);
  });

  it('ownedUtf8 gives an exact buffer with the same bytes', () => {
    const text = ownedUtf8('{"é":1}');
    expect(owned(text)).toBe(true);
    expect(text.toString('utf8')).toBe('{"é":1}');
  });

  it('a stored value with its resourceVersion spliced in parses to the object at that revision', () => {
    const stored = encodeForStorage({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' } });
    expect(JSON.parse(withResourceVersion(stored, 42n).toString('utf8'))).toEqual({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'a', resourceVersion: '42' },
    });
    const empty = encodeForStorage({ kind: 'ConfigMap', apiVersion: 'v1', metadata: {} });
    expect(JSON.parse(withResourceVersion(empty, 7n).toString('utf8'))).toMatchObject({
      metadata: { resourceVersion: '7' },
    });
  });

  it('the embedded store keeps a copy of its own of each written value', async () => {
    const store = await openMemoryStore();
    try {
      const value = Buffer.from('{"small":true}');
      expect(owned(value)).toBe(false);
      await store.create('/k', value);
      const { kv } = await store.get('/k');
      expect(kv !== undefined && owned(kv.value)).toBe(true);
      expect(Buffer.from(kv?.value ?? []).toString('utf8')).toBe('{"small":true}');
    } finally {
      await store.close();
    }
  });
});
