/**
 * The message schemas of every built-in kind, as generated from `proto/` by
 * `tools/gen-schemas.ts` into `src/registry/generated/schemas.json`, and the lookups the
 * codecs, OpenAPI and patch/apply code need on them.
 *
 * The JSON file is read at runtime (not imported): tsc does not copy it into `dist/`, and
 * letting tsc type a ~1 MB literal would slow every build. {@link loadSchemas} finds it from
 * the package root, so the same code works from `src/` under vitest and from `dist/`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCapstanPackage } from '../package/root.js';

/** Path of the generated schema file, relative to the package root. */
export const SCHEMA_FILE = 'src/registry/generated/schemas.json';

/** Format version written by the generator; bumped on any incompatible change. */
export const SCHEMA_FORMAT = 1;

/** Protobuf scalar type names (as written in `.proto` files). */
export type ScalarType =
  | 'double'
  | 'float'
  | 'int32'
  | 'int64'
  | 'uint32'
  | 'uint64'
  | 'sint32'
  | 'sint64'
  | 'fixed32'
  | 'fixed64'
  | 'sfixed32'
  | 'sfixed64'
  | 'bool'
  | 'string'
  | 'bytes';

const SCALARS: ReadonlySet<string> = new Set<ScalarType>([
  'double',
  'float',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
  'bytes',
]);

/** True when `type` is a protobuf scalar rather than a fully qualified message name. */
export function isScalarType(type: string): type is ScalarType {
  return SCALARS.has(type);
}

/** `map` fields are `map<keyType, type>`; all others hold one or many `type` values. */
export type FieldLabel = 'optional' | 'required' | 'repeated' | 'map';
export type ListType = 'atomic' | 'set' | 'map';
export type MapType = 'atomic' | 'granular';
export type StructType = 'atomic' | 'granular';
/** `replace` (upstream on PodDisruptionBudgetSpec.selector) replaces the whole value. */
export type PatchStrategy = 'merge' | 'retainKeys' | 'merge,retainKeys' | 'replace';

/**
 * One field of a message. Markers absent upstream are absent here (not `undefined`).
 * `inline` fields hold a message whose fields appear flattened in the parent's JSON
 * (Go `json:",inline"`); they keep their own number on the protobuf wire.
 */
export interface FieldSchema {
  /** Protobuf field name. */
  readonly name: string;
  /** JSON property name: the `+capstan:jsonName` marker, else the protobuf name. */
  readonly jsonName: string;
  readonly number: number;
  /** A {@link ScalarType} or a fully qualified message name (no leading dot). */
  readonly type: string;
  readonly label: FieldLabel;
  /** Map key type; present only when `label` is `'map'`. */
  readonly keyType?: ScalarType;
  readonly listType?: ListType;
  /** JSON names of the element fields that identify a list item (`+listMapKey`, in order). */
  readonly listMapKeys?: readonly string[];
  readonly mapType?: MapType;
  readonly structType?: StructType;
  readonly patchMergeKey?: string;
  readonly patchStrategy?: PatchStrategy;
  /** `+optional` upstream. */
  readonly optional: boolean;
  /** `+required` upstream. */
  readonly required: boolean;
  /** `+capstan:inline`: the field's message is flattened into the parent's JSON. */
  readonly inline: boolean;
  /**
   * False when the Go json tag lacks `omitempty` (`+capstan:omitempty=false`): the field is
   * written even when empty. True otherwise, including where upstream was not checked.
   */
  readonly omitEmpty: boolean;
}

/** One message, fields in declaration order (which is also upstream's JSON order). */
export interface MessageSchema {
  /** Fully qualified name, e.g. `k8s.io.api.core.v1.Pod`. */
  readonly name: string;
  readonly fields: readonly FieldSchema[];
  /** Message-level `+structType`. */
  readonly structType?: StructType;
}

/** A JSON property of a message, reached through zero or more inline fields. */
export interface JsonFieldRef {
  /** The field holding the value. */
  readonly field: FieldSchema;
  /** Inline fields from the outer message down to (excluding) `field`; empty when direct. */
  readonly via: readonly FieldSchema[];
}

/**
 * Types whose JSON form is not the plain JSON of their protobuf message; codecs must
 * special-case them:
 * - `time` / `microTime`: RFC 3339 string (seconds / microseconds precision), or null;
 * - `duration`: Go duration string such as `"5m0s"`;
 * - `intOrString`: JSON number or string;
 * - `quantity`: string such as `"500m"`;
 * - `rawJSON`: arbitrary embedded JSON (protobuf carries its bytes);
 * - `stringList`: JSON array of strings (protobuf wraps it in a message, e.g. `Verbs`);
 * - `schemaOrBool` / `schemaOrArray` / `schemaOrStringArray`: apiextensions unions whose JSON is
 *   a schema object or, respectively, a boolean, an array of schemas, an array of strings.
 */
export type SpecialWireType =
  | 'time'
  | 'microTime'
  | 'duration'
  | 'intOrString'
  | 'quantity'
  | 'rawJSON'
  | 'stringList'
  | 'schemaOrBool'
  | 'schemaOrArray'
  | 'schemaOrStringArray';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';
const APIEXT = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.';

const SPECIAL_TYPES: ReadonlyMap<string, SpecialWireType> = new Map<string, SpecialWireType>([
  [`${META}Time`, 'time'],
  [`${META}MicroTime`, 'microTime'],
  [`${META}Duration`, 'duration'],
  [`${META}FieldsV1`, 'rawJSON'],
  [`${META}Verbs`, 'stringList'],
  ['k8s.io.apimachinery.pkg.util.intstr.IntOrString', 'intOrString'],
  ['k8s.io.apimachinery.pkg.api.resource.Quantity', 'quantity'],
  ['k8s.io.apimachinery.pkg.api.resource.QuantityValue', 'quantity'],
  ['k8s.io.apimachinery.pkg.runtime.RawExtension', 'rawJSON'],
  [`${APIEXT}JSON`, 'rawJSON'],
  [`${APIEXT}JSONSchemaPropsOrBool`, 'schemaOrBool'],
  [`${APIEXT}JSONSchemaPropsOrArray`, 'schemaOrArray'],
  [`${APIEXT}JSONSchemaPropsOrStringArray`, 'schemaOrStringArray'],
]);

/**
 * The special JSON treatment of a type, or undefined for scalars and ordinary messages.
 * @example specialWireType('k8s.io.apimachinery.pkg.apis.meta.v1.Time') // 'time'
 */
export function specialWireType(type: string): SpecialWireType | undefined {
  return SPECIAL_TYPES.get(type);
}

/** Every type with a special JSON form, for tests and documentation generators. */
export function specialWireTypes(): ReadonlyMap<string, SpecialWireType> {
  return SPECIAL_TYPES;
}

/** Stable codes of {@link SchemaError}. */
export type SchemaErrorCode = 'SCHEMA_NOT_FOUND' | 'SCHEMA_INVALID' | 'UNKNOWN_MESSAGE';

/** Loading or lookup failure; branch on `code`, never on the message. */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
  readonly code: SchemaErrorCode;
  constructor(code: SchemaErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * The on-disk form written by the generator. Defaults are omitted to keep the file small
 * and quick to parse: `label` (`optional`), `jsonName` (= `name`), `optional`/`required`/
 * `inline` (false), `omitEmpty` (true).
 */
export interface SchemaDocument {
  readonly '//': string;
  readonly format: number;
  readonly messages: Readonly<Record<string, RawMessage>>;
}

/** A message as stored in {@link SchemaDocument}. */
export interface RawMessage {
  readonly fields: readonly RawField[];
  readonly structType?: StructType;
}

/** A field as stored in {@link SchemaDocument}; see there for the omitted defaults. */
export interface RawField {
  readonly name: string;
  readonly number: number;
  readonly type: string;
  readonly label?: Exclude<FieldLabel, 'optional'>;
  readonly keyType?: ScalarType;
  readonly jsonName?: string;
  readonly listType?: ListType;
  readonly listMapKeys?: readonly string[];
  readonly mapType?: MapType;
  readonly structType?: StructType;
  readonly patchMergeKey?: string;
  readonly patchStrategy?: PatchStrategy;
  readonly optional?: true;
  readonly required?: true;
  readonly inline?: true;
  readonly omitEmpty?: false;
}

function normalizeField(raw: RawField): FieldSchema {
  return {
    ...raw,
    jsonName: raw.jsonName ?? raw.name,
    label: raw.label ?? 'optional',
    optional: raw.optional === true,
    required: raw.required === true,
    inline: raw.inline === true,
    omitEmpty: raw.omitEmpty !== false,
  };
}

/**
 * Immutable set of message schemas with lookups. Messages are normalized on first use and
 * JSON views / number indexes are built lazily and cached, so loading is little more than
 * `JSON.parse` (it is on the server start path).
 */
export class SchemaSet {
  readonly #raw: Readonly<Record<string, RawMessage>>;
  readonly #names: readonly string[];
  readonly #messages = new Map<string, MessageSchema>();
  readonly #jsonViews = new Map<string, ReadonlyMap<string, JsonFieldRef>>();
  readonly #byNumber = new Map<string, ReadonlyMap<number, FieldSchema>>();

  private constructor(raw: Readonly<Record<string, RawMessage>>) {
    this.#raw = raw;
    this.#names = Object.keys(raw);
  }

  /**
   * Builds a set from a parsed document. The document must not be mutated afterwards.
   * @throws SchemaError `SCHEMA_INVALID` when the format version or top-level shape is wrong
   *   (field contents are trusted: the drift test keeps the file equal to its generator's output).
   */
  static fromDocument(doc: unknown): SchemaSet {
    if (typeof doc !== 'object' || doc === null) {
      throw new SchemaError('SCHEMA_INVALID', 'schema document is not an object');
    }
    const { format, messages } = doc as Partial<SchemaDocument>;
    if (format !== SCHEMA_FORMAT) {
      throw new SchemaError('SCHEMA_INVALID', `schema format ${String(format)}, expected ${SCHEMA_FORMAT}`);
    }
    if (typeof messages !== 'object' || messages === null) {
      throw new SchemaError('SCHEMA_INVALID', 'schema document has no messages');
    }
    return new SchemaSet(messages);
  }

  /** Number of messages. */
  get size(): number {
    return this.#names.length;
  }

  /** Every message name, in the file's (sorted) order. */
  messageNames(): readonly string[] {
    return this.#names;
  }

  /** The message with this fully qualified name (no leading dot), or undefined. */
  message(name: string): MessageSchema | undefined {
    let m = this.#messages.get(name);
    if (m === undefined) {
      // Own-property check: names like `constructor` must not reach the prototype.
      if (!Object.hasOwn(this.#raw, name)) return undefined;
      const raw = this.#raw[name] as RawMessage;
      const fields = raw.fields.map(normalizeField);
      m = raw.structType === undefined ? { name, fields } : { name, fields, structType: raw.structType };
      this.#messages.set(name, m);
    }
    return m;
  }

  /**
   * Like {@link message} but for names that must exist (a served kind, a field's type).
   * @throws SchemaError `UNKNOWN_MESSAGE`
   */
  requireMessage(name: string): MessageSchema {
    const m = this.message(name);
    if (m === undefined) throw new SchemaError('UNKNOWN_MESSAGE', `unknown message ${name}`);
    return m;
  }

  /**
   * The field holding JSON property `jsonName` of `message`, looking through inline
   * fields (so `Probe` has `exec`, held by its inline `handler`). Undefined when absent.
   * @throws SchemaError `UNKNOWN_MESSAGE` when `message` is a name that does not exist.
   */
  field(message: MessageSchema | string, jsonName: string): FieldSchema | undefined {
    return this.jsonView(message).get(jsonName)?.field;
  }

  /** Like {@link field}, with the chain of inline fields that leads to it. */
  jsonField(message: MessageSchema | string, jsonName: string): JsonFieldRef | undefined {
    return this.jsonView(message).get(jsonName);
  }

  /**
   * The message's JSON properties with inline fields flattened, in upstream JSON order
   * (an inline field's members take its place). The inline fields themselves are absent.
   */
  jsonView(message: MessageSchema | string): ReadonlyMap<string, JsonFieldRef> {
    const m = typeof message === 'string' ? this.requireMessage(message) : message;
    let view = this.#jsonViews.get(m.name);
    if (view === undefined) {
      const built = new Map<string, JsonFieldRef>();
      this.#flatten(m, [], built, new Set());
      view = built;
      this.#jsonViews.set(m.name, view);
    }
    return view;
  }

  /** The field with protobuf number `n`, or undefined (unknown fields are skipped on decode). */
  fieldByNumber(message: MessageSchema | string, n: number): FieldSchema | undefined {
    const m = typeof message === 'string' ? this.requireMessage(message) : message;
    let index = this.#byNumber.get(m.name);
    if (index === undefined) {
      index = new Map(m.fields.map((f) => [f.number, f]));
      this.#byNumber.set(m.name, index);
    }
    return index.get(n);
  }

  /**
   * The message schema of a field's elements (the list item, the map value, or the value
   * itself), or undefined when they are scalars.
   * @throws SchemaError `UNKNOWN_MESSAGE` if the generated file references a missing type.
   */
  elementMessage(field: FieldSchema): MessageSchema | undefined {
    return isScalarType(field.type) ? undefined : this.requireMessage(field.type);
  }

  #flatten(
    m: MessageSchema,
    via: readonly FieldSchema[],
    out: Map<string, JsonFieldRef>,
    seen: Set<string>,
  ): void {
    // `seen` guards against an inline cycle, which would otherwise recurse forever.
    if (seen.has(m.name)) throw new SchemaError('SCHEMA_INVALID', `inline cycle through ${m.name}`);
    seen.add(m.name);
    for (const f of m.fields) {
      if (f.inline) this.#flatten(this.requireMessage(f.type), [...via, f], out, seen);
      else out.set(f.jsonName, { field: f, via });
    }
    seen.delete(m.name);
  }
}

/** True for list fields (`repeated`); maps are not lists. */
export function isList(field: FieldSchema): boolean {
  return field.label === 'repeated';
}

/** True for `map<,>` fields. */
export function isMap(field: FieldSchema): boolean {
  return field.label === 'map';
}

/**
 * The type of one element of a field: the list item type, the map value type, or the
 * field's own type for singular fields (scalar name or message name).
 */
export function elementType(field: FieldSchema): string {
  return field.type;
}

/**
 * The root of Capstan's package at or above the directory `from` ({@link findCapstanPackage}).
 * @throws SchemaError `SCHEMA_NOT_FOUND` when there is none up to the filesystem root.
 */
export function findPackageRoot(from: string): string {
  const found = findCapstanPackage(from);
  if (found === undefined) throw new SchemaError('SCHEMA_NOT_FOUND', `no Capstan package.json above ${from}`);
  return found.root;
}

/** Absolute path of the generated schema file of this package. */
export function defaultSchemaPath(): string {
  return join(findPackageRoot(dirname(fileURLToPath(import.meta.url))), SCHEMA_FILE);
}

/**
 * Reads and indexes the generated schemas (synchronously: it runs once, at server start).
 * @param path defaults to {@link defaultSchemaPath}.
 * @throws SchemaError `SCHEMA_NOT_FOUND` if the file cannot be read, `SCHEMA_INVALID` if it
 *   is not JSON of the expected format.
 */
export function loadSchemas(path: string = defaultSchemaPath()): SchemaSet {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new SchemaError('SCHEMA_NOT_FOUND', `cannot read ${path}`, { cause });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (cause) {
    throw new SchemaError('SCHEMA_INVALID', `${path} is not valid JSON`, { cause });
  }
  return SchemaSet.fromDocument(doc);
}
