/**
 * jsonEqual and membersEqual: JSON equality (key order aside, undefined members absent), the
 * comparison an update makes between the object it would store and the one it read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonEqual, membersEqual } from '../../src/api/object.js';

/** Equality through the JSON text, with each object's keys sorted. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

describe('jsonEqual', () => {
  it('agrees with a comparison of canonical JSON text', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(json, json, (a, b) => {
        expect(jsonEqual(a, b)).toBe(canonical(a) === canonical(b));
        expect(jsonEqual(a, JSON.parse(JSON.stringify(a)))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('treats undefined members as absent and ignores key order', () => {
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(jsonEqual({ a: 1 }, { a: 1, c: null })).toBe(false);
    expect(jsonEqual([1, { a: [] }], [1, { a: [] }])).toBe(true);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
  });
});

describe('membersEqual', () => {
  it('ignores the one named member on either side', () => {
    const a = { metadata: { name: 'n', resourceVersion: '1' }, data: { k: 'v' } };
    expect(membersEqual(a.metadata, { name: 'n', resourceVersion: '2' }, 'resourceVersion')).toBe(true);
    expect(membersEqual(a.metadata, { name: 'n' }, 'resourceVersion')).toBe(true);
    expect(membersEqual({ name: 'n' }, a.metadata, 'resourceVersion')).toBe(true);
    expect(membersEqual(a.metadata, { name: 'm', resourceVersion: '1' }, 'resourceVersion')).toBe(false);
    expect(membersEqual(a, { metadata: {}, data: { k: 'v' } }, 'metadata')).toBe(true);
    expect(membersEqual(a, { metadata: {}, data: { k: 'w' } }, 'metadata')).toBe(false);
    expect(membersEqual(a, { metadata: {}, data: { k: 'v' }, extra: 1 }, 'metadata')).toBe(false);
  });
});
