/**
 * The schema model as server-side apply needs it: every value is a leaf, a struct, a map or a
 * list, each either granular (merged and owned part by part) or atomic (replaced and owned whole).
 * Built lazily from the generated message schemas (src/registry/schema.ts), following the rules
 * kube's OpenAPI-to-SMD conversion applies to the same markers:
 *
 * - lists: `listType` atomic | set | map (`listMapKeys`); without `listType`, `patchStrategy`
 *   merge with a `patchMergeKey` makes a list-map keyed by the merge key, merge without one a
 *   set, anything else an atomic list;
 * - maps: granular unless `mapType: atomic`;
 * - structs: granular unless `structType: atomic` on the field or else on the message;
 * - inline fields are flattened into their parent (their members are the parent's fields);
 * - special wire types (Time, Quantity, IntOrString, RawExtension, ...) and Go named `[]string`
 *   wrappers are atomic leaves;
 * - a kind's root also declares `apiVersion` and `kind` (Go's TypeMeta, not a protobuf field).
 *
 * List-map key fields may have defaults (`+default=`), which SMD uses when an item omits the key;
 * the schema file does not carry defaults, so {@link KEY_DEFAULTS} lists the ones upstream has.
 */
import { isScalarType, specialWireType, type FieldSchema, type SchemaSet } from '../registry/schema.js';
import { fieldElement, type FieldElement } from './path-element.js';
import type { JsonValue } from './value.js';

/** A value owned and replaced as a whole: scalars, special wire types, untyped JSON. */
export interface LeafType {
  readonly kind: 'leaf';
  /** True for protobuf scalars and scalar-like wire types: an object or array there is a shape error. */
  readonly scalar: boolean;
  /** What Go's JSON decoder takes here (undefined: anything, or not known). */
  readonly decodes?: LeafDecoding;
}

/**
 * The JSON values Go's decoder takes for a scalar (null always too), and the Go type it names
 * when it refuses one.
 */
export interface LeafDecoding {
  readonly accepts:
    | 'string'
    | 'base64'
    | 'integer'
    | 'number'
    | 'boolean'
    | 'intOrString'
    | 'quantity'
    | 'time'
    | 'microTime';
  /** Go's name of the type, as `json: cannot unmarshal ... of type X` prints it. */
  readonly goType: string;
  /** The range of an integer type. */
  readonly min?: number;
  readonly max?: number;
}

/** A message. Atomic structs are owned as a whole; granular ones field by field. */
export interface StructType {
  readonly kind: 'struct';
  /** Fully qualified message name (for messages and errors). */
  readonly name: string;
  readonly atomic: boolean;
  /** The type of JSON property `name`, or undefined when the message does not declare it. */
  field(name: string): TypeNode | undefined;
  /**
   * True when property `name` is dropped from Go's JSON when empty (`omitempty`, the default):
   * an empty list or map there is the same as an absent one.
   */
  omitsEmpty(name: string): boolean;
  /** The path element of property `name`, shared across walks (walks allocate one per key otherwise). */
  element(name: string): FieldElement;
}

/** A `map<string, V>` field. */
export interface MapType {
  readonly kind: 'map';
  readonly atomic: boolean;
  readonly element: TypeNode;
}

/** A repeated field. */
export interface ListType {
  readonly kind: 'list';
  readonly relationship: 'atomic' | 'set' | 'map';
  /** Key fields of a list-map, in declaration order; empty otherwise. */
  readonly keys: readonly string[];
  /** Defaults of key fields an item may omit. */
  readonly keyDefaults: ReadonlyMap<string, JsonValue>;
  readonly element: TypeNode;
}

/** Any value's type. */
export type TypeNode = LeafType | StructType | MapType | ListType;

/**
 * Upstream `+default=` markers on list-map key fields (k8s.io/api core/v1 types.go): an item
 * without the field is keyed as if it had the default, so `ports: [{containerPort: 80}]` owns
 * `k:{"containerPort":80,"protocol":"TCP"}`.
 */
export const KEY_DEFAULTS: ReadonlyMap<string, ReadonlyMap<string, JsonValue>> = new Map([
  ['k8s.io.api.core.v1.ContainerPort', new Map<string, JsonValue>([['protocol', 'TCP']])],
  ['k8s.io.api.core.v1.ServicePort', new Map<string, JsonValue>([['protocol', 'TCP']])],
]);

const SCALAR_LEAF: LeafType = Object.freeze({ kind: 'leaf', scalar: true });

function scalarLeaf(decodes: LeafDecoding): LeafType {
  return Object.freeze({ kind: 'leaf', scalar: true, decodes: Object.freeze(decodes) });
}

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };
const UINT32 = { min: 0, max: 2 ** 32 - 1 };
const INT64 = { min: -(2 ** 63), max: 2 ** 63 };
const UINT64 = { min: 0, max: 2 ** 64 };

/** Leaves by protobuf scalar or special wire type, with the Go types kube's structs use. */
const DECODED_LEAVES: ReadonlyMap<string, LeafType> = new Map([
  ['string', scalarLeaf({ accepts: 'string', goType: 'string' })],
  // Go []byte takes base64 text.
  ['bytes', scalarLeaf({ accepts: 'base64', goType: '[]uint8' })],
  ['bool', scalarLeaf({ accepts: 'boolean', goType: 'bool' })],
  ['double', scalarLeaf({ accepts: 'number', goType: 'float64' })],
  ['float', scalarLeaf({ accepts: 'number', goType: 'float32' })],
  ['int32', scalarLeaf({ accepts: 'integer', goType: 'int32', ...INT32 })],
  ['sint32', scalarLeaf({ accepts: 'integer', goType: 'int32', ...INT32 })],
  ['sfixed32', scalarLeaf({ accepts: 'integer', goType: 'int32', ...INT32 })],
  ['uint32', scalarLeaf({ accepts: 'integer', goType: 'uint32', ...UINT32 })],
  ['fixed32', scalarLeaf({ accepts: 'integer', goType: 'uint32', ...UINT32 })],
  ['int64', scalarLeaf({ accepts: 'integer', goType: 'int64', ...INT64 })],
  ['sint64', scalarLeaf({ accepts: 'integer', goType: 'int64', ...INT64 })],
  ['sfixed64', scalarLeaf({ accepts: 'integer', goType: 'int64', ...INT64 })],
  ['uint64', scalarLeaf({ accepts: 'integer', goType: 'uint64', ...UINT64 })],
  ['fixed64', scalarLeaf({ accepts: 'integer', goType: 'uint64', ...UINT64 })],
  // Time, MicroTime and Duration decode their JSON into a Go string first; the times then
  // parse it with Go's time layouts.
  ['time', scalarLeaf({ accepts: 'time', goType: 'string' })],
  ['microTime', scalarLeaf({ accepts: 'microTime', goType: 'string' })],
  ['duration', scalarLeaf({ accepts: 'string', goType: 'string' })],
  // IntOrString: a JSON string, else an int32.
  ['intOrString', scalarLeaf({ accepts: 'intOrString', goType: 'int32', ...INT32 })],
  ['quantity', scalarLeaf({ accepts: 'quantity', goType: 'resource.Quantity' })],
]);
const ANY_LEAF: LeafType = Object.freeze({ kind: 'leaf', scalar: false });
const NO_DEFAULTS: ReadonlyMap<string, JsonValue> = new Map();

/**
 * Kinds that kube's Go types hold as field values with their TypeMeta (`apiVersion`, `kind`):
 * a StatefulSet's `volumeClaimTemplates`, which kube also serves with both set, and an
 * Eviction's `deleteOptions`. Protobuf has no TypeMeta, so the schema cannot tell.
 */
const NESTED_WITH_TYPE_META: ReadonlySet<string> = new Set([
  'k8s.io.api.core.v1.PersistentVolumeClaim',
  'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions',
]);

class MessageStruct implements StructType {
  readonly kind = 'struct';
  readonly #types: ObjectTypes;
  readonly #fields = new Map<string, TypeNode | null>();
  readonly #elements = new Map<string, FieldElement>();
  readonly #typeMeta: boolean;

  constructor(
    types: ObjectTypes,
    readonly name: string,
    readonly atomic: boolean,
    typeMeta: boolean,
  ) {
    this.#types = types;
    this.#typeMeta = typeMeta;
  }

  field(name: string): TypeNode | undefined {
    let t = this.#fields.get(name);
    if (t === undefined) {
      t = this.#types.resolveField(this.name, name, this.#typeMeta) ?? null;
      this.#fields.set(name, t);
    }
    return t ?? undefined;
  }

  omitsEmpty(name: string): boolean {
    return this.#types.omitsEmpty(this.name, name);
  }

  element(name: string): FieldElement {
    let pe = this.#elements.get(name);
    if (pe === undefined) {
      pe = fieldElement(name);
      // Only declared fields are cached: undeclared keys come from data and are unbounded.
      if (this.field(name) !== undefined) this.#elements.set(name, pe);
    }
    return pe;
  }
}

/**
 * Apply's view of a {@link SchemaSet}: built once at server start, compiled lazily and cached
 * (a recursive message such as JSONSchemaProps resolves field by field as values reach it).
 * Owned by whoever creates it; nothing is global.
 */
export class ObjectTypes {
  readonly #schemas: SchemaSet;
  readonly #structs = new Map<string, MessageStruct>();

  constructor(schemas: SchemaSet) {
    this.#schemas = schemas;
  }

  /**
   * The type of an object of kind message `messageName` (`k8s.io.api.apps.v1.Deployment`),
   * with `apiVersion` and `kind` declared at its root.
   * @throws SchemaError `UNKNOWN_MESSAGE` for a name the schema set does not have.
   */
  forKind(messageName: string): StructType {
    return this.#struct(messageName, undefined, true);
  }

  /** The type of a message value (no TypeMeta), e.g. for tests of one part of an object. */
  forMessage(messageName: string): StructType {
    return this.#struct(messageName, undefined, false);
  }

  #struct(name: string, fieldStructType: FieldSchema['structType'], typeMeta: boolean): MessageStruct {
    const message = this.#schemas.requireMessage(name);
    const atomic = (fieldStructType ?? message.structType) === 'atomic';
    const cacheKey = `${name}|${atomic ? 'a' : 'g'}|${typeMeta ? 't' : ''}`;
    let s = this.#structs.get(cacheKey);
    if (s === undefined) {
      s = new MessageStruct(this, name, atomic, typeMeta);
      this.#structs.set(cacheKey, s);
    }
    return s;
  }

  /** @internal The type of JSON property `jsonName` of message `messageName`. */
  resolveField(messageName: string, jsonName: string, typeMeta: boolean): TypeNode | undefined {
    const ref = this.#schemas.jsonField(messageName, jsonName);
    if (ref === undefined) {
      return typeMeta && (jsonName === 'apiVersion' || jsonName === 'kind') ? SCALAR_LEAF : undefined;
    }
    return this.#fieldType(ref.field);
  }

  /** @internal Whether JSON property `jsonName` of `messageName` has Go's `omitempty`. */
  omitsEmpty(messageName: string, jsonName: string): boolean {
    return this.#schemas.field(messageName, jsonName)?.omitEmpty ?? true;
  }

  #fieldType(field: FieldSchema): TypeNode {
    if (field.label === 'map') {
      return {
        kind: 'map',
        atomic: field.mapType === 'atomic',
        element: this.#valueType(field.type, undefined),
      };
    }
    if (field.label === 'repeated') {
      const element = this.#valueType(field.type, undefined);
      let relationship: ListType['relationship'] = 'atomic';
      let keys: readonly string[] = [];
      if (field.listType !== undefined) {
        relationship = field.listType;
        if (relationship === 'map') keys = field.listMapKeys ?? [];
      } else if (field.patchStrategy === 'merge' || field.patchStrategy === 'merge,retainKeys') {
        // SMD's deduction for lists marked only for strategic merge patch.
        relationship = field.patchMergeKey === undefined ? 'set' : 'map';
        if (field.patchMergeKey !== undefined) keys = [field.patchMergeKey];
      }
      const keyDefaults =
        relationship === 'map' ? (KEY_DEFAULTS.get(field.type) ?? NO_DEFAULTS) : NO_DEFAULTS;
      return { kind: 'list', relationship, keys, keyDefaults, element };
    }
    return this.#valueType(field.type, field.structType);
  }

  #valueType(type: string, structType: FieldSchema['structType']): TypeNode {
    if (isScalarType(type)) return DECODED_LEAVES.get(type) ?? SCALAR_LEAF;
    const special = specialWireType(type);
    switch (special) {
      case undefined:
        break;
      case 'time':
      case 'microTime':
      case 'duration':
      case 'intOrString':
      case 'quantity':
        return DECODED_LEAVES.get(special) ?? SCALAR_LEAF;
      default:
        return ANY_LEAF;
    }
    if (this.#isStringList(type)) return ANY_LEAF;
    return this.#struct(type, structType, NESTED_WITH_TYPE_META.has(type));
  }

  /** Go named `[]string` types, which protobuf wraps as `message X { repeated string items = 1; }`. */
  #isStringList(type: string): boolean {
    const m = this.#schemas.message(type);
    const only = m?.fields.length === 1 ? m.fields[0] : undefined;
    return only !== undefined && only.name === 'items' && only.label === 'repeated' && only.type === 'string';
  }
}
