/**
 * encodeForStorage: the stored layout (`kind`, `apiVersion`, `metadata` first, the rest in the
 * object's order, no `metadata.resourceVersion`), with the bytes and the carried object equal,
 * the input untouched, and a parsed `__proto__` key kept an own member, as a spread keeps it.
 */
import { describe, expect, it } from 'vitest';
import { encodeForStorage, type KubeObject } from '../../src/api/object.js';

const text = (b: Uint8Array): string => Buffer.from(b).toString('utf8');

const CASES: readonly [string, string, string][] = [
  [
    'writes kind, apiVersion and metadata first and drops the resourceVersion',
    '{"data":{"k":"v"},"metadata":{"resourceVersion":"7","name":"c","labels":{"a":"b"}},"apiVersion":"v1","kind":"ConfigMap"}',
    '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","labels":{"a":"b"}},"data":{"k":"v"}}',
  ],
  [
    'keeps a parsed __proto__ key as a member at both levels, without touching prototypes',
    '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","__proto__":{"m":1}},"__proto__":{"x":1}}',
    '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","__proto__":{"m":1}},"__proto__":{"x":1}}',
  ],
];

describe('encodeForStorage', () => {
  it.each(CASES)('%s', (_name, input, expected) => {
    const obj = JSON.parse(input) as KubeObject;
    const bytes = encodeForStorage(obj);
    expect(text(bytes)).toBe(expected);
    expect(JSON.parse(text(bytes))).toStrictEqual(bytes.object);
    expect(Object.getPrototypeOf(bytes.object)).toBe(Object.prototype);
    expect(Object.getPrototypeOf(bytes.object['metadata'])).toBe(Object.prototype);
    expect(JSON.stringify(obj)).toBe(input);
  });

  it('leaves out absent kind and apiVersion', () => {
    expect(text(encodeForStorage({ metadata: { name: 'n' }, spec: {} }))).toBe(
      '{"metadata":{"name":"n"},"spec":{}}',
    );
  });
});
