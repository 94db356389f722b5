import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/schema/index.js';

const msgs = (schema: Record<string, unknown>, obj: Record<string, unknown>, old?: Record<string, unknown>) =>
  compileSchema(schema)
    .validate(obj, old)
    .map((e) => `${e.field}: ${e.message}`);

const spec = (props: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: props, ...extra } },
});

describe('OpenAPI value validation with kube messages', () => {
  it('maximum / minimum / exclusive', () => {
    const s = spec({
      replicas: { type: 'integer', minimum: 1, maximum: 10 },
      r: { type: 'number', exclusiveMaximum: true, maximum: 1.5, exclusiveMinimum: true, minimum: 0 },
    });
    expect(msgs(s, { spec: { replicas: 11 } })).toEqual([
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    ]);
    expect(msgs(s, { spec: { replicas: 0 } })).toEqual([
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
    ]);
    expect(msgs(s, { spec: { r: 1.5 } })).toEqual([
      'spec.r: Invalid value: 1.5: spec.r in body should be less than 1.5',
    ]);
    expect(msgs(s, { spec: { r: 0 } })).toEqual([
      'spec.r: Invalid value: 0: spec.r in body should be greater than 0',
    ]);
    expect(msgs(s, { spec: { replicas: 5, r: 1 } })).toEqual([]);
  });

  it('type errors name the JSON type; null on non-nullable fields', () => {
    const s = spec({
      replicas: { type: 'integer' },
      name: { type: 'string' },
      opt: { type: 'string', nullable: true },
    });
    expect(msgs(s, { spec: { replicas: 'x' } })).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    ]);
    expect(msgs(s, { spec: { replicas: 1.5 } })).toEqual([
      'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"',
    ]);
    expect(msgs(s, { spec: { name: null, opt: null } })).toEqual([
      'spec.name: Invalid value: "null": spec.name in body must be of type string: "null"',
    ]);
    expect(compileSchema(s).validate({ spec: { replicas: 'x' } }, undefined)[0]?.reason).toBe(
      'FieldValueTypeInvalid',
    );
  });

  it('enum, required, pattern, lengths', () => {
    const s = spec(
      {
        mode: { type: 'string', enum: ['a', 'b'] },
        name: { type: 'string', pattern: '^[a-z]+$', minLength: 2, maxLength: 4 },
        n: { type: 'integer', enum: [1, 2] },
      },
      { required: ['mode'] },
    );
    expect(msgs(s, { spec: { mode: 'x' } })).toEqual([
      'spec.mode: Unsupported value: "x": supported values: "a", "b"',
    ]);
    expect(msgs(s, { spec: {} })).toEqual(['spec.mode: Required value']);
    expect(msgs(s, { spec: { mode: 'a', name: 'A' } })).toEqual([
      'spec.name: Invalid value: "A": spec.name in body should be at least 2 chars long',
      'spec.name: Invalid value: "A": spec.name in body should match \'^[a-z]+$\'',
    ]);
    expect(msgs(s, { spec: { mode: 'a', name: 'abcde' } })).toEqual([
      'spec.name: Too long: may not be longer than 4',
    ]);
    expect(msgs(s, { spec: { mode: 'a', n: 3 } })).toEqual([
      'spec.n: Unsupported value: 3: supported values: "1", "2"',
    ]);
  });

  it('a type error does not stop the enum check (as kube)', () => {
    const s = spec({ mode: { type: 'string', enum: ['a', 'b'] } });
    expect(msgs(s, { spec: { mode: true } })).toEqual([
      'spec.mode: Invalid value: "boolean": spec.mode in body must be of type string: "boolean"',
      'spec.mode: Unsupported value: true: supported values: "a", "b"',
    ]);
  });

  it('items, properties counts, multipleOf', () => {
    const s = spec({
      l: { type: 'array', minItems: 2, maxItems: 3, items: { type: 'integer', multipleOf: 2 } },
      m: { type: 'object', maxProperties: 1, minProperties: 1, additionalProperties: { type: 'string' } },
    });
    expect(msgs(s, { spec: { l: [2, 4, 6, 8] } })).toEqual([
      'spec.l: Too many: 4: must have at most 3 items',
    ]);
    expect(msgs(s, { spec: { l: [3] } })).toEqual([
      'spec.l: Invalid value: 1: spec.l in body should have at least 2 items',
      'spec.l[0]: Invalid value: 3: spec.l[0] in body should be a multiple of 2',
    ]);
    expect(msgs(s, { spec: { m: { a: 'x', b: 1 } } })).toEqual([
      'spec.m: Too many: 2: must have at most 1 items',
      'spec.m.b: Invalid value: "integer": spec.m.b in body must be of type string: "integer"',
    ]);
    expect(msgs(s, { spec: { m: {} } })).toEqual([
      'spec.m: Invalid value: 1: spec.m in body should have at least 1 properties',
    ]);
  });

  it('formats', () => {
    const s = spec({
      t: { type: 'string', format: 'date-time' },
      u: { type: 'string', format: 'uuid' },
      ip: { type: 'string', format: 'ipv4' },
      d: { type: 'string', format: 'date' },
      i: { type: 'integer', format: 'int32' },
    });
    expect(
      msgs(s, {
        spec: {
          t: '2024-01-02T03:04:05Z',
          u: '123e4567-e89b-12d3-a456-426614174000',
          ip: '10.0.0.1',
          d: '2024-02-29',
          i: 1,
        },
      }),
    ).toEqual([]);
    expect(msgs(s, { spec: { t: 'yesterday', ip: '::1', d: '2023-02-29' } })).toEqual([
      'spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday"',
      'spec.ip: Invalid value: "::1": spec.ip in body must be of type ipv4: "::1"',
      'spec.d: Invalid value: "2023-02-29": spec.d in body must be of type date: "2023-02-29"',
    ]);
  });

  it('int-or-string and preserve-unknown-fields', () => {
    const s = spec({
      port: { 'x-kubernetes-int-or-string': true },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    });
    expect(msgs(s, { spec: { port: 80, free: { a: [1] } } })).toEqual([]);
    expect(msgs(s, { spec: { port: 'http' } })).toEqual([]);
    expect(msgs(s, { spec: { port: true } })).toEqual([
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    ]);
  });

  it('anyOf / oneOf / not', () => {
    const s = spec({
      x: {
        'x-kubernetes-int-or-string': true,
        anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^\\d+%$' }],
      },
    });
    expect(msgs(s, { spec: { x: '10%' } })).toEqual([]);
    expect(msgs(s, { spec: { x: 'ten' } })[0]).toBe(
      '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
    );
    const n = spec({ x: { type: 'string', not: { enum: ['bad'] } } });
    expect(msgs(n, { spec: { x: 'bad' } })).toEqual([
      '<nil>: Invalid value: "": "spec.x" must not validate the schema (not)',
    ]);
    // kube's own expectation (apiextensions validation tests): int-or-string with a user anyOf.
    const k = {
      type: 'object',
      properties: {
        field: {
          nullable: true,
          'x-kubernetes-int-or-string': true,
          anyOf: [{ type: 'integer' }, { type: 'string' }],
        },
      },
    };
    expect(msgs(k, { field: true }).sort()).toEqual([
      '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
      'field: Invalid value: "boolean": field in body must be of type integer: "boolean"',
    ]);
    expect(msgs(k, { field: null })).toEqual([]);
  });

  it('list-type set and map duplicates', () => {
    const s = spec({
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name', 'protocol'],
        items: {
          type: 'object',
          properties: { name: { type: 'string' }, protocol: { type: 'string', default: 'TCP' } },
        },
      },
    });
    expect(msgs(s, { spec: { tags: ['a', 'b', 'a'] } })).toEqual(['spec.tags[2]: Duplicate value: "a"']);
    expect(
      msgs(s, {
        spec: { ports: [{ name: 'a' }, { name: 'a', protocol: 'TCP' }, { name: 'a', protocol: 'UDP' }] },
      }),
    ).toEqual(['spec.ports[1]: Duplicate value: map[string]interface {}{"name":"a", "protocol":"TCP"}']);
  });

  it('embedded resources need apiVersion and kind', () => {
    const s = spec({
      template: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        'x-kubernetes-preserve-unknown-fields': true,
      },
    });
    expect(msgs(s, { spec: { template: { kind: 'Pod' } } })).toEqual([
      'spec.template.apiVersion: Required value: must not be empty',
    ]);
    expect(msgs(s, { spec: { template: { apiVersion: 'v1', kind: 'Pod' } } })).toEqual([]);
  });
});

describe('defaulting and pruning', () => {
  const s = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer', default: 1 },
          name: { type: 'string' },
          opt: { type: 'string', nullable: true, default: 'd' },
          items: {
            type: 'array',
            items: { type: 'object', properties: { a: { type: 'string', default: 'x' } } },
          },
          labels: {
            type: 'object',
            additionalProperties: { type: 'object', properties: { v: { type: 'integer', default: 7 } } },
          },
          free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          inner: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            properties: {
              res: {
                type: 'object',
                'x-kubernetes-embedded-resource': true,
                properties: { spec: { type: 'string' } },
              },
            },
          },
        },
      },
    },
  };

  it('defaults absent fields, non-nullable nulls, list items and additionalProperties values', () => {
    const obj: Record<string, unknown> = {
      spec: { replicas: null, opt: null, items: [{}, { a: 'y' }], labels: { k: {} } },
    };
    const schema = compileSchema(s);
    schema.applyDefaults(obj);
    expect(obj).toEqual({
      spec: { replicas: 1, opt: null, items: [{ a: 'x' }, { a: 'y' }], labels: { k: { v: 7 } } },
    });
  });

  it('prunes unknown fields, keeps apiVersion/kind, reduces metadata, honours preserve-unknown-fields', () => {
    const obj: Record<string, unknown> = {
      apiVersion: 'x.io/v1',
      kind: 'X',
      metadata: { name: 'n', bogus: 1 },
      extra: true,
      spec: {
        name: 'n',
        nope: 1,
        items: [{ a: 'x', b: 2 }],
        free: { anything: { goes: 1 } },
        inner: {
          kept: 1,
          res: { apiVersion: 'v1', kind: 'K', metadata: { name: 'a', junk: 1 }, spec: 's', drop: 1 },
        },
      },
    };
    const pruned = compileSchema(s).prune(obj);
    expect(pruned.sort()).toEqual(
      [
        'extra',
        'metadata.bogus',
        'spec.inner.res.drop',
        'spec.inner.res.metadata.junk',
        'spec.items[0].b',
        'spec.nope',
      ].sort(),
    );
    expect(obj).toEqual({
      apiVersion: 'x.io/v1',
      kind: 'X',
      metadata: { name: 'n' },
      spec: {
        name: 'n',
        items: [{ a: 'x' }],
        free: { anything: { goes: 1 } },
        inner: { kept: 1, res: { apiVersion: 'v1', kind: 'K', metadata: { name: 'a' }, spec: 's' } },
      },
    });
  });

  it('drops null values of non-nullable fields without defaults', () => {
    const obj: Record<string, unknown> = { spec: { name: null } };
    compileSchema(s).prune(obj);
    expect(obj).toEqual({ spec: {} });
  });

  it('applyType follows list and map types', () => {
    const t = compileSchema({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', properties: { name: { type: 'string' } } },
            },
            sel: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { a: { type: 'string' } } },
            m: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
      },
    }).applyType;
    expect(t.kind).toBe('struct');
    if (t.kind !== 'struct') return;
    const spec = t.field('spec');
    expect(t.field('metadata')?.kind).toBe('struct');
    if (spec?.kind !== 'struct') throw new Error('spec');
    expect(spec.field('ports')).toMatchObject({ kind: 'list', relationship: 'map', keys: ['name'] });
    expect(spec.field('sel')).toMatchObject({ kind: 'struct', atomic: true });
    expect(spec.field('m')).toMatchObject({ kind: 'map', atomic: false });
  });
});

describe('properties named like Object.prototype members', () => {
  // Parsed from JSON, as a CRD's schema is: `__proto__` is a property there, not the prototype.
  const schema = compileSchema(
    JSON.parse(
      '{"type":"object","properties":{"spec":{"type":"object","required":["constructor"],"properties":' +
        '{"constructor":{"type":"string"},"toString":{"type":"string","default":"d"},' +
        '"__proto__":{"type":"string","default":"p"}}}}}',
    ) as Record<string, unknown>,
  );

  it('are required and defaulted as any other, on own members only', () => {
    expect(schema.validate({ spec: {} }, undefined).map((e) => `${e.field}: ${e.message}`)).toEqual([
      'spec.constructor: Required value',
    ]);
    const obj = JSON.parse('{"spec":{"constructor":"c"}}') as { spec: Record<string, unknown> };
    schema.applyDefaults(obj);
    expect(Object.keys(obj.spec).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(obj.spec)).toBe(Object.prototype);
    expect(JSON.stringify(obj.spec)).toBe('{"constructor":"c","toString":"d","__proto__":"p"}');
  });
});
