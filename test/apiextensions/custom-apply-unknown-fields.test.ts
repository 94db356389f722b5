/**
 * Server-side apply of custom objects with fields their schema does not declare, over raw
 * HTTPS as client-go's REST client sends it (Kubernetes' conformance test `FieldValidation
 * should create/apply an invalid CR with extra properties for CRD with validation schema`):
 * apply types the configuration with the schema, so an undeclared field fails whatever the
 * `fieldValidation` directive (`.unknownField: field not declared in schema`), while a field
 * under `x-kubernetes-preserve-unknown-fields` (at the root or nested) is kept.
 *
 * kube-apiserver answers these with 500 (kubernetes#122480); Capstan answers 400 BadRequest
 * with kube's message (src/apply/errors.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

const GROUP = 'applyfields.example.com';

let server: TestServer;
let tls: Required<AdminTls>;

function crd(plural: string, kind: string, schema: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Cluster',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  };
}

const STRICT_SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        foo: { type: 'string' },
        cronSpec: { type: 'string', pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$' },
        ports: {
          type: 'array',
          'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
          'x-kubernetes-list-type': 'map',
          items: {
            type: 'object',
            required: ['containerPort', 'protocol'],
            properties: {
              containerPort: { type: 'integer', format: 'int32' },
              name: { type: 'string' },
              protocol: { type: 'string' },
            },
          },
        },
      },
    },
  },
};

const SPEC = { type: 'object', properties: { dummy: { type: 'string' } } };

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  for (const def of [
    crd('noxus', 'Noxu', STRICT_SCHEMA),
    crd('roots', 'Root', {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { spec: SPEC },
    }),
    crd('nesteds', 'Nested', {
      type: 'object',
      properties: { spec: { ...SPEC, 'x-kubernetes-preserve-unknown-fields': true } },
    }),
  ]) {
    const res = await adminJson(
      `${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      tls,
      'POST',
      def,
    );
    expect(res.status).toBe(201);
  }
  // Wait until all three are served.
  for (const plural of ['noxus', 'roots', 'nesteds']) {
    for (let i = 0; ; i++) {
      const res = await adminJson(`${server.url}/apis/${GROUP}/v1/${plural}`, tls);
      if (res.status === 200) break;
      if (i > 100) throw new Error(`${plural} not served`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}, 60_000);

afterAll(async () => {
  await server?.close();
});

function apply(plural: string, name: string, yaml: string, fieldValidation?: string) {
  const query = `fieldManager=field_validation_mgr${fieldValidation === undefined ? '' : `&fieldValidation=${fieldValidation}`}`;
  return adminJson(`${server.url}/apis/${GROUP}/v1/${plural}/${name}?${query}`, tls, 'PATCH', yaml, {
    'content-type': 'application/apply-patch+yaml',
  });
}

describe('server-side apply of custom objects with undeclared fields', () => {
  it.each(['Strict', 'Warn', 'Ignore', undefined])(
    'rejects a root field the schema does not declare (fieldValidation=%s)',
    async (fieldValidation) => {
      const res = await apply(
        'noxus',
        'mytest',
        `apiVersion: ${GROUP}/v1
kind: Noxu
metadata:
  name: mytest
unknownField: unknown
spec:
  foo: foo1
  cronSpec: "* * * * */5"
  ports:
  - name: x
    containerPort: 80
    protocol: TCP
`,
        fieldValidation,
      );
      expect(res.status).toBe(400);
      expect(res.json['reason']).toBe('BadRequest');
      expect(res.text).toContain('.unknownField: field not declared in schema');
      expect(res.json['message']).toBe(
        `failed to create typed patch object (/mytest; ${GROUP}/v1, Kind=Noxu): .unknownField: field not declared in schema`,
      );
      expect((await adminJson(`${server.url}/apis/${GROUP}/v1/noxus/mytest`, tls)).status).toBe(404);
    },
  );

  it('applies the same object without the undeclared field', async () => {
    const res = await apply(
      'noxus',
      'mytest',
      `apiVersion: ${GROUP}/v1\nkind: Noxu\nmetadata:\n  name: mytest\nspec:\n  foo: foo1\n`,
      'Strict',
    );
    expect(res.status).toBe(201);
    expect(res.json['spec']).toEqual({ foo: 'foo1' });
  });

  it('keeps undeclared fields where the schema preserves unknown fields (root and nested)', async () => {
    const root = await apply(
      'roots',
      'r1',
      `apiVersion: ${GROUP}/v1\nkind: Root\nmetadata:\n  name: r1\nextra: {a: [1]}\nspec:\n  dummy: d\n`,
      'Strict',
    );
    expect(root.status).toBe(201);
    expect(root.json['extra']).toEqual({ a: [1] });
    const nested = await apply(
      'nesteds',
      'n1',
      `apiVersion: ${GROUP}/v1\nkind: Nested\nmetadata:\n  name: n1\nspec:\n  dummy: d\n  other: {b: c}\n`,
      'Strict',
    );
    expect(nested.status).toBe(201);
    expect(nested.json['spec']).toEqual({ dummy: 'd', other: { b: 'c' } });
    // ... but not beside the preserving object.
    const outside = await apply(
      'nesteds',
      'n2',
      `apiVersion: ${GROUP}/v1\nkind: Nested\nmetadata:\n  name: n2\nextra: 1\n`,
      'Strict',
    );
    expect(outside.status).toBe(400);
    expect(outside.text).toContain('.extra: field not declared in schema');
  });
});
