/**
 * Custom resources in `/openapi/v2`, read as clients read it: raw HTTPS (JSON with ETags and
 * 304, gnostic protobuf), kubectl 1.33 `explain` (v3 by default, v2 protobuf with
 * `--output=plaintext-openapiv2`), and kubectl's client-side apply of an existing custom object.
 *
 * The expected definitions (`fixtures/crds/widget-openapi-v2.json`, `-v3.json`) are what
 * kube-apiserver v1.33 publishes for `fixtures/crds/widget-openapi.yaml`: its v2 conversion drops
 * what Swagger 2.0 cannot say (nullable, junctors, preserve-unknown-fields' properties, defaults).
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGnosticDocumentType } from '../../src/openapi/v2-protobuf.js';
import { adminFetchBytes } from '../support/https.js';
import {
  adminJson,
  adminTls,
  kubectlOutput,
  startTestServer,
  type AdminTls,
  type TestServer,
} from '../support/server.js';

const CRD = 'widgets.openapi.example.com';
const V1 = 'com.example.openapi.v1.Widget';
const V2 = 'com.example.openapi.v2.Widget';
const V3 = 'com.example.openapi.v3.Widget';
const PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

type Swagger = { definitions: Record<string, unknown>; paths: Record<string, Record<string, unknown>> };

let server: TestServer;
let tls: Required<AdminTls>;

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  await kubectl('apply', '-f', 'fixtures/crds/widget-openapi.yaml');
  await kubectl('wait', '--for=condition=Established', '--timeout=10s', `crd/${CRD}`);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

function kubectl(...args: string[]): Promise<string> {
  return kubectlOutput('1.33', args, server.kubeconfigPath);
}

/** GET /openapi/v2 as bytes (protobuf is binary). */
async function getV2(
  headers: Record<string, string>,
): Promise<{ status: number; etag: string | undefined; body: Buffer }> {
  const res = await adminFetchBytes(`${server.url}/openapi/v2`, tls, { headers });
  const etag = res.headers['etag'];
  return { status: res.status, etag: typeof etag === 'string' ? etag : undefined, body: res.body };
}

async function swagger(): Promise<{ doc: Swagger; etag: string }> {
  const res = await getV2({ accept: 'application/json' });
  expect(res.status).toBe(200);
  return { doc: JSON.parse(res.body.toString('utf8')) as Swagger, etag: res.etag ?? '' };
}

/** Polls the JSON document until `pred` holds (kube: within a second or so of the change). */
async function waitForSwagger(pred: (doc: Swagger) => boolean, timeoutMs = 5_000): Promise<Swagger> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { doc } = await swagger();
    if (pred(doc)) return doc;
    if (Date.now() > deadline) throw new Error('the v2 document did not change in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('/openapi/v2 with custom resources', () => {
  it('publishes each served version as kube does: definitions, lists and paths', async () => {
    const expected = JSON.parse(readFileSync('fixtures/crds/widget-openapi-v2.json', 'utf8')) as Record<
      string,
      unknown
    >;
    const { doc } = await swagger();
    for (const [name, def] of Object.entries(expected)) expect(doc.definitions[name], name).toEqual(def);
    expect(doc.definitions[`${V2}List`]).toBeDefined();
    // v3 is not served: not published.
    expect(Object.keys(doc.definitions).filter((d) => d.startsWith('com.example.openapi.v3'))).toEqual([]);
    const paths = Object.keys(doc.paths).filter((p) => p.startsWith('/apis/openapi.example.com/'));
    expect(paths.sort()).toEqual([
      '/apis/openapi.example.com/v1/namespaces/{namespace}/widgets',
      '/apis/openapi.example.com/v1/namespaces/{namespace}/widgets/{name}',
      '/apis/openapi.example.com/v1/namespaces/{namespace}/widgets/{name}/status',
      '/apis/openapi.example.com/v1/widgets',
      '/apis/openapi.example.com/v2/namespaces/{namespace}/widgets',
      '/apis/openapi.example.com/v2/namespaces/{namespace}/widgets/{name}',
      '/apis/openapi.example.com/v2/widgets',
    ]);
    const patch = doc.paths['/apis/openapi.example.com/v1/namespaces/{namespace}/widgets/{name}']?.[
      'patch'
    ] as { consumes: string[]; 'x-kubernetes-group-version-kind': unknown };
    // Custom resources take no strategic merge patch.
    expect(patch.consumes).toEqual([
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/apply-patch+yaml',
    ]);
    expect(patch['x-kubernetes-group-version-kind']).toEqual({
      group: 'openapi.example.com',
      kind: 'Widget',
      version: 'v1',
    });
    // As kube's custom resource builder: JSON and YAML in and out (no protobuf, no watch stream
    // listed), a patch answers 200 only, and a delete of the collection takes no body.
    const jsonYaml = ['application/json', 'application/yaml'];
    const ops = (
      path: string,
    ): Record<string, { consumes: string[]; produces: string[]; responses: object }> =>
      doc.paths[`/apis/openapi.example.com/v1/${path}`] as Record<
        string,
        { consumes: string[]; produces: string[]; responses: object }
      >;
    for (const path of [
      'namespaces/{namespace}/widgets',
      'namespaces/{namespace}/widgets/{name}',
      'widgets',
    ]) {
      for (const [method, op] of Object.entries(ops(path))) {
        if (method === 'parameters') continue;
        expect(op.produces, `${method} ${path}`).toEqual(jsonYaml);
        if (method !== 'patch') expect(op.consumes, `${method} ${path}`).toEqual(jsonYaml);
      }
    }
    expect(Object.keys(ops('namespaces/{namespace}/widgets/{name}')['patch']?.responses ?? {})).toEqual([
      '200',
      '401',
    ]);
    const removeAll = ops('namespaces/{namespace}/widgets')['delete'] as unknown as {
      parameters: { in: string }[];
    };
    expect(removeAll.parameters.filter((p) => p.in === 'body')).toEqual([]);
    // The meta types the paths reference are there.
    expect(doc.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']).toBeDefined();
  });

  it('publishes the v3 schemas as kube does (embedded resources, int-or-string unfolded, no example)', async () => {
    const expected = JSON.parse(readFileSync('fixtures/crds/widget-openapi-v3.json', 'utf8')) as Record<
      string,
      unknown
    >;
    for (const version of ['v1', 'v2']) {
      const res = await adminJson(`${server.url}/openapi/v3/apis/openapi.example.com/${version}`, tls);
      expect(res.status).toBe(200);
      const schemas = (res.json['components'] as { schemas: Record<string, unknown> }).schemas;
      for (const [name, def] of Object.entries(expected)) {
        if (name.startsWith(`com.example.openapi.${version}.`)) expect(schemas[name], name).toEqual(def);
      }
      const item = (res.json['paths'] as Record<string, Record<string, unknown>>)[
        `/apis/openapi.example.com/${version}/namespaces/{namespace}/widgets/{name}`
      ];
      const patch = item?.['patch'] as { requestBody: { content: Record<string, unknown> } };
      expect(Object.keys(patch.requestBody.content)).not.toContain('application/strategic-merge-patch+json');
    }
  });

  it("lists a version's selectable fields on its kind and list (v2 and v3)", async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'sels.sel.example.com' },
      spec: {
        group: 'sel.example.com',
        scope: 'Cluster',
        names: { plural: 'sels', singular: 'sel', kind: 'Sel', listKind: 'SelList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            selectableFields: [{ jsonPath: '.spec.color' }],
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { color: { type: 'string' } } } },
              },
            },
          },
        ],
      },
    };
    const created = await adminJson(
      `${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`,
      tls,
      'POST',
      crd,
    );
    expect(created.status).toBe(201);
    const doc = await waitForSwagger((d) => 'com.example.sel.v1.SelList' in d.definitions);
    const ext = [{ fieldPath: 'spec.color' }];
    for (const name of ['com.example.sel.v1.Sel', 'com.example.sel.v1.SelList']) {
      expect((doc.definitions[name] as Record<string, unknown>)['x-kubernetes-selectable-fields']).toEqual(
        ext,
      );
    }
    const v3 = await adminJson(`${server.url}/openapi/v3/apis/sel.example.com/v1`, tls);
    const schemas = (v3.json['components'] as { schemas: Record<string, Record<string, unknown>> }).schemas;
    expect(schemas['com.example.sel.v1.Sel']?.['x-kubernetes-selectable-fields']).toEqual(ext);
    expect(schemas['com.example.sel.v1.SelList']?.['x-kubernetes-selectable-fields']).toEqual(ext);
  });

  it('serves the same document as gnostic protobuf, with the JSON ETag', async () => {
    const json = await getV2({ accept: 'application/json' });
    const pb = await getV2({ accept: PROTOBUF });
    expect(pb.status).toBe(200);
    expect(pb.etag).toBe(json.etag);
    const type = loadGnosticDocumentType();
    const doc = type.toObject(type.decode(pb.body), { longs: Number }) as {
      definitions: { additional_properties: { name: string; value: Record<string, unknown> }[] };
    };
    const byName = new Map(doc.definitions.additional_properties.map((d) => [d.name, d.value]));
    const widget = byName.get(V1) as {
      description: string;
      properties: { additional_properties: { name: string; value: Record<string, unknown> }[] };
      vendor_extension: { name: string; value: { yaml: string } }[];
    };
    expect(widget.description).toBe('Widget is a test');
    expect(widget.vendor_extension[0]?.name).toBe('x-kubernetes-group-version-kind');
    const spec = widget.properties.additional_properties.find((p) => p.name === 'spec')?.value as {
      required: string[];
      properties: { additional_properties: { name: string; value: Record<string, unknown> }[] };
    };
    expect(spec.required).toEqual(['cronSpec']);
    const prop = (n: string): Record<string, unknown> | undefined =>
      spec.properties.additional_properties.find((p) => p.name === n)?.value;
    expect(prop('cronSpec')).toMatchObject({ pattern: '^a', type: { value: ['string'] } });
    // (`minimum: 0` is proto3's default value: not on the wire, in kube's encoding either.)
    expect(prop('replicas')).toMatchObject({ maximum: 10, format: 'int32' });
    expect(prop('st')).toMatchObject({ max_properties: 3 });
    const ex = prop('ex') as { enum: { yaml: string }[]; title: string };
    expect(ex.title).toBe('T');
    expect(ex.enum.map((e) => JSON.parse(e.yaml) as unknown)).toEqual(['a', 'b']);
    // A nullable field has no type left.
    expect(prop('nul')).toEqual({});
    expect(byName.has(`${V2}List`)).toBe(true);
  });

  it('kubectl explain reads the custom kind from v2 protobuf and v3, meta types with descriptions', async () => {
    const v2 = await kubectl(
      'explain',
      'widgets.spec',
      '--api-version=openapi.example.com/v1',
      '--output=plaintext-openapiv2',
      '--recursive',
    );
    expect(v2).toMatch(/RESOURCE: spec <Object>/);
    expect(v2).toMatch(
      /\n {3}emb\t<Object>\n {6}apiVersion\t<string>\n {6}kind\t<string>\n {6}metadata\t<Object>/,
    );
    expect(v2).toMatch(/\n {3}ios\t<>\n/);
    expect(v2).toMatch(/\n {3}lst\t<\[\]Object>\n {6}name\t<string>\n/);
    const meta = await kubectl('explain', 'widgets.metadata', '--api-version=openapi.example.com/v1');
    expect(meta).toMatch(
      /DESCRIPTION:.*Standard object's metadata.*FIELDS:.*creationTimestamp.*<string>.*CreationTimestamp is a timestamp/s,
    );
  });

  it('kubectl apply updates an existing custom object (the PATCH operations offer no strategic merge patch)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'widget-'));
    const file = join(dir, 'w.yaml');
    const manifest = (replicas: number): string =>
      `apiVersion: openapi.example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {cronSpec: "a 1", replicas: ${replicas}}\n`;
    await writeFile(file, manifest(1));
    expect(await kubectl('apply', '-f', file)).toContain('widget.openapi.example.com/w1 created');
    await writeFile(file, manifest(2));
    expect(await kubectl('apply', '-f', file)).toContain('widget.openapi.example.com/w1 configured');
    expect(
      await kubectl('get', 'widgets.v1.openapi.example.com', 'w1', '-o', 'jsonpath={.spec.replicas}'),
    ).toBe('2');
    await rm(dir, { recursive: true, force: true });
  });

  it('changes the document and its ETag when a version is renamed, made not served, or the CRD deleted', async () => {
    const before = await swagger();
    expect((await getV2({ accept: 'application/json', 'if-none-match': before.etag })).status).toBe(304);
    // Rename v2 to v4.
    const url = `${server.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}`;
    const renamed = await adminJson(
      url,
      tls,
      'PATCH',
      [
        { op: 'test', path: '/spec/versions/1/name', value: 'v2' },
        { op: 'replace', path: '/spec/versions/1/name', value: 'v4' },
      ],
      { 'content-type': 'application/json-patch+json' },
    );
    expect(renamed.status).toBe(200);
    const doc = await waitForSwagger((d) => 'com.example.openapi.v4.Widget' in d.definitions, 1_500);
    expect(doc.definitions[V2]).toBeUndefined();
    expect(doc.definitions[`${V2}List`]).toBeUndefined();
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/apis/openapi.example.com/v2/'))).toBe(false);
    const after = await swagger();
    expect(after.etag).not.toBe(before.etag);
    expect((await getV2({ accept: 'application/json', 'if-none-match': before.etag })).status).toBe(200);
    // Stop serving v4 (index 1), then serve v3 (index 2).
    const unserved = await adminJson(
      url,
      tls,
      'PATCH',
      [
        { op: 'replace', path: '/spec/versions/1/served', value: false },
        { op: 'replace', path: '/spec/versions/2/served', value: true },
      ],
      { 'content-type': 'application/json-patch+json' },
    );
    expect(unserved.status).toBe(200);
    const doc2 = await waitForSwagger((d) => V3 in d.definitions, 1_500);
    expect(doc2.definitions['com.example.openapi.v4.Widget']).toBeUndefined();
    expect(doc2.definitions[V1]).toBeDefined();
    await kubectl('delete', 'crd', CRD, '--timeout=20s');
    const gone = await waitForSwagger(
      (d) => !Object.keys(d.definitions).some((n) => n.startsWith('com.example.openapi.')),
    );
    expect(Object.keys(gone.paths).some((p) => p.startsWith('/apis/openapi.example.com/'))).toBe(false);
  });
});
