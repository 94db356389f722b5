/**
 * cloneJson: a deep copy of JSON values member by member, with structuredClone's results for
 * what it hands over (objects that are not plain) and a parsed `__proto__` key kept an own member.
 */
import { describe, expect, it } from 'vitest';
import { cloneJson } from '../../src/api/object.js';

describe('cloneJson', () => {
  it('copies a parsed API object deeply: equal, and no member shared', () => {
    const pod = JSON.parse(
      '{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","labels":{"a":"b"},"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},' +
        '"spec":{"containers":[{"name":"c","image":"i","args":["x",""],"ports":[{"containerPort":80}]}],"priority":0,"hostNetwork":false},' +
        '"status":{"conditions":[{"type":"Ready","lastProbeTime":null}]}}',
    ) as Record<string, unknown>;
    const copy = cloneJson(pod);
    expect(copy).toStrictEqual(pod);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(pod));
    expect(copy).toStrictEqual(structuredClone(pod));
    const podSpec = pod['spec'] as { containers: { args: string[] }[] };
    const copySpec = copy['spec'] as { containers: { args: string[] }[] };
    expect(copySpec).not.toBe(podSpec);
    expect(copySpec.containers).not.toBe(podSpec.containers);
    expect(copySpec.containers[0]).not.toBe(podSpec.containers[0]);
    copySpec.containers[0]!.args.push('y');
    expect(podSpec.containers[0]!.args).toEqual(['x', '']);
  });

  it('keeps undefined members, as structuredClone does', () => {
    const copy = cloneJson({ a: undefined, b: [undefined, 1] });
    expect(Object.keys(copy)).toEqual(['a', 'b']);
    expect(copy).toStrictEqual(structuredClone({ a: undefined, b: [undefined, 1] }));
  });

  it('keeps a parsed __proto__ key an own member and never sets the prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":true},"x":1}') as Record<string, unknown>;
    const copy = cloneJson(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(copy)).toEqual(['__proto__', 'x']);
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"x":1}');
  });

  it('hands objects that are not plain (Date, Uint8Array, null prototype members) to structuredClone', () => {
    const date = new Date(5);
    const bytes = Uint8Array.from([1, 2, 3]);
    const copy = cloneJson({ date, bytes });
    expect(copy.date).toBeInstanceOf(Date);
    expect(copy.date).not.toBe(date);
    expect(copy.date.getTime()).toBe(5);
    expect(copy.bytes).toBeInstanceOf(Uint8Array);
    expect(copy.bytes).not.toBe(bytes);
    expect([...copy.bytes]).toEqual([1, 2, 3]);
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { k: { v: 1 } });
    const bareCopy = cloneJson(bare);
    expect(Object.getPrototypeOf(bareCopy)).toBe(Object.prototype);
    expect(bareCopy).toEqual({ k: { v: 1 } });
  });

  it('passes primitives through', () => {
    expect(cloneJson(null)).toBeNull();
    expect(cloneJson('s')).toBe('s');
    expect(cloneJson(0)).toBe(0);
    expect(cloneJson(false)).toBe(false);
  });
});
