/**
 * Field paths and sets: element encodings, SMD's order, set algebra, and FieldsV1 round trips
 * against entries written the way kube-apiserver writes them.
 */
import { describe, expect, it } from 'vitest';
import {
  FieldSet,
  FieldsV1Error,
  comparePathElements,
  fieldElement as f,
  indexElement,
  keyElement as k,
  parsePathElement,
  pathToString,
  valueElement as v,
  type Path,
} from '../../src/apply/index.js';

const set = (...paths: Path[]): FieldSet => FieldSet.fromPaths(paths);
const rendered = (s: FieldSet): string[] => s.paths().map(pathToString);

describe('path elements', () => {
  it('encode as FieldsV1 keys, key fields sorted, values in Go JSON', () => {
    expect(f('app.kubernetes.io/name').id).toBe('f:app.kubernetes.io/name');
    expect(k({ protocol: 'TCP', containerPort: 80 }).id).toBe('k:{"containerPort":80,"protocol":"TCP"}');
    expect(v('example.com/x').id).toBe('v:"example.com/x"');
    expect(v(5).id).toBe('v:5');
    expect(indexElement(3).id).toBe('i:3');
    // Go's HTML-safe escaping inside keys, as kube writes them.
    expect(k({ name: 'a<b>&"c"' }).id).toBe('k:{"name":"a\\u003cb\\u003e\\u0026\\"c\\""}');
    expect(v('tab\there\u2028').id).toBe('v:"tab\\there\\u2028"');
  });

  it('render as kube shows paths in conflicts', () => {
    expect(pathToString([f('spec'), f('replicas')])).toBe('.spec.replicas');
    expect(pathToString([f('spec'), f('containers'), k({ name: 'nginx' }), f('image')])).toBe(
      '.spec.containers[name="nginx"].image',
    );
    expect(pathToString([f('ports'), k({ containerPort: 80, protocol: 'TCP' })])).toBe(
      '.ports[containerPort=80,protocol="TCP"]',
    );
    expect(pathToString([f('metadata'), f('finalizers'), v('a/b')])).toBe('.metadata.finalizers[="a/b"]');
    expect(pathToString([f('x'), indexElement(2)])).toBe('.x[2]');
  });

  it('order: fields < keys < values < indexes; numbers numerically; fewer key fields first', () => {
    const sorted = [
      indexElement(1),
      v('b'),
      v(10),
      v(9),
      k({ a: 1, b: 2 }),
      k({ z: 1 }),
      f('b'),
      f('a'),
    ].sort(comparePathElements);
    expect(sorted.map((e) => e.id)).toEqual([
      'f:a',
      'f:b',
      'k:{"z":1}',
      'k:{"a":1,"b":2}',
      'v:9',
      'v:10',
      'v:"b"',
      'i:1',
    ]);
  });

  it('parse keys back to canonical elements and reject malformed ones', () => {
    expect(parsePathElement('k:{"protocol":"TCP","containerPort":80}')?.id).toBe(
      'k:{"containerPort":80,"protocol":"TCP"}',
    );
    expect(parsePathElement('v:"x"')).toMatchObject({ kind: 'value', value: 'x' });
    expect(parsePathElement('i:7')).toMatchObject({ kind: 'index', index: 7 });
    expect(parsePathElement('z:whatever')).toBeUndefined();
    for (const bad of ['f', 'fx', 'k:[1]', 'k:{', 'v:', 'i:x'])
      expect(() => parsePathElement(bad)).toThrow(FieldsV1Error);
  });
});

describe('set algebra', () => {
  const a = set([f('a')], [f('b'), f('c')], [f('b'), f('d')]);
  const b = set([f('b')], [f('b'), f('c')], [f('e')]);

  it('union, intersection, difference', () => {
    expect(rendered(a.union(b))).toEqual(['.a', '.b', '.e', '.b.c', '.b.d']);
    expect(rendered(a.intersection(b))).toEqual(['.b.c']);
    // Removing member .b leaves paths below it: difference is path by path.
    expect(rendered(a.difference(b))).toEqual(['.a', '.b.d']);
    expect(rendered(b.difference(a))).toEqual(['.b', '.e']);
  });

  it('recursive difference removes whole subtrees', () => {
    expect(rendered(a.recursiveDifference(set([f('b')])))).toEqual(['.a']);
    expect(rendered(a.recursiveDifference(set([f('b'), f('c')])))).toEqual(['.a', '.b.d']);
  });

  it('leaves drop members that also have members below them', () => {
    const s = set([f('c'), k({ name: 'x' })], [f('c'), k({ name: 'x' }), f('image')], [f('d')]);
    expect(rendered(s.leaves())).toEqual(['.d', '.c[name="x"].image']);
  });

  it('has, size, equality, emptiness', () => {
    expect(a.has([f('b'), f('c')])).toBe(true);
    expect(a.has([f('b')])).toBe(false);
    expect(a.has([])).toBe(false);
    expect(a.size).toBe(3);
    expect(a.union(FieldSet.EMPTY).equals(a)).toBe(true);
    expect(a.difference(a).isEmpty()).toBe(true);
    expect(set([]).isEmpty()).toBe(true);
  });
});

describe('FieldsV1', () => {
  // An apply entry of `kubectl apply --server-side` for an nginx Deployment, as kube writes it.
  const applyEntry =
    '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":' +
    '{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{},' +
    '"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}}}';
  // An update entry of a controller writing status, with maps that appeared (".") and a set.
  const updateEntry =
    '{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}},"f:finalizers":{".":{},' +
    '"v:\\"a.example/f\\"":{},"v:\\"b.example/f\\"":{}}},"f:status":{"f:conditions":{".":{},"k:{\\"type\\":\\"Available\\"}":' +
    '{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:replicas":{}}}';

  it.each([
    ['apply entry', applyEntry],
    ['update entry', updateEntry],
  ])('%s round-trips byte for byte', (_name, text) => {
    const s = FieldSet.fromFieldsV1(JSON.parse(text));
    expect(JSON.stringify(s.toFieldsV1())).toBe(text);
  });

  it('decodes members, "." and leaves', () => {
    const s = FieldSet.fromFieldsV1(JSON.parse(applyEntry));
    expect(s.has([f('spec'), f('replicas')])).toBe(true);
    expect(s.has([f('spec')])).toBe(false);
    const item = [f('spec'), f('template'), f('spec'), f('containers'), k({ name: 'nginx' })];
    expect(s.has(item)).toBe(true);
    expect(s.has([...item, f('image')])).toBe(true);
    expect(s.size).toBe(9);
  });

  it('writes keys in SMD order whatever the input order, with "." first', () => {
    const s = FieldSet.fromFieldsV1({
      'v:"b"': {},
      'f:z': { 'f:y': {}, '.': {} },
      'k:{"a":1}': {},
      'f:a': {},
    });
    expect(Object.keys(s.toFieldsV1())).toEqual(['f:a', 'f:z', 'k:{"a":1}', 'v:"b"']);
    expect(Object.keys(s.toFieldsV1()['f:z'] as object)).toEqual(['.', 'f:y']);
  });

  it('skips unknown element types and treats an object of only "." as a leaf', () => {
    const s = FieldSet.fromFieldsV1({ 'f:a': { 'x:future': {} }, 'f:b': { '.': {} } });
    expect(rendered(s)).toEqual(['.a', '.b']);
  });

  it('rejects malformed documents', () => {
    expect(() => FieldSet.fromFieldsV1([])).toThrow(FieldsV1Error);
    expect(() => FieldSet.fromFieldsV1({ 'f:a': 1 })).toThrow(FieldsV1Error);
    expect(() => FieldSet.fromFieldsV1({ 'k:notjson': {} })).toThrow(FieldsV1Error);
  });

  it('empty set is {}', () => {
    expect(FieldSet.EMPTY.toFieldsV1()).toEqual({});
    expect(FieldSet.fromFieldsV1({}).isEmpty()).toBe(true);
  });
});
