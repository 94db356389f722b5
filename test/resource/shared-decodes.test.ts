/** SharedDecodes: one decode per stored version, handed out frozen. */
import { describe, expect, it } from 'vitest';
import { SharedDecodes } from '../../src/resource/shared-decodes.js';

const bytes = (o: unknown): Uint8Array => Buffer.from(JSON.stringify(o));
const ns = { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'a', labels: { x: '1' } } };

describe('SharedDecodes', () => {
  it('decodes a version once and shares it frozen, with its resourceVersion', () => {
    const d = new SharedDecodes();
    const first = d.of('/namespaces/a', bytes(ns), 5n);
    expect(first.metadata.resourceVersion).toBe('5');
    expect(first.metadata.labels).toEqual({ x: '1' });
    expect(d.of('/namespaces/a', bytes(ns), 5n)).toBe(first);
    expect(() => {
      (first.metadata.labels as Record<string, string>)['y'] = '2';
    }).toThrow(TypeError);
  });

  it('gives a new object for another revision or key', () => {
    const d = new SharedDecodes();
    const first = d.of('/namespaces/a', bytes(ns), 5n);
    const next = d.of('/namespaces/a', bytes({ ...ns, metadata: { name: 'a' } }), 6n);
    expect(next).not.toBe(first);
    expect(next.metadata.labels).toBeUndefined();
    expect(d.of('/namespaces/b', bytes(ns), 5n)).not.toBe(first);
  });
});
