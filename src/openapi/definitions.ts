/**
 * The schema definitions of the OpenAPI documents, generated from the message schemas
 * (`SchemaSet`) and the registry of served kinds; nothing here is written per kind.
 *
 * Shapes follow what kube-apiserver publishes, so kubectl's explain, client-side validation and
 * client-side apply read them the same way:
 * - one definition per message, named like kube's (`io.k8s.api.apps.v1.Deployment`), properties
 *   by JSON name with inline (`json:",inline"`) members flattened into the parent;
 * - `apiVersion` and `kind` on the types that carry Go's TypeMeta (the kinds, their lists, Scale,
 *   Status, DeleteOptions), which the protobuf messages do not have as fields;
 * - `x-kubernetes-group-version-kind` on those types; `x-kubernetes-patch-merge-key`,
 *   `-patch-strategy`, `-list-type`, `-list-map-keys`, `-map-type` from the proto markers;
 * - the special wire types as kube renders them (Time: date-time string, IntOrString: v2
 *   `string`/`int-or-string`, v3 `oneOf` integer|string, Quantity: v2 string, v3 `oneOf`
 *   string|number, RawExtension and FieldsV1: object, apiextensions JSON and its unions: any);
 * - messages that only wrap a Go named `[]string` (`repeated string items`: meta `Verbs`,
 *   `ExtraValue`) inline as arrays of strings, as Go's JSON has them.
 *
 * Descriptions (src/openapi/descriptions.ts) go where kube puts them: the message's on its
 * definition, a field's on its property; in v3 a described reference is `allOf: [{$ref}]` with
 * the description beside it, in v2 the description sits beside `$ref`. An inline member's
 * properties take the descriptions of the message they come from; `apiVersion` and `kind`
 * take meta/v1 TypeMeta's.
 *
 * `required` lists a field when upstream marks it `+required`, or when its Go json tag has no
 * `omitempty` and it is not `+optional` (kube's rule). The proto markers record `omitempty` only
 * where it was checked, so this is at most kube's list: a wrong entry would make kubectl's
 * client-side validation reject valid manifests, a missing one costs nothing.
 */
import {
  isScalarType,
  specialWireType,
  type FieldSchema,
  type JsonFieldRef,
  type MessageSchema,
  type ScalarType,
  type SchemaSet,
} from '../registry/schema.js';
import type { Registry } from '../registry/types.js';
import type { Descriptions } from './descriptions.js';
import { definitionName, gvkJson, type Gvk } from './names.js';
import type { Json, JsonObject, OpenApiFlavor } from './types.js';

/** The protobuf message of a TokenRequest (the body and answer of serviceaccounts/token). */
export const TOKEN_REQUEST_MESSAGE = 'k8s.io.api.authentication.v1.TokenRequest';
/** The protobuf message of an Eviction (the body of pods/eviction). */
export const EVICTION_MESSAGE = 'k8s.io.api.policy.v1.Eviction';
/** A pod's binding to a node (`pods/binding`). */
export const BINDING_MESSAGE = 'k8s.io.api.core.v1.Binding';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';

/** Message types the operations reference besides the kinds (request and response bodies). */
/** The discovery list of a group version (the answer of `/apis/<group>/<version>/`). */
export const API_RESOURCE_LIST_MESSAGE = `${META}APIResourceList`;
/** The discovery document of a named group (the answer of `/apis/<group>/`). */
export const API_GROUP_MESSAGE = `${META}APIGroup`;
/** The legacy group's versions (the answer of `/api/`). */
export const API_VERSIONS_MESSAGE = `${META}APIVersions`;
/** Every named group (the answer of `/apis/`). */
export const API_GROUP_LIST_MESSAGE = `${META}APIGroupList`;

export const META_TYPES = {
  deleteOptions: `${META}DeleteOptions`,
  status: `${META}Status`,
  watchEvent: `${META}WatchEvent`,
  patch: `${META}Patch`,
  scale: 'k8s.io.api.autoscaling.v1.Scale',
} as const;

const APIEXT_JSON = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON';

/** The message whose field texts describe `apiVersion` and `kind` (they are not message fields). */
const TYPE_META = `${META}TypeMeta`;

const INT32: JsonObject = { type: 'integer', format: 'int32' };
const INT64: JsonObject = { type: 'integer', format: 'int64' };

const SCALAR_SCHEMAS: Readonly<Record<ScalarType, JsonObject>> = {
  int32: INT32,
  sint32: INT32,
  sfixed32: INT32,
  uint32: INT32,
  fixed32: INT32,
  int64: INT64,
  sint64: INT64,
  sfixed64: INT64,
  uint64: INT64,
  fixed64: INT64,
  double: { type: 'number', format: 'double' },
  float: { type: 'number', format: 'float' },
  bool: { type: 'boolean' },
  string: { type: 'string' },
  bytes: { type: 'string', format: 'byte' },
};

function compareGvk(a: Gvk, b: Gvk): number {
  return a.group < b.group
    ? -1
    : a.group > b.group
      ? 1
      : a.version < b.version
        ? -1
        : a.version > b.version
          ? 1
          : 0;
}

/**
 * Builds definitions (and references to them) for either document flavour. Construction only
 * indexes the registry; schemas are made on demand and not cached (each document is built once
 * and its bytes are what gets cached).
 */
export class DefinitionBuilder {
  readonly #schemas: SchemaSet;
  readonly #descriptions: Descriptions;
  readonly #gvks = new Map<string, Gvk[]>();
  readonly #typeMeta = new Set<string>();

  /**
   * @param descriptions texts of the messages and fields (`Descriptions.none()` for none).
   * @throws SchemaError `UNKNOWN_MESSAGE` when a served kind's message is not in `schemas`.
   */
  constructor(schemas: SchemaSet, registry: Registry, descriptions: Descriptions) {
    this.#schemas = schemas;
    this.#descriptions = descriptions;
    const groupVersions = new Map<string, Gvk>();
    for (const t of registry.all()) {
      schemas.requireMessage(t.messageType);
      this.#addKind(t.messageType, { group: t.group, version: t.version, kind: t.kind });
      if (schemas.message(`${t.messageType}List`) !== undefined) {
        this.#addKind(`${t.messageType}List`, { group: t.group, version: t.version, kind: t.listKind });
      }
      if (t.subresources.includes('token')) {
        this.#addKind(TOKEN_REQUEST_MESSAGE, {
          group: 'authentication.k8s.io',
          version: 'v1',
          kind: 'TokenRequest',
        });
      }
      if (t.subresources.includes('eviction')) {
        this.#addKind(EVICTION_MESSAGE, { group: 'policy', version: 'v1', kind: 'Eviction' });
      }
      if (t.subresources.includes('scale')) {
        this.#addKind(META_TYPES.scale, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
      }
      groupVersions.set(`${t.group}/${t.version}`, { group: t.group, version: t.version, kind: '' });
    }
    this.#addKind(META_TYPES.status, { group: '', version: 'v1', kind: 'Status' });
    this.#addKind(API_RESOURCE_LIST_MESSAGE, { group: '', version: 'v1', kind: 'APIResourceList' });
    this.#addKind(API_GROUP_MESSAGE, { group: '', version: 'v1', kind: 'APIGroup' });
    this.#addKind(API_VERSIONS_MESSAGE, { group: '', version: 'v1', kind: 'APIVersions' });
    this.#addKind(API_GROUP_LIST_MESSAGE, { group: '', version: 'v1', kind: 'APIGroupList' });
    // kube lists DeleteOptions and WatchEvent under every group version it serves.
    for (const gv of [...groupVersions.values()].sort(compareGvk)) {
      this.#addKind(META_TYPES.deleteOptions, { ...gv, kind: 'DeleteOptions' });
      this.#addKind(META_TYPES.watchEvent, { ...gv, kind: 'WatchEvent' });
    }
    // A watch event is not itself an object: Go's WatchEvent has no TypeMeta.
    this.#typeMeta.delete(META_TYPES.watchEvent);
  }

  #addKind(messageType: string, gvk: Gvk): void {
    const list = this.#gvks.get(messageType);
    if (list === undefined) this.#gvks.set(messageType, [gvk]);
    else if (!list.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind))
      list.push(gvk);
    this.#typeMeta.add(messageType);
  }

  /** The GVKs a message is served as (empty for messages that are not kinds). */
  gvksOf(messageType: string): readonly Gvk[] {
    return this.#gvks.get(messageType) ?? [];
  }

  /** The JSON reference to a message's definition in a document of `flavor`. */
  ref(messageType: string, flavor: OpenApiFlavor): string {
    const prefix = flavor === 'v2' ? '#/definitions/' : '#/components/schemas/';
    return prefix + definitionName(messageType);
  }

  /**
   * Every message type whose definition a document holding `roots` needs: the roots and all
   * message types their fields reach (through lists, maps and inline members), except the
   * string-list wrappers, which are inlined. Sorted by definition name, as kube's documents are.
   * @throws SchemaError `UNKNOWN_MESSAGE` for a root or field type missing from the schemas.
   */
  closure(roots: Iterable<string>): string[] {
    const seen = new Set<string>();
    const queue: string[] = [];
    const visit = (type: string): void => {
      if (isScalarType(type) || seen.has(type) || this.#isStringList(type)) return;
      seen.add(type);
      queue.push(type);
    };
    for (const r of roots) visit(r);
    while (queue.length > 0) {
      const type = queue.pop() as string;
      // Special wire types are leaves: their protobuf fields are not their JSON.
      if (specialWireType(type) !== undefined) continue;
      for (const ref of this.#schemas.jsonView(type).values()) visit(ref.field.type);
    }
    return [...seen]
      .map((t) => [definitionName(t), t] as const)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, t]) => t);
  }

  /** The definition of one message for a document of `flavor`. */
  definition(messageType: string, flavor: OpenApiFlavor): JsonObject {
    const description = this.#descriptions.messageDescription(messageType);
    const special = this.#specialDefinition(messageType, flavor);
    if (special !== undefined) return description === undefined ? special : { description, ...special };
    const m = this.#schemas.requireMessage(messageType);
    const properties: JsonObject = {};
    const required: string[] = [];
    if (this.#typeMeta.has(messageType)) {
      for (const name of ['apiVersion', 'kind']) {
        const text = this.#descriptions.fieldDescription(TYPE_META, name);
        properties[name] = text === undefined ? { type: 'string' } : { description: text, type: 'string' };
      }
    }
    for (const [jsonName, ref] of this.#schemas.jsonView(m)) {
      // A property reached through inline members belongs to the innermost inlined message.
      const owner = ref.via.at(-1)?.type ?? messageType;
      const text = this.#descriptions.fieldDescription(owner, jsonName);
      properties[jsonName] = this.#fieldSchema(ref.field, flavor, text);
      if (isRequired(ref)) required.push(jsonName);
    }
    const out: JsonObject = description === undefined ? {} : { description };
    out['type'] = 'object';
    // No `properties` for a message without fields: an empty property list would make
    // kubectl's validation reject every key, while kube means "any object" (meta Patch).
    if (Object.keys(properties).length > 0) out['properties'] = properties;
    if (required.length > 0) out['required'] = required;
    this.#addTypeExtensions(out, m);
    return out;
  }

  #addTypeExtensions(out: JsonObject, m: MessageSchema): void {
    const gvks = this.#gvks.get(m.name);
    if (gvks !== undefined && gvks.length > 0) out['x-kubernetes-group-version-kind'] = gvks.map(gvkJson);
    if (m.structType !== undefined) out['x-kubernetes-map-type'] = m.structType;
  }

  #specialDefinition(messageType: string, flavor: OpenApiFlavor): JsonObject | undefined {
    switch (specialWireType(messageType)) {
      case undefined:
        return undefined;
      case 'time':
      case 'microTime':
        return { type: 'string', format: 'date-time' };
      case 'duration':
        return { type: 'string' };
      case 'intOrString':
        return flavor === 'v2'
          ? { type: 'string', format: 'int-or-string' }
          : { format: 'int-or-string', oneOf: [{ type: 'integer' }, { type: 'string' }] };
      case 'quantity':
        return flavor === 'v2' ? { type: 'string' } : { oneOf: [{ type: 'string' }, { type: 'number' }] };
      case 'rawJSON':
        // RawExtension and FieldsV1 are objects; apiextensions JSON is any JSON value.
        return messageType === APIEXT_JSON ? {} : { type: 'object' };
      case 'stringList':
        return { type: 'array', items: { type: 'string' } };
      case 'schemaOrBool':
      case 'schemaOrArray':
      case 'schemaOrStringArray':
        // Unions of a schema with a boolean or an array: no single type describes them.
        return {};
    }
  }

  /** Go named `[]string` types: protobuf wraps them as `message X { repeated string items = 1; }`. */
  #isStringList(type: string): boolean {
    if (specialWireType(type) === 'stringList') return true;
    const m = this.#schemas.message(type);
    const only = m?.fields.length === 1 ? m.fields[0] : undefined;
    return only !== undefined && only.name === 'items' && only.label === 'repeated' && only.type === 'string';
  }

  #valueSchema(type: string, flavor: OpenApiFlavor): JsonObject {
    if (isScalarType(type)) return { ...SCALAR_SCHEMAS[type] };
    if (this.#isStringList(type)) return { type: 'array', items: { type: 'string' } };
    return { $ref: this.ref(type, flavor) };
  }

  #fieldSchema(f: FieldSchema, flavor: OpenApiFlavor, description: string | undefined): JsonObject {
    const ext: Record<string, Json> = {};
    if (description !== undefined) ext['description'] = description;
    if (f.listType !== undefined) ext['x-kubernetes-list-type'] = f.listType;
    if (f.listMapKeys !== undefined) ext['x-kubernetes-list-map-keys'] = [...f.listMapKeys];
    if (f.mapType !== undefined) ext['x-kubernetes-map-type'] = f.mapType;
    if (f.structType !== undefined) ext['x-kubernetes-map-type'] = f.structType;
    if (f.patchMergeKey !== undefined) ext['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
    if (f.patchStrategy !== undefined) ext['x-kubernetes-patch-strategy'] = f.patchStrategy;
    const value = this.#valueSchema(f.type, flavor);
    if (f.label === 'repeated') return { type: 'array', items: value, ...ext };
    if (f.label === 'map') return { type: 'object', additionalProperties: value, ...ext };
    if (Object.keys(ext).length === 0) return value;
    // OpenAPI 3.0 ignores keywords beside `$ref`; kube wraps the reference in `allOf` there.
    if (flavor === 'v3' && '$ref' in value) return { allOf: [value], ...ext };
    return { ...value, ...ext };
  }
}

/** kube's rule for `required` (see the module comment). */
function isRequired(ref: JsonFieldRef): boolean {
  const f = ref.field;
  return f.required || (!f.omitEmpty && !f.optional);
}
