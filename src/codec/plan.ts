/**
 * Encoding/decoding plans: each message of the schema set compiled once into the flat form the
 * hot loops want (field kind as a small integer, precomputed keys, fields by number, Go facts
 * resolved). Plans are built on first use of a type and cached per codec; a message reachable
 * from it is compiled in the same pass (cycles, as in JSONSchemaProps, are fine: plans are
 * registered before their fields are filled).
 */
import type { FieldSchema, MessageSchema, SchemaSet } from '../registry/schema.js';
import { isScalarType, specialWireType } from '../registry/schema.js';
import { CodecError } from './errors.js';
import { goFieldFacts } from './go-facts.js';
import { tagOf, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from './wire.js';

// Field kinds. Plain numbers (not a const enum) so the switch statements stay monomorphic.
export const K_STRING = 0;
export const K_BOOL = 1;
export const K_INT32 = 2;
export const K_INT64 = 3;
export const K_DOUBLE = 4;
export const K_BYTES = 5;
export const K_MESSAGE = 6;
export const K_TIME = 7;
export const K_MICROTIME = 8;
export const K_DURATION = 9;
export const K_INT_OR_STRING = 10;
export const K_QUANTITY = 11;
export const K_RAW_JSON = 12;
export const K_STRING_LIST = 13;
export const K_SCHEMA_OR_BOOL = 14;
export const K_SCHEMA_OR_ARRAY = 15;
export const K_SCHEMA_OR_STRING_ARRAY = 16;

export const L_SINGLE = 0;
export const L_REPEATED = 1;
export const L_MAP = 2;

/** One field, compiled. */
export interface FieldPlan {
  readonly name: string;
  readonly jsonName: string;
  readonly number: number;
  /** Kind of one value (the list item, the map value, or the field itself). */
  readonly kind: number;
  readonly label: number;
  /** The key written before each value (map: before each entry). */
  readonly key: number;
  /** Wire type of one value as written. */
  readonly wireType: number;
  /** Go pointer (or nil-able slice): written only when the JSON value is present and not null. */
  readonly pointer: boolean;
  readonly omitEmpty: boolean;
  readonly inline: boolean;
  /** False when the Go types behind `go-facts.ts` lack the field (it is newer): facts are guessed. */
  readonly goKnown: boolean;
  /** Slot of the value while decoding (the field's index in {@link MessagePlan.jsonOrder}). */
  readonly slot: number;
  /** The message plan of values of kind K_MESSAGE, or of the schema inside the union kinds. */
  message: MessagePlan | undefined;
}

/** One message, compiled. */
export interface MessagePlan {
  readonly name: string;
  /** Fields by ascending number: Go's generated Marshal writes them in this order. */
  readonly encodeOrder: readonly FieldPlan[];
  /** Fields in declaration order, which is Go's struct order and so its JSON order. */
  readonly jsonOrder: readonly FieldPlan[];
  /** Field by protobuf number (sparse). */
  readonly byNumber: readonly (FieldPlan | undefined)[];
}

/** Protobuf "messages" that are Go `[]string` wrappers with a bare JSON array (ExtraValue). */
function isStringListWrapper(schemas: SchemaSet, type: string): boolean {
  if (!type.endsWith('.ExtraValue')) return false;
  const m = schemas.message(type);
  const only = m?.fields[0];
  return m !== undefined && m.fields.length === 1 && only?.label === 'repeated' && only.type === 'string';
}

function kindOf(schemas: SchemaSet, type: string): number {
  switch (type) {
    case 'string':
      return K_STRING;
    case 'bool':
      return K_BOOL;
    case 'int32':
    case 'sint32':
      return K_INT32;
    case 'int64':
    case 'uint32':
    case 'uint64':
      return K_INT64;
    case 'double':
      return K_DOUBLE;
    case 'bytes':
      return K_BYTES;
    default:
  }
  if (isScalarType(type)) throw new CodecError('PROTOBUF_UNKNOWN_TYPE', `unsupported scalar type ${type}`);
  switch (specialWireType(type)) {
    case 'time':
      return K_TIME;
    case 'microTime':
      return K_MICROTIME;
    case 'duration':
      return K_DURATION;
    case 'intOrString':
      return K_INT_OR_STRING;
    case 'quantity':
      return K_QUANTITY;
    case 'rawJSON':
      return K_RAW_JSON;
    case 'stringList':
      return K_STRING_LIST;
    case 'schemaOrBool':
      return K_SCHEMA_OR_BOOL;
    case 'schemaOrArray':
      return K_SCHEMA_OR_ARRAY;
    case 'schemaOrStringArray':
      return K_SCHEMA_OR_STRING_ARRAY;
    case undefined:
      return isStringListWrapper(schemas, type) ? K_STRING_LIST : K_MESSAGE;
  }
}

function wireTypeOf(kind: number): number {
  if (kind === K_DOUBLE) return WIRE_FIXED64;
  return kind === K_BOOL || kind === K_INT32 || kind === K_INT64 ? WIRE_VARINT : WIRE_LEN;
}

/** Compiles and caches plans over one schema set. */
export class Planner {
  readonly #schemas: SchemaSet;
  readonly #plans = new Map<string, MessagePlan>();

  constructor(schemas: SchemaSet) {
    this.#schemas = schemas;
  }

  /**
   * The plan of message `name`.
   * @throws CodecError `PROTOBUF_UNKNOWN_TYPE` when the schema set has no such message.
   */
  plan(name: string): MessagePlan {
    const cached = this.#plans.get(name);
    if (cached !== undefined) return cached;
    const schema = this.#schemas.message(name);
    if (schema === undefined) throw new CodecError('PROTOBUF_UNKNOWN_TYPE', `no protobuf message ${name}`);
    return this.#compile(schema);
  }

  #compile(schema: MessageSchema): MessagePlan {
    const jsonOrder: FieldPlan[] = [];
    const byNumber: (FieldPlan | undefined)[] = [];
    const plan: MessagePlan = {
      name: schema.name,
      jsonOrder,
      encodeOrder: [],
      byNumber,
    };
    this.#plans.set(schema.name, plan);
    schema.fields.forEach((f, slot) => {
      const fp = this.#field(schema.name, f, slot);
      jsonOrder.push(fp);
      byNumber[f.number] = fp;
    });
    (plan.encodeOrder as FieldPlan[]).push(...[...jsonOrder].sort((a, b) => a.number - b.number));
    for (const fp of jsonOrder) {
      const target = this.#targetMessage(schema.fields[fp.slot] as FieldSchema, fp.kind);
      if (target !== undefined) fp.message = this.plan(target);
    }
    return plan;
  }

  #field(message: string, f: FieldSchema, slot: number): FieldPlan {
    const kind = kindOf(this.#schemas, f.type);
    const label = f.label === 'repeated' ? L_REPEATED : f.label === 'map' ? L_MAP : L_SINGLE;
    const facts = goFieldFacts(message, f);
    const wireType = wireTypeOf(kind);
    return {
      name: f.name,
      jsonName: f.jsonName,
      number: f.number,
      kind,
      label,
      key: tagOf(f.number, label === L_MAP ? WIRE_LEN : wireType),
      wireType,
      // Byte slices and string-list wrappers are nil-able in Go whatever the table says: they are
      // written when non-nil, i.e. when JSON has them.
      pointer: f.inline ? false : facts.pointer || kind === K_BYTES || kind === K_STRING_LIST,
      omitEmpty: facts.omitEmpty,
      inline: f.inline,
      goKnown: facts.known,
      slot,
      message: undefined,
    };
  }

  /** The message a field's values are decoded with: its own type, or the schema inside a union. */
  #targetMessage(f: FieldSchema, kind: number): string | undefined {
    if (kind === K_MESSAGE) return f.type;
    if (kind === K_SCHEMA_OR_BOOL || kind === K_SCHEMA_OR_ARRAY || kind === K_SCHEMA_OR_STRING_ARRAY) {
      const union = this.#schemas.requireMessage(f.type);
      const schemaField = union.fields.find((u) => u.name === 'schema');
      if (schemaField === undefined)
        throw new CodecError('PROTOBUF_UNKNOWN_TYPE', `${f.type} has no schema field`);
      return schemaField.type;
    }
    return undefined;
  }
}
