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
    // JSON is spliced from the stored bytes per call, and not kept.
    const json = v.json();
    expect(JSON.parse(Buffer.from(json).toString('utf8'))).toEqual({
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'a', resourceVersion: '7' },
    });
    expect(Buffer.from(v.json()).equals(Buffer.from(json))).toBe(true);
    expect(v.hasEncoding('json')).toBe(false);
  });

  it('once replaced, keeps neither its parse nor any encoding, made before or after', () => {
    const v = new ObjectVersion('/k', encodeForStorage({ metadata: { name: 'k' } }), 3n);
    v.encoded('protobuf', () => Uint8Array.of(1));
    const parsed = v.object();
    expect(v.object()).toBe(parsed);
    v.forgetDerived();
    expect(v.hasEncoding('protobuf')).toBe(false);
    expect(v.object()).toEqual(parsed);
    expect(v.object()).not.toBe(v.object());
    v.encoded('protobuf', () => Uint8Array.of(2));
    expect(v.hasEncoding('protobuf')).toBe(false);
    // A version shown at another revision (a delete) starts with nothing dropped.
    const deleted = v.at(4n);
    deleted.encoded('protobuf', () => Uint8Array.of(3));
    expect(deleted.hasEncoding('protobuf')).toBe(true);
  });

  it('forgetObject drops only the parse, and a later one is kept again', () => {
    const v = new ObjectVersion('/k', encodeForStorage({ metadata: { name: 'k' } }), 3n);
    const parsed = v.object();
    v.forgetObject();
    const again = v.object();
    expect(again).not.toBe(parsed);
    expect(v.object()).toBe(again);
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
