/** ObjectVersion: encodings are made once per format and shared; JSON carries the resourceVersion. */
import { describe, expect, it } from 'vitest';
import { encodeForStorage } from '../../src/api/object.js';
import { ObjectVersion } from '../../src/watchcache/object-version.js';

describe('ObjectVersion', () => {
  it('encodes each format once and returns the same bytes after', () => {
    const v = new ObjectVersion(
      '/configmaps/default/a',
      encodeForStorage({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' } }),
      7n,
    );
    let calls = 0;
    const enc = (): Uint8Array => {
      calls++;
      return Uint8Array.of(calls);
    };
    const first = v.encoded('protobuf', enc);
    expect(v.encoded('protobuf', enc)).toBe(first);
    expect(v.encoded('table;v1', enc)).not.toBe(first);
    expect(calls).toBe(2);
    expect(v.hasEncoding('json')).toBe(false);
    const json = v.json();
    expect(v.json()).toBe(json);
    expect(JSON.parse(Buffer.from(json).toString('utf8'))).toEqual({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'a', resourceVersion: '7' },
    });
    expect(v.encoded('json', enc)).toBe(json);
  });

  it('a throwing encoder caches nothing', () => {
    const v = new ObjectVersion('/k', encodeForStorage({ metadata: { name: 'k' } }), 1n);
    expect(() =>
      v.encoded('x', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(v.hasEncoding('x')).toBe(false);
    expect(v.at(2n).revision).toBe(2n);
    expect(v.at(1n)).toBe(v);
  });
});
