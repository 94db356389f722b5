/**
 * A custom resource version's structural schema as kube-apiserver publishes it for the kind's
 * definition, in the v3 documents and in the Swagger 2.0 document.
 *
 * Both keep what a structural schema holds (so not `example` or `externalDocs`), add
 * `apiVersion`, `kind` and `metadata` to the kind, and the same three, with `kind` and
 * `apiVersion` required, to each embedded resource (`x-kubernetes-embedded-resource`). v3 also
 * unfolds `x-kubernetes-int-or-string` into an `anyOf` of integer and string.
 *
 * Swagger 2.0 and kubectl's v2 reader cannot express everything, so v2 drops:
 * - the junctors `allOf`, `oneOf`, `anyOf` and `not`;
 * - `nullable: true`: the node loses its `type`, `items` and `properties`, and its parent no
 *   longer lists it in `required` (a nullable `additionalProperties` clears `required`);
 * - `x-kubernetes-preserve-unknown-fields: true`: the node loses `items` and `properties`, and
 *   `type: object`; embedded resources that preserve unknown fields get no added properties;
 * - `type: array` without `items` loses its type;
 * - `default` (kube prunes defaults from every v2 definition).
 * A v2 root that preserves unknown fields (or a CRD with `spec.preserveUnknownFields`) is only
 * `type: object`: declared properties would make kubectl's v2 validation reject the rest.
 */
import type { Json, JsonObject, OpenApiFlavor } from './types.js';
import { isJsonArray, sortKeys } from './types.js';

/** Descriptions kube gives the properties it adds (wire facts of its published documents). */
export const KIND_PROPERTY_DOCS = {
  apiVersion:
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  kind: 'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  metadata:
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
  listMetadata:
    'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
  embeddedApiVersion:
    'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
  embeddedKind:
    'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
} as const;

const OBJECT_META_V2_REF = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const OBJECT_META_V3_REF = '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/** Value keywords a structural schema keeps, in the order kube writes them. */
const VALUE_KEYWORDS: readonly string[] = [
  'format',
  'title',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
];

/** Extensions a structural schema keeps (the boolean ones only when true). */
const FLAG_EXTENSIONS: readonly string[] = [
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
];
const VALUE_EXTENSIONS: readonly string[] = [
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Go's `omitempty` on kube's fields: false, empty strings and empty arrays are not written (numbers are pointers, so 0 is). */
function isEmpty(v: Json | undefined): boolean {
  return v === undefined || v === null || v === false || v === '' || (isJsonArray(v) && v.length === 0);
}

const INT_OR_STRING: readonly JsonObject[] = [{ type: 'integer' }, { type: 'string' }];

function isIntOrStringAnyOf(v: unknown): boolean {
  return (
    Array.isArray(v) &&
    v.length === 2 &&
    v.every((s, i) => isObject(s) && Object.keys(s).length === 1 && s['type'] === INT_OR_STRING[i]?.['type'])
  );
}

/**
 * The junctors of a v3 node, with kube's unfolding of `x-kubernetes-int-or-string` (an
 * `anyOf` of integer and string, first in `allOf` when the node has an `anyOf` of its own).
 */
function junctors(raw: Readonly<Record<string, unknown>>): JsonObject {
  const out: JsonObject = {};
  const list = (k: string): JsonObject[] => {
    const v = raw[k];
    return Array.isArray(v) ? v.filter(isObject).map((s) => convertNode(s, 'v3')) : [];
  };
  let allOf = list('allOf');
  let anyOf = list('anyOf');
  if (raw['x-kubernetes-int-or-string'] === true) {
    const unfolded =
      isIntOrStringAnyOf(raw['anyOf']) || (allOf.length > 0 && isIntOrStringAnyOf(allOf[0]?.['anyOf']));
    if (!unfolded) {
      if (anyOf.length === 0) anyOf = INT_OR_STRING.map((t) => ({ ...t }));
      else allOf = [{ anyOf: INT_OR_STRING.map((t) => ({ ...t })) }, ...allOf];
    }
  }
  if (allOf.length > 0) out['allOf'] = allOf;
  if (anyOf.length > 0) out['anyOf'] = anyOf;
  const oneOf = list('oneOf');
  if (oneOf.length > 0) out['oneOf'] = oneOf;
  if (isObject(raw['not'])) out['not'] = convertNode(raw['not'], 'v3');
  return out;
}

/** One node of the schema in `flavor` form (see the module comment); `raw` is not modified. */
function convertNode(raw: Readonly<Record<string, unknown>>, flavor: OpenApiFlavor): JsonObject {
  const v2 = flavor === 'v2';
  const nullable = raw['nullable'] === true;
  const preserve = raw['x-kubernetes-preserve-unknown-fields'] === true;
  let type = typeof raw['type'] === 'string' ? raw['type'] : '';
  const rawItems = raw['items'];
  const rawProps = raw['properties'];
  const keepChildren = !v2 || (!nullable && !preserve);
  const items = keepChildren && isObject(rawItems) ? rawItems : undefined;
  const properties = keepChildren && isObject(rawProps) ? rawProps : undefined;
  let required = isJsonArray(raw['required'] as Json) ? [...(raw['required'] as string[])] : [];
  const ap = raw['additionalProperties'];
  if (v2) {
    if (nullable) type = '';
    if (items === undefined && type === 'array') type = '';
    if (preserve && type === 'object') type = '';
    if (properties !== undefined) {
      required = required.filter((r) => !(isObject(properties[r]) && properties[r]['nullable'] === true));
    }
    if (isObject(ap) && ap['nullable'] === true) required = [];
  }

  const out: JsonObject = {};
  if (typeof raw['description'] === 'string' && raw['description'] !== '')
    out['description'] = raw['description'];
  if (type !== '') out['type'] = type;
  if (!v2) {
    if (nullable) out['nullable'] = true;
    // kube prunes defaults from the v2 document only.
    if (raw['default'] !== undefined) out['default'] = raw['default'] as Json;
  }
  for (const k of VALUE_KEYWORDS) {
    const v = raw[k] as Json | undefined;
    if (!isEmpty(v)) out[k] = v as Json;
  }
  if (required.length > 0) out['required'] = required;
  if (!v2) Object.assign(out, junctors(raw));
  if (items !== undefined) out['items'] = convertNode(items, flavor);
  if (properties !== undefined) {
    const props: JsonObject = {};
    for (const [k, p] of Object.entries(properties)) if (isObject(p)) props[k] = convertNode(p, flavor);
    out['properties'] = props;
  }
  if (ap === true) out['additionalProperties'] = true;
  else if (isObject(ap)) out['additionalProperties'] = convertNode(ap, flavor);
  for (const k of FLAG_EXTENSIONS) if (raw[k] === true) out[k] = true;
  for (const k of VALUE_EXTENSIONS) {
    const v = raw[k] as Json | undefined;
    if (!isEmpty(v)) out[k] = v as Json;
  }
  return out;
}

function metadataProperty(flavor: OpenApiFlavor): JsonObject {
  // OpenAPI 3.0 ignores keywords beside `$ref`: kube wraps the reference in `allOf` there.
  return flavor === 'v2'
    ? { description: KIND_PROPERTY_DOCS.metadata, $ref: OBJECT_META_V2_REF }
    : { description: KIND_PROPERTY_DOCS.metadata, allOf: [{ $ref: OBJECT_META_V3_REF }] };
}

/**
 * Adds apiVersion, kind and metadata to the embedded resources of `s` (in place, recursively);
 * in v2 not where unknown fields are preserved (kubectl would then reject the unknown ones).
 */
function addEmbeddedProperties(s: JsonObject, flavor: OpenApiFlavor): void {
  const props = s['properties'];
  if (isObject(props))
    for (const p of Object.values(props)) if (isObject(p)) addEmbeddedProperties(p, flavor);
  if (isObject(s['items'])) addEmbeddedProperties(s['items'], flavor);
  if (isObject(s['additionalProperties'])) addEmbeddedProperties(s['additionalProperties'], flavor);
  if (flavor === 'v2' && s['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (s['x-kubernetes-embedded-resource'] !== true) return;
  const own = isObject(props) ? props : {};
  own['apiVersion'] = { description: KIND_PROPERTY_DOCS.embeddedApiVersion, type: 'string' };
  own['kind'] = { description: KIND_PROPERTY_DOCS.embeddedKind, type: 'string' };
  own['metadata'] = metadataProperty(flavor);
  s['properties'] = sortKeys(own);
  const required = isJsonArray(s['required']) ? [...(s['required'] as string[])] : [];
  if (!required.includes('kind')) required.push('kind');
  if (!required.includes('apiVersion')) required.push('apiVersion');
  s['required'] = required;
}

/**
 * The definition of a custom kind version in a document of `flavor`, without its
 * `x-kubernetes-group-version-kind` (the caller adds it).
 * @param schema the version's `openAPIV3Schema` (undefined: none).
 * @param crdPreservesUnknownFields the CRD's `spec.preserveUnknownFields`.
 */
export function customKindSchema(
  schema: Readonly<Record<string, unknown>> | undefined,
  flavor: OpenApiFlavor,
  crdPreservesUnknownFields = false,
): JsonObject {
  if (
    schema === undefined ||
    (flavor === 'v2' &&
      (crdPreservesUnknownFields || schema['x-kubernetes-preserve-unknown-fields'] === true))
  ) {
    return { type: 'object' };
  }
  const out = convertNode(schema, flavor);
  const props = isObject(out['properties']) ? out['properties'] : {};
  props['apiVersion'] = { description: KIND_PROPERTY_DOCS.apiVersion, type: 'string' };
  props['kind'] = { description: KIND_PROPERTY_DOCS.kind, type: 'string' };
  props['metadata'] = metadataProperty(flavor);
  out['properties'] = sortKeys(props);
  addEmbeddedProperties(out, flavor);
  return out;
}
