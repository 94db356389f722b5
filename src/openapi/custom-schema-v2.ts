/**
 * The OpenAPI v2 (Swagger 2.0) form of a custom resource version's structural schema, as
 * kube-apiserver publishes it in `/openapi/v2`. Swagger 2.0 and kubectl's v2 reader cannot express
 * everything a structural schema says, so kube drops it:
 *
 * - the junctors `allOf`, `oneOf`, `anyOf` and `not` (and with them the int-or-string `anyOf`);
 * - `nullable: true`: the node loses its `type`, `items` and `properties`, and its parent no
 *   longer lists it in `required` (a nullable `additionalProperties` clears `required`);
 * - `x-kubernetes-preserve-unknown-fields: true`: the node loses `items` and `properties`, and
 *   `type: object`;
 * - `type: array` without `items` loses its type;
 * - `default` (kube prunes defaults from every v2 definition), and what a structural schema
 *   does not keep (`example`, `externalDocs`, ...).
 *
 * A root that preserves unknown fields (or a CRD with `spec.preserveUnknownFields`) publishes
 * only `type: object`: declared properties would make kubectl's v2 validation reject the rest.
 * Elsewhere the kind gets `apiVersion`, `kind` and `metadata`, and each embedded resource
 * (`x-kubernetes-embedded-resource`) that does not preserve unknown fields gets them too, with
 * `kind` and `apiVersion` required.
 */
import type { Json, JsonObject } from './types.js';
import { isJsonArray } from './types.js';

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

/** Reference to ObjectMeta's v2 definition. */
export const OBJECT_META_V2_REF = '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

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

/** One node of the schema in v2 form (see the module comment); `raw` is not modified. */
function convertNode(raw: Readonly<Record<string, unknown>>): JsonObject {
  const nullable = raw['nullable'] === true;
  const preserve = raw['x-kubernetes-preserve-unknown-fields'] === true;
  let type = typeof raw['type'] === 'string' ? raw['type'] : '';
  const rawItems = raw['items'];
  const rawProps = raw['properties'];
  const keepChildren = !nullable && !preserve;
  const items = keepChildren && isObject(rawItems) ? rawItems : undefined;
  const properties = keepChildren && isObject(rawProps) ? rawProps : undefined;
  if (nullable) type = '';
  if (items === undefined && type === 'array') type = '';
  if (preserve && type === 'object') type = '';

  let required = isJsonArray(raw['required'] as Json) ? [...(raw['required'] as string[])] : [];
  if (properties !== undefined) {
    required = required.filter((r) => !(isObject(properties[r]) && properties[r]['nullable'] === true));
  }
  const ap = raw['additionalProperties'];
  if (isObject(ap) && ap['nullable'] === true) required = [];

  const out: JsonObject = {};
  if (typeof raw['description'] === 'string' && raw['description'] !== '')
    out['description'] = raw['description'];
  if (type !== '') out['type'] = type;
  for (const k of VALUE_KEYWORDS) {
    const v = raw[k] as Json | undefined;
    if (!isEmpty(v)) out[k] = v as Json;
  }
  if (required.length > 0) out['required'] = required;
  if (items !== undefined) out['items'] = convertNode(items);
  if (properties !== undefined) {
    const props: JsonObject = {};
    for (const [k, p] of Object.entries(properties)) if (isObject(p)) props[k] = convertNode(p);
    out['properties'] = props;
  }
  if (ap === true) out['additionalProperties'] = true;
  else if (isObject(ap)) out['additionalProperties'] = convertNode(ap);
  for (const k of FLAG_EXTENSIONS) if (raw[k] === true) out[k] = true;
  for (const k of VALUE_EXTENSIONS) {
    const v = raw[k] as Json | undefined;
    if (!isEmpty(v)) out[k] = v as Json;
  }
  return out;
}

function metadataProperty(): JsonObject {
  return { description: KIND_PROPERTY_DOCS.metadata, $ref: OBJECT_META_V2_REF };
}

/** Adds apiVersion, kind and metadata to the embedded resources of `s` (in place, recursively). */
function addEmbeddedProperties(s: JsonObject): void {
  const props = s['properties'];
  if (isObject(props)) for (const p of Object.values(props)) if (isObject(p)) addEmbeddedProperties(p);
  if (isObject(s['items'])) addEmbeddedProperties(s['items']);
  if (isObject(s['additionalProperties'])) addEmbeddedProperties(s['additionalProperties']);
  if (s['x-kubernetes-preserve-unknown-fields'] === true) return;
  if (s['x-kubernetes-embedded-resource'] !== true) return;
  const own = isObject(props) ? props : {};
  own['apiVersion'] = { description: KIND_PROPERTY_DOCS.embeddedApiVersion, type: 'string' };
  own['kind'] = { description: KIND_PROPERTY_DOCS.embeddedKind, type: 'string' };
  own['metadata'] = metadataProperty();
  s['properties'] = sortKeys(own);
  const required = isJsonArray(s['required']) ? [...(s['required'] as string[])] : [];
  if (!required.includes('kind')) required.push('kind');
  if (!required.includes('apiVersion')) required.push('apiVersion');
  s['required'] = required;
}

function sortKeys(o: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k] as Json;
  return out;
}

/**
 * The v2 definition of a custom kind version, without its `x-kubernetes-group-version-kind`
 * (the caller adds it).
 * @param schema the version's `openAPIV3Schema` (undefined: none).
 * @param crdPreservesUnknownFields the CRD's `spec.preserveUnknownFields`.
 */
export function customKindSchemaV2(
  schema: Readonly<Record<string, unknown>> | undefined,
  crdPreservesUnknownFields = false,
): JsonObject {
  if (
    schema === undefined ||
    crdPreservesUnknownFields ||
    schema['x-kubernetes-preserve-unknown-fields'] === true
  ) {
    return { type: 'object' };
  }
  const out = convertNode(schema);
  const props = isObject(out['properties']) ? out['properties'] : {};
  props['apiVersion'] = { description: KIND_PROPERTY_DOCS.apiVersion, type: 'string' };
  props['kind'] = { description: KIND_PROPERTY_DOCS.kind, type: 'string' };
  props['metadata'] = metadataProperty();
  out['properties'] = sortKeys(props);
  addEmbeddedProperties(out);
  return out;
}
