import { describe, expect, it } from 'vitest';
import { compileSchema } from '../../src/schema/index.js';

const msgs = (schema: Record<string, unknown>, obj: Record<string, unknown>, old?: Record<string, unknown>) =>
  compileSchema(schema)
    .validate(obj, old)
    .map((e) => `${e.field}: ${e.message} [${e.reason}]`);

const spec = (props: Record<string, unknown>, rules: Record<string, unknown>[]) => ({
  type: 'object',
  properties: { spec: { type: 'object', properties: props, 'x-kubernetes-validations': rules } },
});

describe('x-kubernetes-validations', () => {
  const props = {
    replicas: { type: 'integer' },
    min: { type: 'integer' },
    name: { type: 'string', maxLength: 20 },
    tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } },
  };

  it('rule with message, default message, messageExpression', () => {
    const s = spec(props, [
      { rule: 'self.replicas >= self.min', message: 'replicas must be at least min' },
      { rule: ' self.name.startsWith("a") ' },
      {
        rule: 'self.tags.all(t, t.size() < 3)',
        messageExpression: '"tag too long: " + self.tags.filter(t, t.size() >= 3)[0]',
      },
    ]);
    expect(msgs(s, { spec: { replicas: 3, min: 1, name: 'abc', tags: ['x'] } })).toEqual([]);
    expect(msgs(s, { spec: { replicas: 0, min: 1, name: 'bcd', tags: ['long'] } })).toEqual([
      'spec: Invalid value: "object": replicas must be at least min [FieldValueInvalid]',
      'spec: Invalid value: "object": failed rule: self.name.startsWith("a") [FieldValueInvalid]',
      'spec: Invalid value: "object": tag too long: long [FieldValueInvalid]',
    ]);
  });

  it('reason and fieldPath', () => {
    const s = spec(props, [
      {
        rule: 'self.replicas < 5',
        message: 'too many',
        reason: 'FieldValueForbidden',
        fieldPath: '.replicas',
      },
      { rule: 'has(self.name)', message: 'name is needed', reason: 'FieldValueRequired', fieldPath: '.name' },
    ]);
    expect(msgs(s, { spec: { replicas: 9 } })).toEqual([
      'spec.replicas: Forbidden: too many [FieldValueForbidden]',
      'spec.name: Required value: name is needed [FieldValueRequired]',
    ]);
  });

  it('transition rules run only with an old object', () => {
    const s = spec(props, [{ rule: 'self.replicas >= oldSelf.replicas', message: 'cannot scale down' }]);
    expect(msgs(s, { spec: { replicas: 1 } })).toEqual([]);
    expect(msgs(s, { spec: { replicas: 1 } }, { spec: { replicas: 2 } })).toEqual([
      'spec: Invalid value: "object": cannot scale down [FieldValueInvalid]',
    ]);
    const imm = spec(props, [{ rule: 'self == oldSelf', message: 'immutable' }]);
    expect(msgs(imm, { spec: { name: 'a', tags: ['x'] } }, { spec: { name: 'a', tags: ['x'] } })).toEqual([]);
    expect(msgs(imm, { spec: { name: 'a' } }, { spec: { name: 'b' } })).toEqual([
      'spec: Invalid value: "object": immutable [FieldValueInvalid]',
    ]);
  });

  it('rules on scalars, list items (correlated by key), and at the root', () => {
    const s = {
      type: 'object',
      'x-kubernetes-validations': [{ rule: 'self.metadata.name.startsWith("x")', message: 'bad name' }],
      properties: {
        spec: {
          type: 'object',
          properties: {
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              maxItems: 4,
              items: {
                type: 'object',
                properties: {
                  name: { type: 'string', maxLength: 5 },
                  port: {
                    type: 'integer',
                    'x-kubernetes-validations': [{ rule: 'self > 0 && self < 65536' }],
                  },
                },
                'x-kubernetes-validations': [
                  { rule: 'self.port == oldSelf.port', message: 'port is immutable' },
                ],
              },
            },
          },
        },
      },
    };
    expect(
      msgs(
        s,
        {
          metadata: { name: 'y' },
          spec: {
            ports: [
              { name: 'a', port: 0 },
              { name: 'b', port: 2 },
            ],
          },
        },
        {
          metadata: { name: 'y' },
          spec: { ports: [{ name: 'b', port: 3 }] },
        },
      ),
    ).toEqual([
      '<nil>: Invalid value: "object": bad name [FieldValueInvalid]',
      'spec.ports[0].port: Invalid value: "integer": failed rule: self > 0 && self < 65536 [FieldValueInvalid]',
      'spec.ports[1]: Invalid value: "object": port is immutable [FieldValueInvalid]',
    ]);
  });

  it('optional types, Kubernetes libraries', () => {
    const s = spec(
      {
        q: { type: 'string', maxLength: 20 },
        u: { type: 'string', maxLength: 100 },
        l: { type: 'array', maxItems: 5, items: { type: 'integer' } },
      },
      [
        { rule: 'self.?q.orValue("1") != ""', message: 'opt' },
        { rule: '!has(self.q) || quantity(self.q).isLessThan(quantity("2Gi"))', message: 'quantity too big' },
        { rule: '!has(self.u) || url(self.u).getScheme() == "https"', message: 'https only' },
        { rule: '!has(self.l) || (self.l.isSorted() && self.l.sum() < 10)', message: 'list' },
        { rule: '!has(self.u) || self.u.find("[0-9]+") != "7"', message: 'regex' },
      ],
    );
    expect(msgs(s, { spec: { q: '1Gi', u: 'https://x.io/a', l: [1, 2, 3] } })).toEqual([]);
    expect(msgs(s, { spec: { q: '3Gi', u: 'http://x.io/7', l: [3, 1] } })).toEqual([
      'spec: Invalid value: "object": quantity too big [FieldValueInvalid]',
      'spec: Invalid value: "object": https only [FieldValueInvalid]',
      'spec: Invalid value: "object": list [FieldValueInvalid]',
      'spec: Invalid value: "object": regex [FieldValueInvalid]',
    ]);
  });

  it('a rule too costly for the data at hand is refused, not run (runtime budget)', () => {
    const s = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [
            { rule: 'self.l.all(a, self.l.all(b, a != b || a == b))', message: 'never' },
          ],
          properties: { l: { type: 'array', maxItems: 1000, items: { type: 'integer' } } },
        },
      },
    };
    const small = { spec: { l: [1, 2, 3] } };
    const big = { spec: { l: Array.from({ length: 1000 }, (_, i) => i) } };
    const schema = compileSchema(s, { celCostBudget: 100_000 });
    expect(schema.validate(small, undefined)).toEqual([]);
    expect(schema.validate(big, undefined).map((e) => `${e.field}: ${e.message}`)).toEqual([
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
  });

  it('runtime errors as kube words them; messageExpression falling back', () => {
    const s = spec(props, [
      { rule: 'self.name == "x"', message: 'name must be x' },
      { rule: 'self.replicas > 100', messageExpression: '""', message: 'fallback message' },
    ]);
    expect(msgs(s, { spec: { replicas: 1 } })).toEqual([
      'spec: Invalid value: "object": no such key: name evaluating rule: name must be x [FieldValueInvalid]',
      'spec: Invalid value: "object": fallback message [FieldValueInvalid]',
    ]);
  });

  it('optionalOldSelf: the rule runs on create too, oldSelf an optional', () => {
    const s = spec(props, [
      {
        rule: '!oldSelf.hasValue() || self.replicas >= oldSelf.value().replicas',
        message: 'no scale down',
        optionalOldSelf: true,
      },
      { rule: 'oldSelf.hasValue() || self.replicas == 1', message: 'start at 1', optionalOldSelf: true },
    ]);
    expect(msgs(s, { spec: { replicas: 1 } })).toEqual([]);
    expect(msgs(s, { spec: { replicas: 2 } })).toEqual([
      'spec: Invalid value: "object": start at 1 [FieldValueInvalid]',
    ]);
    expect(msgs(s, { spec: { replicas: 1 } }, { spec: { replicas: 3 } })).toEqual([
      'spec: Invalid value: "object": no scale down [FieldValueInvalid]',
    ]);
  });
});
