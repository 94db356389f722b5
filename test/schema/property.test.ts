/**
 * Property test: random structural schemas and random objects (valid values, wrong types,
 * out-of-range values, unknown fields), checking defaulting, pruning and validation against a
 * small independent model of kube's rules.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/schema/index.js';

type S =
  | { type: 'integer'; minimum?: number; maximum?: number; default?: number }
  | { type: 'string'; enum?: string[]; maxLength?: number; default?: string }
  | { type: 'boolean'; default?: boolean }
  | { type: 'array'; items: S }
  | { type: 'object'; properties: Record<string, S>; required?: string[] };

const name = fc.constantFrom('a', 'b', 'c', 'd');
const scalar: fc.Arbitrary<S> = fc.oneof(
  fc.record(
    {
      type: fc.constant('integer' as const),
      minimum: fc.integer({ min: -5, max: 0 }),
      maximum: fc.integer({ min: 1, max: 5 }),
      default: fc.integer({ min: 0, max: 1 }),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record(
    {
      type: fc.constant('string' as const),
      enum: fc.constant<string[]>(['x', 'y']),
      maxLength: fc.integer({ min: 1, max: 3 }),
      default: fc.constant<string>('x'),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({ type: fc.constant('boolean' as const), default: fc.boolean() }, { requiredKeys: ['type'] }),
);
const schemaArb: fc.Arbitrary<S> = fc.letrec<{ node: S }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    fc.record({ type: fc.constant('array' as const), items: tie('node') }),
    fc.record(
      {
        type: fc.constant('object' as const),
        properties: fc.dictionary(name, tie('node'), { maxKeys: 3 }),
        required: fc.subarray(['a', 'b']),
      },
      { requiredKeys: ['type', 'properties'] },
    ),
  ),
})).node;

/** A random value for `s`: mostly fitting, sometimes wrong, with unknown fields in objects. */
function valueArb(s: S, depth = 0): fc.Arbitrary<unknown> {
  const junk = fc.oneof(fc.constant('junk'), fc.constant(42), fc.constant(true));
  switch (s.type) {
    case 'integer':
      return fc.oneof(fc.integer({ min: -8, max: 8 }), junk);
    case 'string':
      return fc.oneof(fc.constantFrom('x', 'y', 'zzzz'), junk);
    case 'boolean':
      return fc.oneof(fc.boolean(), junk);
    case 'array':
      return depth > 3 ? fc.constant([]) : fc.array(valueArb(s.items, depth + 1), { maxLength: 3 });
    case 'object': {
      const known = Object.fromEntries(
        Object.entries(s.properties).map(([k, p]) => [k, valueArb(p, depth + 1)]),
      );
      return fc
        .tuple(
          fc.record(known, { requiredKeys: [] }),
          fc.dictionary(fc.constantFrom('u1', 'u2'), fc.constant(1), { maxKeys: 2 }),
        )
        .map(([k, u]) => ({ ...u, ...k }));
    }
  }
}

interface Model {
  pruned: string[];
  errors: string[];
}

const child = (p: string, k: string): string => (p === '' ? k : `${p}.${k}`);

/** The model: defaults, then prune, then errors (paths only), computed independently. */
function model(s: S, v: unknown, path: string, out: Model): unknown {
  if (s.type === 'object') {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      out.errors.push(path);
      return v;
    }
    const o = v as Record<string, unknown>;
    for (const [k, p] of Object.entries(s.properties))
      if (!(k in o) && p.type !== 'array' && p.type !== 'object' && p.default !== undefined) o[k] = p.default;
    for (const k of Object.keys(o)) {
      const p = s.properties[k];
      if (p === undefined) {
        out.pruned.push(child(path, k));
        delete o[k];
      }
    }
    for (const r of s.required ?? []) if (!(r in o)) out.errors.push(child(path, r));
    for (const [k, p] of Object.entries(s.properties)) if (k in o) o[k] = model(p, o[k], child(path, k), out);
    return o;
  }
  if (s.type === 'array') {
    if (!Array.isArray(v)) out.errors.push(path);
    else v.forEach((x, i) => (v[i] = model(s.items, x, `${path}[${i}]`, out)));
    return v;
  }
  if (s.type === 'integer') {
    if (typeof v !== 'number') out.errors.push(path);
    else if ((s.minimum !== undefined && v < s.minimum) || (s.maximum !== undefined && v > s.maximum))
      out.errors.push(path);
  } else if (s.type === 'string') {
    if (typeof v !== 'string') out.errors.push(path);
    else {
      if (s.maxLength !== undefined && v.length > s.maxLength) out.errors.push(path);
      if (s.enum !== undefined && !s.enum.includes(v)) out.errors.push(path);
    }
  } else if (typeof v !== 'boolean') out.errors.push(path);
  return v;
}

const rootArb = fc
  .dictionary(name, schemaArb, { minKeys: 1, maxKeys: 3 })
  .map((properties): S => ({ type: 'object', properties }));

describe('schema property: defaulting + pruning + validation agree with a model', () => {
  it('random schemas and objects', () => {
    fc.assert(
      fc.property(
        rootArb.chain((s) => fc.tuple(fc.constant(s), valueArb(s))),
        ([s, v]) => {
          const schema = compileSchema(s);
          const obj = structuredClone(v) as Record<string, unknown>;
          schema.applyDefaults(obj);
          const again = structuredClone(obj);
          schema.applyDefaults(again);
          expect(again).toEqual(obj); // idempotent
          const pruned = schema.prune(obj);
          const m: Model = { pruned: [], errors: [] };
          const expected = model(s, structuredClone(v), '', m);
          expect(obj).toEqual(expected);
          expect([...pruned].sort()).toEqual([...m.pruned].sort());
          const fields = schema.validate(obj, undefined).map((e) => e.field);
          expect([...new Set(fields)].sort()).toEqual([...new Set(m.errors)].sort());
        },
      ),
      { numRuns: 300 },
    );
  });
});
