/**
 * Shapes of the generated OpenAPI documents: what kubectl reads (definitions with their GVK,
 * patch metadata from the proto markers, kube's special types) is there, every reference
 * resolves, and the protobuf form says what the JSON form says.
 */
import { describe, expect, it } from 'vitest';
import { DefinitionBuilder } from '../../src/openapi/definitions.js';
import { Descriptions } from '../../src/openapi/descriptions.js';
import { OpenApiDocuments } from '../../src/openapi/documents.js';
import { definitionName, groupVersionPath, groupStem, operationStem } from '../../src/openapi/names.js';
import { isJsonArray, type Json, type JsonObject } from '../../src/openapi/types.js';
import { loadGnosticDocumentType, toGnosticDocument } from '../../src/openapi/v2-protobuf.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { loadSchemas } from '../../src/registry/schema.js';

const registry = loadRegistry();
const schemas = loadSchemas();
// Shapes without the description texts (test/openapi/descriptions.test.ts covers those).
const docs = new OpenApiDocuments(registry, schemas, {
  v2Info: { title: 'Kubernetes', version: 'v1.33.0' },
  descriptions: Descriptions.none(),
});
const v2 = JSON.parse(docs.v2Json().body.toString('utf8')) as JsonObject;
const v2Defs = v2['definitions'] as Record<string, JsonObject>;
const root = JSON.parse(docs.v3Root().body.toString('utf8')) as {
  paths: Record<string, { serverRelativeURL: string }>;
};

function v3Doc(path: string): JsonObject {
  const d = docs.v3(path);
  if (d === undefined) throw new Error(`no v3 document ${path}`);
  return JSON.parse(d.body.toString('utf8')) as JsonObject;
}
function v3Schemas(path: string): Record<string, JsonObject> {
  return (v3Doc(path)['components'] as { schemas: Record<string, JsonObject> }).schemas;
}
function props(def: JsonObject | undefined): Record<string, JsonObject> {
  return (def?.['properties'] ?? {}) as Record<string, JsonObject>;
}

/** Every `$ref` anywhere below `value`. */
function refs(value: Json, out: string[] = []): string[] {
  if (isJsonArray(value)) for (const v of value) refs(v, out);
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

/** Operations of a document: [path, method, operation]. */
function operations(doc: JsonObject): [string, string, JsonObject][] {
  const out: [string, string, JsonObject][] = [];
  for (const [path, item] of Object.entries(doc['paths'] as Record<string, JsonObject>)) {
    for (const [method, op] of Object.entries(item))
      if (method !== 'parameters') out.push([path, method, op as JsonObject]);
  }
  return out;
}

describe('names', () => {
  it('follow kube: definition names from Go packages, operation stems, group-version paths', () => {
    expect(definitionName('k8s.io.api.apps.v1.Deployment')).toBe('io.k8s.api.apps.v1.Deployment');
    expect(definitionName('k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps')).toBe(
      'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps',
    );
    expect(definitionName('k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService')).toBe(
      'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService',
    );
    expect(() => definitionName('google.protobuf.Any')).toThrow();
    expect(groupStem('')).toBe('core');
    expect(groupStem('flowcontrol.apiserver.k8s.io')).toBe('flowcontrolApiserver');
    expect(operationStem('rbac.authorization.k8s.io', 'v1')).toBe('RbacAuthorizationV1');
    expect(groupVersionPath('', 'v1')).toBe('api/v1');
    expect(groupVersionPath('apps', 'v1')).toBe('apis/apps/v1');
  });
});

describe('definitions', () => {
  it('hold every served kind (and its list) with its group-version-kind, in v2 and in its group version v3 document', () => {
    for (const t of registry.all()) {
      const name = definitionName(t.messageType);
      const gvk = { group: t.group, kind: t.kind, version: t.version };
      expect(v2Defs[name]?.['x-kubernetes-group-version-kind'], name).toContainEqual(gvk);
      const v3 = v3Schemas(groupVersionPath(t.group, t.version));
      expect(v3[name]?.['x-kubernetes-group-version-kind'], name).toContainEqual(gvk);
      expect(props(v2Defs[name])['apiVersion'], name).toEqual({ type: 'string' });
      expect(props(v2Defs[name])['kind'], name).toEqual({ type: 'string' });
      if (t.verbs.includes('list')) {
        expect(v2Defs[`${name}List`]?.['x-kubernetes-group-version-kind']).toContainEqual({
          ...gvk,
          kind: t.listKind,
        });
      }
    }
  });

  it('give TypeMeta only to kinds: a pod template has metadata but no apiVersion', () => {
    const tmpl = props(v2Defs['io.k8s.api.core.v1.PodTemplateSpec']);
    expect(tmpl['metadata']).toEqual({
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    });
    expect(tmpl['apiVersion']).toBeUndefined();
    expect(props(v2Defs['io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent'])['kind']).toBeUndefined();
  });

  it('carry the patch and list markers of every field that has them, in both flavours', () => {
    const defs = new DefinitionBuilder(schemas, registry, Descriptions.none());
    let checked = 0;
    for (const type of defs.closure(registry.all().map((t) => t.messageType))) {
      const v2Props = props(v2Defs[definitionName(type)]);
      if (v2Defs[definitionName(type)]?.['properties'] === undefined) continue;
      for (const [json, ref] of schemas.jsonView(type)) {
        const f = ref.field;
        const p = v2Props[json];
        expect(p, `${type}.${json}`).toBeDefined();
        if (f.patchMergeKey !== undefined) {
          expect(p?.['x-kubernetes-patch-merge-key'], `${type}.${json}`).toBe(f.patchMergeKey);
          checked++;
        }
        if (f.patchStrategy !== undefined)
          expect(p?.['x-kubernetes-patch-strategy'], `${type}.${json}`).toBe(f.patchStrategy);
        if (f.listType !== undefined)
          expect(p?.['x-kubernetes-list-type'], `${type}.${json}`).toBe(f.listType);
        if (f.listMapKeys !== undefined)
          expect(p?.['x-kubernetes-list-map-keys'], `${type}.${json}`).toEqual(f.listMapKeys);
      }
    }
    expect(checked).toBeGreaterThan(20);
    const containers = props(v3Schemas('api/v1')['io.k8s.api.core.v1.PodSpec'])['containers'];
    expect(containers).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/io.k8s.api.core.v1.Container' },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    });
    const ports = props(v2Defs['io.k8s.api.core.v1.Container'])['ports'];
    expect(ports?.['x-kubernetes-list-map-keys']).toEqual(['containerPort', 'protocol']);
    expect(ports?.['x-kubernetes-patch-merge-key']).toBe('containerPort');
  });

  it('wrap a v3 reference in allOf when it has sibling extensions, and not in v2', () => {
    const v3 = props(v3Schemas('apis/apps/v1')['io.k8s.api.apps.v1.DeploymentSpec'])['strategy'];
    expect(v3).toEqual({
      allOf: [{ $ref: '#/components/schemas/io.k8s.api.apps.v1.DeploymentStrategy' }],
      'x-kubernetes-patch-strategy': 'retainKeys',
    });
    expect(props(v2Defs['io.k8s.api.apps.v1.DeploymentSpec'])['strategy']).toEqual({
      $ref: '#/definitions/io.k8s.api.apps.v1.DeploymentStrategy',
      'x-kubernetes-patch-strategy': 'retainKeys',
    });
  });

  it('render the special wire types as kube does', () => {
    const core = v3Schemas('api/v1');
    const ios = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
    expect(v2Defs[ios]).toEqual({ type: 'string', format: 'int-or-string' });
    expect(core[ios]).toEqual({ format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] });
    expect(props(v2Defs['io.k8s.api.apps.v1.RollingUpdateDeployment'])['maxSurge']).toEqual({
      $ref: `#/definitions/${ios}`,
    });
    const q = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
    expect(v2Defs[q]).toEqual({ type: 'string' });
    expect(core[q]).toEqual({ oneOf: [{ type: 'string' }, { type: 'number' }] });
    expect(props(v2Defs['io.k8s.api.core.v1.ResourceRequirements'])['limits']).toEqual({
      type: 'object',
      additionalProperties: { $ref: `#/definitions/${q}` },
    });
    expect(v2Defs['io.k8s.apimachinery.pkg.apis.meta.v1.Time']).toEqual({
      type: 'string',
      format: 'date-time',
    });
    expect(v2Defs['io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime']).toEqual({
      type: 'string',
      format: 'date-time',
    });
    expect(v2Defs['io.k8s.apimachinery.pkg.runtime.RawExtension']).toEqual({ type: 'object' });
    expect(v2Defs['io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1']).toEqual({ type: 'object' });
    expect(v2Defs['io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON']).toEqual({});
    expect(props(v2Defs['io.k8s.api.core.v1.Secret'])['data']).toEqual({
      type: 'object',
      additionalProperties: { type: 'string', format: 'byte' },
    });
    expect(props(v2Defs['io.k8s.api.core.v1.PodSpec'])['activeDeadlineSeconds']).toEqual({
      type: 'integer',
      format: 'int64',
    });
  });

  it('inline Go named string slices (ExtraValue) instead of defining their protobuf wrapper', () => {
    expect(props(v2Defs['io.k8s.api.authentication.v1.UserInfo'])['extra']).toEqual({
      type: 'object',
      additionalProperties: { type: 'array', items: { type: 'string' } },
    });
    expect(v2Defs['io.k8s.api.authentication.v1.ExtraValue']).toBeUndefined();
  });

  it('flatten inline members into the parent (Probe has httpGet, not handler)', () => {
    const probe = props(v2Defs['io.k8s.api.core.v1.Probe']);
    expect(probe['httpGet']).toEqual({ $ref: '#/definitions/io.k8s.api.core.v1.HTTPGetAction' });
    expect(probe['initialDelaySeconds']).toEqual({ type: 'integer', format: 'int32' });
    expect(probe['handler']).toBeUndefined();
    expect(v2Defs['io.k8s.api.core.v1.ProbeHandler']).toBeUndefined();
  });

  it('list as required only what kube requires, and only existing properties', () => {
    expect(v2Defs['io.k8s.api.core.v1.Container']?.['required']).toEqual(['name']);
    expect(v2Defs['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta']?.['required']).toBeUndefined();
    expect(v2Defs['io.k8s.api.apps.v1.Deployment']?.['required']).toBeUndefined();
    for (const [name, def] of Object.entries(v2Defs)) {
      for (const r of (def['required'] ?? []) as string[])
        expect(props(def)[r], `${name}.${r}`).toBeDefined();
    }
  });

  it('mark atomic structs with x-kubernetes-map-type', () => {
    expect(v2Defs['io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector']?.['x-kubernetes-map-type']).toBe(
      'atomic',
    );
    expect(
      props(v2Defs['io.k8s.api.core.v1.PersistentVolumeSpec'])['claimRef']?.['x-kubernetes-map-type'],
    ).toBe('granular');
  });

  it('resolve every reference inside the same document', () => {
    for (const r of refs(v2)) expect(v2Defs[r.replace('#/definitions/', '')], r).toBeDefined();
    for (const path of Object.keys(root.paths)) {
      const doc = v3Doc(path);
      const s = v3Schemas(path);
      for (const r of refs(doc))
        expect(s[r.replace('#/components/schemas/', '')], `${path}: ${r}`).toBeDefined();
    }
  });
});

describe('paths', () => {
  it('give every operation a unique id, and an action and the GVK of its kind but discovery', () => {
    for (const doc of [v2, ...Object.keys(root.paths).map(v3Doc)]) {
      const ids = new Set<string>();
      for (const [path, method, op] of operations(doc)) {
        expect(ids.has(op['operationId'] as string), `${method} ${path}`).toBe(false);
        ids.add(op['operationId'] as string);
        if (path.endsWith('/')) {
          // Discovery (kube's getAPIResources, getAPIGroup and the root's getAPIVersions): no
          // action, no kind.
          expect(op['operationId'], path).toMatch(/^get\w*(APIResources|APIGroup|APIVersions)$/);
          expect(op['x-kubernetes-action'], path).toBeUndefined();
          continue;
        }
        expect(op['x-kubernetes-action'], `${method} ${path}`).toMatch(
          /^(get|list|post|put|patch|delete|deletecollection|watch|watchlist)$/,
        );
        expect(op['x-kubernetes-group-version-kind'], `${method} ${path}`).toBeDefined();
      }
    }
  });

  it("list each group version's and group's discovery as kube does", () => {
    const apps = v3Doc('apis/apps/v1')['paths'] as Record<string, Record<string, JsonObject>>;
    expect(apps['/apis/apps/v1/']?.['get']?.['operationId']).toBe('getAppsV1APIResources');
    expect(apps['/apis/apps/v1/']?.['get']?.['tags']).toEqual(['apps_v1']);
    const paths = v2['paths'] as Record<string, Record<string, JsonObject>>;
    expect(paths['/api/v1/']?.['get']?.['operationId']).toBe('getCoreV1APIResources');
    expect(paths['/apis/rbac.authorization.k8s.io/']?.['get']?.['operationId']).toBe(
      'getRbacAuthorizationAPIGroup',
    );
    expect(paths['/apis/rbac.authorization.k8s.io/']?.['get']?.['tags']).toEqual(['rbacAuthorization']);
    const definitions = v2['definitions'] as Record<string, JsonObject>;
    expect(
      definitions['io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList']?.[
        'x-kubernetes-group-version-kind'
      ],
    ).toEqual([{ group: '', kind: 'APIResourceList', version: 'v1' }]);
  });

  it('list the root discovery of v2 as kube does: /api/ and /apis/', () => {
    const paths = v2['paths'] as Record<string, Record<string, JsonObject>>;
    const definitions = v2['definitions'] as Record<string, JsonObject>;
    for (const [path, operationId, tag, kind] of [
      ['/api/', 'getCoreAPIVersions', 'core', 'APIVersions'],
      ['/apis/', 'getAPIVersions', 'apis', 'APIGroupList'],
    ] as const) {
      const op = paths[path]?.['get'];
      expect(op?.['operationId'], path).toBe(operationId);
      expect(op?.['tags'], path).toEqual([tag]);
      expect(op?.['x-kubernetes-action'], path).toBeUndefined();
      const name = `io.k8s.apimachinery.pkg.apis.meta.v1.${kind}`;
      expect((op?.['responses'] as Record<string, JsonObject>)['200']).toEqual({
        description: 'OK',
        schema: { $ref: `#/definitions/${name}` },
      });
      expect(definitions[name]?.['x-kubernetes-group-version-kind']).toEqual([
        { group: '', kind, version: 'v1' },
      ]);
    }
    expect(definitions['io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions']?.['required']).toEqual([
      'versions',
      'serverAddressByClientCIDRs',
    ]);
  });

  it('serve a Deployment like kube: collection, item, status, scale, watch', () => {
    const apps = v3Doc('apis/apps/v1')['paths'] as Record<string, Record<string, JsonObject>>;
    const item = apps['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'];
    expect(Object.keys(item ?? {}).sort()).toEqual(['delete', 'get', 'parameters', 'patch', 'put']);
    expect(item?.['patch']?.['operationId']).toBe('patchAppsV1NamespacedDeployment');
    expect(item?.['patch']?.['x-kubernetes-group-version-kind']).toEqual({
      group: 'apps',
      kind: 'Deployment',
      version: 'v1',
    });
    expect(Object.keys((item?.['patch']?.['requestBody'] as { content: object }).content)).toContain(
      'application/strategic-merge-patch+json',
    );
    const scale = apps['/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale'];
    expect(scale?.['put']?.['x-kubernetes-group-version-kind']).toEqual({
      group: 'autoscaling',
      kind: 'Scale',
      version: 'v1',
    });
    expect(apps['/apis/apps/v1/deployments']?.['get']?.['operationId']).toBe(
      'listAppsV1DeploymentForAllNamespaces',
    );
    expect(
      apps['/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}']?.['get']?.['x-kubernetes-action'],
    ).toBe('watch');
    const v2Paths = v2['paths'] as Record<string, Record<string, JsonObject>>;
    expect(
      v2Paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.['patch']?.['consumes'],
    ).toEqual([
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
    ]);
  });

  it("advertise kube's media types: JSON, YAML and protobuf, and both watch streams on lists and watches", () => {
    const object = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
    const streams = [
      ...object,
      'application/json;stream=watch',
      'application/vnd.kubernetes.protobuf;stream=watch',
    ];
    const v2Paths = v2['paths'] as Record<string, Record<string, JsonObject>>;
    const collection = v2Paths['/apis/apps/v1/namespaces/{namespace}/deployments'];
    expect(collection?.['get']?.['produces']).toEqual(streams);
    expect(collection?.['post']?.['produces']).toEqual(object);
    expect(collection?.['post']?.['consumes']).toEqual(['*/*']);
    expect(v2Paths['/apis/apps/v1/watch/deployments']?.['get']?.['produces']).toEqual(streams);
    expect(v2Paths['/api/v1/namespaces/{namespace}/pods/{name}/status']?.['patch']?.['produces']).toEqual(
      object,
    );
    // Discovery consumes what it produces.
    expect(v2Paths['/apis/apps/v1/']?.['get']?.['consumes']).toEqual(object);
    expect(v2Paths['/apis/apps/']?.['get']?.['produces']).toEqual(object);
    for (const [path, method, op] of operations(v2)) {
      const action = op['x-kubernetes-action'];
      const listing = typeof action === 'string' && ['list', 'watch', 'watchlist'].includes(action);
      expect(op['produces'], `${method} ${path}`).toEqual(listing ? streams : object);
    }
    // v3 keys a response's content by media type, in code-point order as kube writes a map.
    const apps = v3Doc('apis/apps/v1')['paths'] as Record<string, Record<string, JsonObject>>;
    const ok = (op: JsonObject | undefined): string[] =>
      Object.keys(((op?.['responses'] as Record<string, JsonObject>)['200']?.['content'] ?? {}) as object);
    expect(ok(apps['/apis/apps/v1/namespaces/{namespace}/deployments']?.['get'])).toEqual(
      [...streams].sort(),
    );
    expect(ok(apps['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.['get'])).toEqual(
      [...object].sort(),
    );
  });

  it("list a pod's binding and a namespace's finalize, which routes of their own serve, as kube does", () => {
    const core = v3Doc('api/v1')['paths'] as Record<string, Record<string, JsonObject>>;
    for (const paths of [v2['paths'] as Record<string, Record<string, JsonObject>>, core]) {
      const binding = paths['/api/v1/namespaces/{namespace}/pods/{name}/binding'];
      expect(Object.keys(binding ?? {}).sort()).toEqual(['parameters', 'post']);
      expect(binding?.['post']?.['operationId']).toBe('createCoreV1NamespacedPodBinding');
      expect(binding?.['post']?.['x-kubernetes-group-version-kind']).toEqual({
        group: '',
        kind: 'Binding',
        version: 'v1',
      });
      const finalize = paths['/api/v1/namespaces/{name}/finalize'];
      expect(Object.keys(finalize ?? {}).sort()).toEqual(['parameters', 'put']);
      expect(finalize?.['put']?.['operationId']).toBe('replaceCoreV1NamespaceFinalize');
      expect(finalize?.['put']?.['x-kubernetes-action']).toBe('put');
    }
    const v2Binding = (v2['paths'] as Record<string, Record<string, JsonObject>>)[
      '/api/v1/namespaces/{namespace}/pods/{name}/binding'
    ]?.['post'];
    expect(v2Binding?.['parameters']).toContainEqual({
      in: 'body',
      name: 'body',
      required: true,
      schema: { $ref: '#/definitions/io.k8s.api.core.v1.Binding' },
    });
    expect(Object.keys(v2Binding?.['responses'] ?? {})).toEqual(['200', '201', '202', '401']);
  });

  it('give create-only kinds only a POST', () => {
    const authz = v3Doc('apis/authorization.k8s.io/v1')['paths'] as Record<
      string,
      Record<string, JsonObject>
    >;
    const sar = authz['/apis/authorization.k8s.io/v1/subjectaccessreviews'];
    expect(Object.keys(sar ?? {})).toEqual(['post', 'parameters']);
    expect(
      authz['/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews']?.['post'],
    ).toBeDefined();
  });

  it("take kube's pretty query parameter on every path", () => {
    for (const doc of [v2, v3Doc('api/v1'), v3Doc('apis/apps/v1')]) {
      const paths = doc['paths'] as Record<string, { parameters?: JsonObject[] }>;
      for (const [path, item] of Object.entries(paths)) {
        const pretty = item.parameters?.find((p) => p['name'] === 'pretty');
        expect(pretty, path).toMatchObject({ in: 'query', name: 'pretty' });
      }
    }
  });

  it('advertise the modifying parameters kube lists: dryRun, fieldManager, fieldValidation, force on PATCH', () => {
    for (const doc of [v2, v3Doc('api/v1'), v3Doc('apis/apps/v1')]) {
      for (const [, method, op] of operations(doc)) {
        const names = ((op['parameters'] ?? []) as JsonObject[]).map((p) => p['name']);
        if (method === 'post' || method === 'put' || method === 'patch') {
          expect(names).toEqual(expect.arrayContaining(['dryRun', 'fieldManager', 'fieldValidation']));
        }
        if (method === 'patch') expect(names).toContain('force');
        else expect(names).not.toContain('force');
        if (method === 'delete') expect(names).toContain('dryRun');
      }
    }
  });
});

describe('the v3 root', () => {
  it('lists every served group version by hash', () => {
    const expected = [...new Set(registry.all().map((t) => groupVersionPath(t.group, t.version)))].sort();
    expect(Object.keys(root.paths).sort()).toEqual(expected);
    for (const [path, entry] of Object.entries(root.paths)) {
      expect(entry.serverRelativeURL).toBe(`/openapi/v3/${path}?hash=${docs.v3(path)?.etag}`);
      expect(docs.v3(path)?.etag).toMatch(/^[0-9A-F]{128}$/);
    }
  });
});

describe('the v2 protobuf form', () => {
  const type = loadGnosticDocumentType();
  const decoded = type.toObject(type.decode(docs.v2Protobuf().body)) as {
    swagger: string;
    definitions: { additional_properties: { name: string; value: Record<string, unknown> }[] };
    paths: {
      path: {
        name: string;
        value: Record<string, { vendor_extension?: { name: string; value: { yaml: string } }[] }>;
      }[];
    };
  };

  it('decodes to the same definitions and paths as the JSON form', () => {
    expect(decoded.swagger).toBe('2.0');
    expect(decoded.definitions.additional_properties.map((d) => d.name)).toEqual(Object.keys(v2Defs));
    expect(decoded.paths.path.map((p) => p.name)).toEqual(Object.keys(v2['paths'] as object));
    // Deterministic: encoding the JSON form again gives the served bytes.
    expect(Buffer.from(type.encode(toGnosticDocument(v2)).finish()).equals(docs.v2Protobuf().body)).toBe(
      true,
    );
  });

  it('keeps vendor extensions as YAML (JSON) text, as gnostic does', () => {
    const dep = decoded.definitions.additional_properties.find(
      (d) => d.name === 'io.k8s.api.apps.v1.Deployment',
    )?.value as {
      type: { value: string[] };
      vendor_extension: { name: string; value: { yaml: string } }[];
      properties: { additional_properties: { name: string }[] };
    };
    expect(dep.type.value).toEqual(['object']);
    const gvk = dep.vendor_extension.find((e) => e.name === 'x-kubernetes-group-version-kind');
    expect(JSON.parse(gvk?.value.yaml ?? 'null')).toEqual([
      { group: 'apps', kind: 'Deployment', version: 'v1' },
    ]);
    expect(dep.properties.additional_properties.map((p) => p.name)).toEqual([
      'apiVersion',
      'kind',
      'metadata',
      'spec',
      'status',
    ]);
    const patch = decoded.paths.path.find(
      (p) => p.name === '/apis/apps/v1/namespaces/{namespace}/deployments/{name}',
    )?.value['patch'];
    expect(patch?.vendor_extension?.map((e) => e.name)).toEqual([
      'x-kubernetes-action',
      'x-kubernetes-group-version-kind',
    ]);
  });

  it('refuses keywords it has no conversion for instead of dropping them', () => {
    const doc: JsonObject = { ...v2, definitions: { x: { type: 'object', oneOf: [] } } };
    expect(() => toGnosticDocument(doc)).toThrow(
      expect.objectContaining({ code: 'OPENAPI_UNSUPPORTED_KEYWORD' }),
    );
  });

  it('shares the JSON form ETag', () => {
    expect(docs.v2Protobuf().etag).toBe(docs.v2Json().etag);
  });
});

describe('laziness', () => {
  it('builds nothing until asked, and each family only when asked', () => {
    const fresh = new OpenApiDocuments(registry, schemas, {
      v2Info: { title: 'Kubernetes', version: 'v1.33.0' },
    });
    expect(fresh.stats()).toEqual({});
    fresh.v3Root();
    expect(fresh.stats().v3Documents).toBe(Object.keys(root.paths).length);
    expect(fresh.stats().v2JsonBytes).toBeUndefined();
    expect(fresh.v3Root()).toBe(fresh.v3Root());
  });
});
