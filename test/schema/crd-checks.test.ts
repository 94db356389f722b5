import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkSchema } from '../../src/schema/crd-checks.js';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const check = (schema: Record<string, unknown>) =>
  checkSchema(schema, P).map((e) => `${e.field}: ${e.message}`);

describe('structural schema checks', () => {
  it('accepts common structural shapes (preserve-unknown root, int-or-string, list-map with required keys)', () => {
    expect(check({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true })).toEqual([]);
    expect(
      check({
        type: 'object',
        properties: {
          metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 20 } } },
          spec: {
            type: 'object',
            properties: {
              port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['name'],
                items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
              },
              labels: { type: 'object', additionalProperties: { type: 'string' } },
              template: {
                type: 'object',
                'x-kubernetes-embedded-resource': true,
                'x-kubernetes-preserve-unknown-fields': true,
              },
            },
          },
        },
      }),
    ).toEqual([]);
  });

  it('types are required below the root; properties and additionalProperties exclude each other', () => {
    expect(
      check({
        type: 'object',
        properties: {
          spec: { properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } },
          list: { type: 'array', items: {} },
          port: { 'x-kubernetes-int-or-string': true },
          free: { 'x-kubernetes-preserve-unknown-fields': true },
        },
      }),
    ).toEqual([
      `${P}.properties[list].items.type: Required value: must not be empty for specified array items`,
      `${P}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      `${P}.properties[spec].type: Required value: must not be empty for specified object fields`,
    ]);
  });

  it('value validations inside anyOf must not carry structure; uniqueItems; list and map types', () => {
    expect(
      check({
        type: 'object',
        properties: {
          ok: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          x: {
            'x-kubernetes-int-or-string': true,
            anyOf: [
              { type: 'integer', minimum: 1 },
              { type: 'string', nullable: true },
            ],
          },
          u: { type: 'array', uniqueItems: true, items: { type: 'string' } },
          s: { type: 'string', 'x-kubernetes-list-type': 'set' },
          m: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            items: { type: 'object', properties: { k: { type: 'string' } } },
          },
          t: { type: 'object', 'x-kubernetes-map-type': 'weird' },
        },
      }),
    ).toEqual([
      `${P}.properties[m].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      `${P}.properties[s].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`,
      `${P}.properties[t].x-kubernetes-map-type: Unsupported value: "weird": supported values: "granular", "atomic"`,
      `${P}.properties[u].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
      `${P}.properties[x].anyOf[0].type: Forbidden: must be empty to be structural`,
      `${P}.properties[x].anyOf[1].nullable: Forbidden: must be false to be structural`,
      `${P}.properties[x].anyOf[1].type: Forbidden: must be empty to be structural`,
    ]);
  });

  it('defaults must validate against their schema', () => {
    expect(
      check({
        type: 'object',
        properties: {
          spec: { type: 'object', properties: { replicas: { type: 'integer', maximum: 5, default: 7 } } },
        },
      }),
    ).toEqual([
      `${P}.properties[spec].properties[replicas].default.spec.replicas: Invalid value: 7: spec.replicas in body should be less than or equal to 5`,
    ]);
  });

  it('CEL rules must compile and fit the cost budget', () => {
    const errs = check({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          'x-kubernetes-validations': [
            { rule: 'self.nope > 1' },
            { rule: 'self.items.all(a, self.items.all(b, self.items.all(c, a == b && b == c)))' },
            { rule: 'self.items.size() < 3', reason: 'Bogus', fieldPath: '.nothere' },
          ],
          properties: { items: { type: 'array', items: { type: 'string' } } },
        },
      },
    });
    expect(errs[0]).toMatch(
      /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.nope > 1".*\}: compilation failed: ERROR: <input>:1:6: undefined field .nope.$/,
    );
    expect(errs[1]).toMatch(
      /x-kubernetes-validations\[1\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared\)$/,
    );
    expect(errs[2]).toBe(
      `${P}.properties[spec].x-kubernetes-validations[2].reason: Unsupported value: "Bogus": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    );
    expect(errs[3]).toBe(
      `${P}.properties[spec].x-kubernetes-validations[2].fieldPath: Invalid value: ".nothere": fieldPath must be a valid path: does not refer to a valid field`,
    );
    expect(errs).toHaveLength(5); // and the CRD total over budget
    expect(errs[4]).toMatch(
      /^spec\.versions\[0\]\.schema\.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget/,
    );
  });

  it('a rule on the items of an unbounded list costs its estimate times the list size', () => {
    const errs = check({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            names: {
              type: 'array',
              items: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.matches("^[a-z]+$")' }] },
            },
            bounded: {
              type: 'array',
              maxItems: 10,
              items: {
                type: 'string',
                maxLength: 63,
                'x-kubernetes-validations': [{ rule: 'self.matches("^[a-z]+$")' }],
              },
            },
          },
        },
      },
    });
    expect(errs[0]).toMatch(
      /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.properties\[names\]\.items\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/,
    );
    expect(errs.filter((e) => e.includes('[bounded]'))).toEqual([]);
  });

  it('a bounded list keeps the same rule within budget', () => {
    expect(
      check({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            'x-kubernetes-validations': [{ rule: 'self.items.all(a, self.items.all(b, a == b || a != b))' }],
            properties: { items: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } } },
          },
        },
      }),
    ).toEqual([]);
  });
});

describe('CRD create through the API', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  const crd = (schema: Record<string, unknown>) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  });

  it('rejects a non-structural schema with kube message and causes (422)', async () => {
    const tls = adminTls(server.kubeconfigPath);
    const res = await adminFetch(
      `${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      tls,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          crd({ type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } }),
        ),
      },
    );
    expect(res.status).toBe(422);
    const status = JSON.parse(res.body) as {
      message: string;
      details: { causes: { field: string; message: string }[] };
    };
    expect(status.details.causes).toContainEqual(
      expect.objectContaining({
        field: `${P}.properties[spec].type`,
        message: 'Required value: must not be empty for specified object fields',
      }),
    );
    expect(status.message).toContain(
      'CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid',
    );
  });

  it('accepts a structural schema with CEL rules', async () => {
    const tls = adminTls(server.kubeconfigPath);
    const res = await adminFetch(
      `${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      tls,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(
          crd({
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [{ rule: 'self.replicas <= 10', message: 'at most 10' }],
                properties: { replicas: { type: 'integer', default: 1 } },
              },
            },
          }),
        ),
      },
    );
    expect(res.status, res.body).toBe(201);
  });
});
