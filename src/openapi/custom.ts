/**
 * OpenAPI v3 documents of custom resources (CRD versions), as kube-apiserver publishes them at
 * `/openapi/v3/apis/<group>/<version>`: the resources' paths, each kind's schema (the version's
 * `openAPIV3Schema` with `apiVersion`, `kind` and `metadata` declared, and the kind's
 * `x-kubernetes-group-version-kind`), its list, and the meta types they reference. kubectl
 * explain finds a kind by that extension.
 */
import type { ResourceType } from '../registry/types.js';
import type { DefinitionBuilder } from './definitions.js';
import { groupVersionPath, gvkJson } from './names.js';
import { resourcePaths } from './operations.js';
import { collectPaths } from './paths.js';
import type { Json, JsonObject } from './types.js';
import { renderPath } from './v3.js';

/** One served custom kind version and its schema. */
export interface CustomKindDoc {
  readonly type: ResourceType;
  /** The version's `openAPIV3Schema` (a JSON object; undefined: any object). */
  readonly schema: Readonly<Record<string, unknown>> | undefined;
}

/** The custom kinds to publish; `generation` changes whenever they do. */
export interface CustomKinds {
  readonly generation: number;
  kinds(): readonly CustomKindDoc[];
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';
const OBJECT_META = `${META}ObjectMeta`;
const LIST_META = `${META}ListMeta`;

const API_VERSION_DOC =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DOC =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const METADATA_DOC =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/** kube's definition name of a custom kind: the reversed group, the version, the kind. */
export function customDefinitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function ref(name: string): JsonObject {
  return { $ref: `#/components/schemas/${name}` };
}

function kindSchema(doc: CustomKindDoc): JsonObject {
  const t = doc.type;
  const base: JsonObject =
    doc.schema === undefined ? { type: 'object' } : (structuredClone(doc.schema) as JsonObject);
  const props = (base['properties'] ?? {}) as JsonObject;
  base['properties'] = {
    apiVersion: { description: API_VERSION_DOC, type: 'string' },
    kind: { description: KIND_DOC, type: 'string' },
    metadata: { allOf: [ref(`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`)], description: METADATA_DOC },
    ...Object.fromEntries(
      Object.entries(props).filter(([k]) => k !== 'metadata' && k !== 'apiVersion' && k !== 'kind'),
    ),
  };
  base['x-kubernetes-group-version-kind'] = [gvkJson({ group: t.group, version: t.version, kind: t.kind })];
  return base;
}

function listSchema(doc: CustomKindDoc, itemName: string): JsonObject {
  const t = doc.type;
  return {
    description: `${t.listKind} is a list of ${t.kind}`,
    properties: {
      apiVersion: { description: API_VERSION_DOC, type: 'string' },
      items: {
        description: `List of ${t.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: ref(itemName),
        type: 'array',
      },
      kind: { description: KIND_DOC, type: 'string' },
      metadata: { allOf: [ref('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta')], description: METADATA_DOC },
    },
    required: ['items'],
    type: 'object',
    'x-kubernetes-group-version-kind': [gvkJson({ group: t.group, version: t.version, kind: t.listKind })],
  };
}

/** The v3 documents of `kinds`, by `/openapi/v3` root key (`apis/<group>/<version>`). */
export function buildCustomV3Documents(
  kinds: readonly CustomKindDoc[],
  defs: DefinitionBuilder,
): Map<string, JsonObject> {
  const byGv = new Map<string, CustomKindDoc[]>();
  for (const k of kinds) {
    const key = groupVersionPath(k.type.group, k.type.version);
    const list = byGv.get(key);
    if (list === undefined) byGv.set(key, [k]);
    else list.push(k);
  }
  const out = new Map<string, JsonObject>();
  for (const [key, docs] of [...byGv].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const own: JsonObject = {};
    const specs = docs.flatMap((d) => {
      const name = customDefinitionName(d.type.group, d.type.version, d.type.kind);
      own[name] = kindSchema(d);
      own[`${name}List`] = listSchema(d, name);
      return resourcePaths({ ...d.type, messageType: name });
    });
    // Custom kinds' definitions are named already; the rest are the built-in messages'.
    const refs: Pick<DefinitionBuilder, 'ref'> = {
      ref: (type, flavor) =>
        type.startsWith('k8s.io.') ? defs.ref(type, flavor) : `#/components/schemas/${type}`,
    };
    const { paths, types } = collectPaths(specs, (p) => renderPath(p, refs));
    const builtIn = [...types].filter((t) => t.startsWith('k8s.io.'));
    const schemas: JsonObject = {};
    for (const type of defs.closure([...builtIn, OBJECT_META, LIST_META])) {
      schemas[defs.ref(type, 'v3').slice('#/components/schemas/'.length)] = defs.definition(type, 'v3');
    }
    Object.assign(schemas, own);
    const sorted: JsonObject = {};
    for (const k of Object.keys(schemas).sort()) sorted[k] = schemas[k] as Json;
    out.set(key, {
      components: { schemas: sorted },
      info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
      openapi: '3.0.0',
      paths,
    });
  }
  return out;
}
