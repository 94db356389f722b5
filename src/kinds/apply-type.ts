/**
 * The server-side apply type of a custom resource: `apiVersion` and `kind` scalars, `metadata`
 * typed as ObjectMeta, and the rest from the version's structural schema. A field the schema
 * neither declares nor preserves makes apply fail (`.foo: field not declared in schema`), as in
 * kube. Where the schema leaves a field open (no schema, or `x-kubernetes-preserve-unknown-fields`), the type is
 * deduced from the values at hand as kube's deduced type converter does: objects merge field by
 * field, lists and scalars are atomic.
 */
import { fieldElement, type StructType, type TypeNode } from '../apply/index.js';
import type { FieldElement } from '../apply/path-element.js';
import { SchemaStruct } from '../schema/index.js';

const SCALAR: TypeNode = Object.freeze({ kind: 'leaf', scalar: true });
const ANY: TypeNode = Object.freeze({ kind: 'leaf', scalar: false });
const ATOMIC_LIST: TypeNode = Object.freeze({
  kind: 'list',
  relationship: 'atomic',
  keys: [],
  keyDefaults: new Map(),
  element: ANY,
});

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The deduced type of the values found at one place of the objects. */
function deduce(values: readonly unknown[]): TypeNode {
  const present = values.filter((v) => v !== undefined && v !== null);
  if (present.length > 0 && present.every(isPlainObject)) return new DeducedStruct(present);
  if (present.length > 0 && present.every(Array.isArray)) return ATOMIC_LIST;
  return ANY;
}

/** A granular struct whose fields are deduced from sample values. */
class DeducedStruct implements StructType {
  readonly kind = 'struct';
  readonly name: string = 'deduced';
  readonly atomic = false;
  readonly #samples: readonly Record<string, unknown>[];
  readonly #fields = new Map<string, TypeNode>();

  constructor(samples: readonly Record<string, unknown>[]) {
    this.#samples = samples;
  }

  field(name: string): TypeNode | undefined {
    let t = this.#fields.get(name);
    if (t === undefined) {
      t = deduce(this.#samples.map((s) => (Object.hasOwn(s, name) ? s[name] : undefined)));
      this.#fields.set(name, t);
    }
    return t;
  }

  omitsEmpty(): boolean {
    return false;
  }

  element(name: string): FieldElement {
    return fieldElement(name);
  }
}

/** The root type of a custom resource (see the module comment). */
class CustomRoot implements StructType {
  readonly kind = 'struct';
  readonly atomic = false;
  readonly #meta: TypeNode;
  readonly #schema: TypeNode;
  readonly #deduced: DeducedStruct;
  readonly #elements = new Map<string, FieldElement>();

  constructor(
    readonly name: string,
    meta: TypeNode,
    schema: TypeNode,
    values: readonly unknown[],
  ) {
    this.#meta = meta;
    this.#schema = schema;
    this.#deduced = new DeducedStruct(values.filter(isPlainObject));
  }

  field(name: string): TypeNode | undefined {
    if (name === 'apiVersion' || name === 'kind') return SCALAR;
    if (name === 'metadata') return this.#meta;
    const schema = this.#schema;
    if (schema instanceof SchemaStruct) {
      // A field the root neither declares nor preserves is kube's `field not declared in schema`.
      if (schema.declares(name)) return schema.field(name);
      return schema.preservesUnknownFields ? this.#deduced.field(name) : undefined;
    }
    if (schema.kind === 'struct') return schema.field(name) ?? this.#deduced.field(name);
    return this.#deduced.field(name);
  }

  omitsEmpty(name: string): boolean {
    return this.#schema.kind === 'struct' && this.#schema.field(name) !== undefined
      ? this.#schema.omitsEmpty(name)
      : false;
  }

  element(name: string): FieldElement {
    let pe = this.#elements.get(name);
    if (pe === undefined) {
      pe = fieldElement(name);
      if (name === 'apiVersion' || name === 'kind' || name === 'metadata') this.#elements.set(name, pe);
    }
    return pe;
  }
}

/**
 * The apply type of a custom resource `kind`: `schema` is the version's compiled apply type,
 * `meta` ObjectMeta's, `values` the objects of the operation.
 */
export function customApplyType(
  kind: string,
  meta: TypeNode,
  schema: TypeNode,
  values: readonly unknown[],
): StructType {
  return new CustomRoot(kind, meta, schema, values);
}
