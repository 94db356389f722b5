/**
 * `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`: the
 * uniqueness kube enforces on sets and list-maps (`Duplicate value` errors) and the type
 * server-side apply merges custom resources with.
 */
import { jsonEqual, setOwn } from '../api/object.js';
import type { ListType, MapType, StructType, TypeNode } from '../apply/index.js';
import type { JsonValue } from '../apply/value.js';
import { fieldElement, type FieldElement } from '../apply/path-element.js';
import { required, type FieldError } from '../validation/field-error.js';
import { duplicateValue, invalidValue } from './messages.js';
import { isJsonMap, type SchemaNode } from './node.js';
import { childPath, itemPath } from './values.js';
import { OBJECT_META_FIELDS } from './pruning.js';

/** Appends kube's set and list-map uniqueness errors for `value` (recursively). */
export function validateListTypes(node: SchemaNode, value: unknown, path: string, errs: FieldError[]): void {
  if (Array.isArray(value)) {
    if (node.listType === 'set') {
      value.forEach((v, i) => {
        if (value.slice(0, i).some((w) => jsonEqual(v, w))) errs.push(duplicateValue(itemPath(path, i), v));
      });
    } else if (node.listType === 'map') {
      validateListMap(node, value, path, errs);
    }
    if (node.items !== undefined) {
      const items = node.items;
      value.forEach((v, i) => validateListTypes(items, v, itemPath(path, i), errs));
    }
  } else if (isJsonMap(value)) {
    for (const [k, v] of Object.entries(value)) {
      const p =
        node.properties.get(k) ??
        (node.additionalProperties === true ? undefined : node.additionalProperties);
      if (p !== undefined) validateListTypes(p, v, childPath(path, k), errs);
    }
  }
}

function validateListMap(node: SchemaNode, list: unknown[], path: string, errs: FieldError[]): void {
  const seen: Record<string, unknown>[] = [];
  list.forEach((item, i) => {
    const p = itemPath(path, i);
    if (!isJsonMap(item)) {
      errs.push(invalidValue(p, item, 'must be an object for an array of list-type map'));
      return;
    }
    const key: Record<string, unknown> = {};
    let complete = true;
    for (const k of node.listMapKeys) {
      if (Object.hasOwn(item, k)) setOwn(key, k, item[k]);
      else {
        const d = node.items?.properties.get(k);
        if (d?.hasDefault === true) setOwn(key, k, d.default);
        else {
          errs.push(required(childPath(p, k)));
          complete = false;
        }
      }
    }
    if (!complete) return;
    if (seen.some((s) => jsonEqual(s, key))) errs.push(duplicateValue(p, key));
    else seen.push(key);
  });
}

const SCALAR: TypeNode = Object.freeze({ kind: 'leaf', scalar: true });
const ANY: TypeNode = Object.freeze({ kind: 'leaf', scalar: false });
const DEDUCED: MapType = Object.freeze({ kind: 'map', atomic: false, element: ANY });

/**
 * A struct of a schema: its declared fields, and (`x-kubernetes-preserve-unknown-fields`)
 * whether it keeps others, which apply then owns atomically. Apply rejects a field a struct
 * neither declares nor preserves (`.spec.foo: field not declared in schema`).
 */
export class SchemaStruct implements StructType {
  readonly kind = 'struct';
  readonly #fields: ReadonlyMap<string, TypeNode>;
  readonly #elements = new Map<string, FieldElement>();

  constructor(
    readonly name: string,
    readonly atomic: boolean,
    fields: ReadonlyMap<string, TypeNode>,
    readonly preservesUnknownFields = false,
  ) {
    this.#fields = fields;
  }

  /** True when the schema declares field `name`. */
  declares(name: string): boolean {
    return this.#fields.has(name);
  }

  field(name: string): TypeNode | undefined {
    return this.#fields.get(name) ?? (this.preservesUnknownFields ? ANY : undefined);
  }

  omitsEmpty(): boolean {
    return false;
  }

  element(name: string): FieldElement {
    let pe = this.#elements.get(name);
    if (pe === undefined) {
      pe = fieldElement(name);
      if (this.#fields.has(name)) this.#elements.set(name, pe);
    }
    return pe;
  }
}

function objectMetaType(): StructType {
  const fields = new Map<string, TypeNode>();
  for (const f of OBJECT_META_FIELDS) fields.set(f, SCALAR);
  const stringMap: MapType = { kind: 'map', atomic: false, element: SCALAR };
  fields.set('labels', stringMap);
  fields.set('annotations', stringMap);
  const set: ListType = {
    kind: 'list',
    relationship: 'set',
    keys: [],
    keyDefaults: new Map(),
    element: SCALAR,
  };
  fields.set('finalizers', set);
  const owner: ListType = {
    kind: 'list',
    relationship: 'map',
    keys: ['uid'],
    keyDefaults: new Map(),
    element: new SchemaStruct('ObjectMeta.ownerReferences', false, new Map()),
  };
  fields.set('ownerReferences', owner);
  fields.set('managedFields', ANY);
  return new SchemaStruct('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta', false, fields);
}

/**
 * The apply type of a schema node; `resourceRoot` declares apiVersion, kind and metadata.
 * `preserveAll` (the root of a schema-less version or of a CRD with `spec.preserveUnknownFields`)
 * keeps fields the root does not declare.
 */
export function applyTypeOf(
  node: SchemaNode | undefined,
  resourceRoot: boolean,
  name = 'root',
  preserveAll = false,
): TypeNode {
  if (node === undefined)
    return resourceRoot ? new SchemaStruct(name, false, rootFields(new Map()), true) : ANY;
  if (node.intOrString) return SCALAR;
  const type = node.type;
  if (type === 'array') {
    const element = applyTypeOf(node.items, node.items?.embeddedResource === true, `${name}[]`);
    const keyDefaults = new Map<string, JsonValue>();
    for (const k of node.listMapKeys) {
      const d = node.items?.properties.get(k);
      if (d?.hasDefault === true) keyDefaults.set(k, d.default as JsonValue);
    }
    return {
      kind: 'list',
      relationship: node.listType ?? 'atomic',
      keys: node.listType === 'map' ? node.listMapKeys : [],
      keyDefaults,
      element,
    };
  }
  if (type === 'object' || resourceRoot || node.properties.size > 0) {
    const atomic = node.mapType === 'atomic';
    if (node.properties.size === 0 && !resourceRoot) {
      if (node.additionalProperties !== undefined && node.additionalProperties !== true)
        return { kind: 'map', atomic, element: applyTypeOf(node.additionalProperties, false, `${name}{}`) };
      return atomic ? ANY : DEDUCED;
    }
    const fields = new Map<string, TypeNode>();
    for (const [k, p] of node.properties) fields.set(k, applyTypeOf(p, p.embeddedResource, `${name}.${k}`));
    return new SchemaStruct(
      name,
      atomic,
      resourceRoot || node.embeddedResource ? rootFields(fields) : fields,
      preserveAll || node.preserveUnknownFields,
    );
  }
  if (type === '') return node.preserveUnknownFields ? DEDUCED : ANY;
  return SCALAR;
}

function rootFields(fields: Map<string, TypeNode>): Map<string, TypeNode> {
  fields.set('apiVersion', SCALAR);
  fields.set('kind', SCALAR);
  fields.set('metadata', objectMetaType());
  return fields;
}
