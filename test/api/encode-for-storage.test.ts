/**
 * encodeForStorage: the stored layout (`kind`, `apiVersion`, `metadata` first, the rest in the
 * object's order, no `metadata.resourceVersion`), with the bytes and the carried object equal,
 * and a parsed `__proto__` key kept an own member, as the spread it replaced did.
 */
import { describe, expect, it } from 'vitest';
import { encodeForStorage, type KubeObject } from '../../src/api/object.js';

const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

describe('encodeForStorage', () => {
  it('writes kind, apiVersion and metadata first and drops the resourceVersion', () => {
    const obj = JSON.parse(
      '{"data":{"k":"v"},"metadata":{"resourceVersion":"7","name":"c","labels":{"a":"b"}},"apiVersion":"v1","kind":"ConfigMap"}',
    ) as KubeObject;
    const bytes = encodeForStorage(obj);
    expect(text(bytes)).toBe(
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"a":"b"}},"data":{"k":"v"}}',
    );
    expect(JSON.parse(text(bytes))).toStrictEqual(bytes.object);
    expect(obj.metadata.resourceVersion).toBe('7');
  });

  it('keeps a parsed __proto__ key as a member at both levels, without touching prototypes', () => {
    const obj = JSON.parse(
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","__proto__":{"m":1}},"__proto__":{"x":1}}',
    ) as KubeObject;
    const bytes = encodeForStorage(obj);
    expect(text(bytes)).toBe(
      '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","__proto__":{"m":1}},"__proto__":{"x":1}}',
    );
    expect(Object.getPrototypeOf(bytes.object)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(bytes.object['metadata'])).toBe(Object.prototype);
  });

  it('leaves out absent kind and apiVersion', () => {
    expect(text(encodeForStorage({ metadata: { name: 'n' }, spec: {} }))).toBe(
      '{"metadata":{"name":"n"},"spec":{}}',
    );
  });
});
