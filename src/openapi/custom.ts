/**
 * OpenAPI v3 documents of custom resources (CRD versions), as kube-apiserver publishes them at
 * `/openapi/v3/apis/<group>/<version>`: the resources' paths, each kind's schema (the version's
 * structural schema as kube publishes it, see `custom-schema.ts`, with the kind's
 * `x-kubernetes-group-version-kind`), its list, and the meta types they reference. kubectl
 * explain finds a kind by that extension. The pieces both documents share (names, paths, the
 * list schema) are here too; the v2 form is `custom-v2.ts`.
 *
 * Custom resources take no strategic merge patch, so their PATCH operations do not offer it:
 * kubectl (1.31+ reads v3 for this) would otherwise send one and get 415. As in kube, their
 * deprecated `/watch/` paths are not published.
 */
import type { ResourceType } from '../registry/types.js';
import type { DefinitionBuilder } from './definitions.js';
import { customKindSchema, KIND_PROPERTY_DOCS } from './custom-schema.js';
import { groupVersionPath, gvkJson } from './names.js';
import { resourcePaths, type OperationSpec, type PathSpec } from './operations.js';
import { collectPaths } from './paths.js';
import { sortKeys, type JsonObject, type OpenApiFlavor } from './types.js';
import { renderPath } from './v3.js';

/** One served custom kind version and its schema. */
export interface CustomKindDoc {
  readonly type: ResourceType;
  /** The version's `openAPIV3Schema` (a JSON object; undefined: any object). */
  readonly schema: Readonly<Record<string, unknown>> | undefined;
  /** The CRD's `spec.preserveUnknownFields` (v1 CRDs: false). */
  readonly preserveUnknownFields?: boolean;
  /** The version's `selectableFields[].jsonPath` (`.spec.color`). */
  readonly selectableFields?: readonly string[];
}

/** The custom kinds to publish; `generation` changes whenever they do. */
export interface CustomKinds {
  readonly generation: number;
  kinds(): readonly CustomKindDoc[];
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';
const OBJECT_META = `${META}ObjectMeta`;
const LIST_META = `${META}ListMeta`;
const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

const API_VERSION_DOC = KIND_PROPERTY_DOCS.apiVersion;
const KIND_DOC = KIND_PROPERTY_DOCS.kind;

/** kube's definition name of a custom kind: the reversed group, the version, the kind. */
export function customDefinitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/** The definition name of a custom kind version. */
function customKindName(doc: CustomKindDoc): string {
  return customDefinitionName(doc.type.group, doc.type.version, doc.type.kind);
}

/**
 * The paths of a custom kind version; its operations name the kind's definition (and its list,
 * `<name>List`) by definition name rather than by protobuf message.
 */
function customPaths(doc: CustomKindDoc): PathSpec[] {
  const prefix = `/apis/${doc.type.group}/${doc.type.version}/watch/`;
  // kube publishes no `/watch/` paths for custom resources (watch is a list parameter).
  const paths = resourcePaths({ ...doc.type, messageType: customKindName(doc) });
  return paths
    .filter((p) => !p.path.startsWith(prefix))
    .map((p) => ({ ...p, operations: p.operations.map(customOperation) }));
}

/** What custom resources come in and are taken in: JSON and YAML (no protobuf, no watch stream listed). */
const CUSTOM_MEDIA_TYPES: readonly string[] = ['application/json', 'application/yaml'];

/**
 * An operation of {@link resourcePaths} (made for built-in kinds) as kube's custom resource
 * builder writes it: it produces JSON and YAML; a patch takes the patch types but strategic
 * merge, and answers 200 only (no 201); a delete of the collection lists no body; any other
 * operation consumes JSON and YAML, whether it has a body or not.
 */
function customOperation(o: OperationSpec): OperationSpec {
  const { body, ...rest } = o;
  const out = { ...rest, produces: CUSTOM_MEDIA_TYPES };
  if (body === undefined || o.action === 'deletecollection') return { ...out, consumes: CUSTOM_MEDIA_TYPES };
  if (!body.mediaTypes.includes(STRATEGIC_MERGE_PATCH))
    return { ...out, body: { ...body, mediaTypes: CUSTOM_MEDIA_TYPES } };
  return {
    ...out,
    body: { ...body, mediaTypes: body.mediaTypes.filter((m) => m !== STRATEGIC_MERGE_PATCH) },
    responses: o.responses.filter((r) => r.code !== '201'),
  };
}

/** `x-kubernetes-selectable-fields` of a kind and its list, when the version declares any. */
function selectableFieldsExtension(doc: CustomKindDoc): JsonObject {
  const fields = doc.selectableFields ?? [];
  if (fields.length === 0) return {};
  return {
    'x-kubernetes-selectable-fields': fields.map((f) => ({ fieldPath: f.replace(/^\./, '') })),
  };
}

/** A reference to a definition in a document of `flavor`. */
function refTo(name: string, flavor: OpenApiFlavor): string {
  return `${flavor === 'v2' ? '#/definitions/' : '#/components/schemas/'}${name}`;
}

/**
 * The reference builder of custom documents: custom kinds' definitions are named already, the
 * rest are the built-in messages'.
 */
export function customRefs(defs: DefinitionBuilder): Pick<DefinitionBuilder, 'ref'> {
  return {
    ref: (type, flavor) => (type.startsWith('k8s.io.') ? defs.ref(type, flavor) : refTo(type, flavor)),
  };
}

/** The list kind's definition (`<Kind>List`), as kube builds it for either flavour. */
function customListSchema(doc: CustomKindDoc, flavor: OpenApiFlavor): JsonObject {
  const t = doc.type;
  const meta =
    flavor === 'v2'
      ? { $ref: refTo('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta', flavor) }
      : { allOf: [{ $ref: refTo('io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta', flavor) }] };
  return {
    description: `${t.listKind} is a list of ${t.kind}`,
    properties: {
      apiVersion: { description: API_VERSION_DOC, type: 'string' },
      items: {
        description: `List of ${t.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
        items: { $ref: refTo(customKindName(doc), flavor) },
        type: 'array',
      },
      kind: { description: KIND_DOC, type: 'string' },
      metadata: { ...meta, description: KIND_PROPERTY_DOCS.listMetadata },
    },
    required: ['items'],
    type: 'object',
    'x-kubernetes-group-version-kind': [gvkJson({ group: t.group, version: t.version, kind: t.listKind })],
    ...selectableFieldsExtension(doc),
  };
}

/** The definition of a custom kind version in a document of `flavor`. */
function kindDefinition(doc: CustomKindDoc, flavor: OpenApiFlavor): JsonObject {
  const t = doc.type;
  return {
    ...customKindSchema(doc.schema, flavor, doc.preserveUnknownFields === true),
    'x-kubernetes-group-version-kind': [gvkJson({ group: t.group, version: t.version, kind: t.kind })],
    ...selectableFieldsExtension(doc),
  };
}

/**
 * The definitions `kinds` add to a document of `flavor` (each kind's and its list's, by
 * definition name) and their paths.
 */
export function customDefinitions(
  kinds: readonly CustomKindDoc[],
  flavor: OpenApiFlavor,
): { definitions: JsonObject; specs: PathSpec[] } {
  const definitions: JsonObject = {};
  const specs = kinds.flatMap((d) => {
    const name = customKindName(d);
    definitions[name] = kindDefinition(d, flavor);
    definitions[`${name}List`] = customListSchema(d, flavor);
    return customPaths(d);
  });
  return { definitions, specs };
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
    const { definitions: own, specs } = customDefinitions(docs, 'v3');
    const refs = customRefs(defs);
    const { paths, types } = collectPaths(specs, (p) => renderPath(p, refs));
    const builtIn = [...types].filter((t) => t.startsWith('k8s.io.'));
    const schemas: JsonObject = {};
    for (const type of defs.closure([...builtIn, OBJECT_META, LIST_META])) {
      schemas[defs.ref(type, 'v3').slice('#/components/schemas/'.length)] = defs.definition(type, 'v3');
    }
    Object.assign(schemas, own);
    out.set(key, {
      components: { schemas: sortKeys(schemas) },
      info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
      openapi: '3.0.0',
      paths,
    });
  }
  return out;
}
