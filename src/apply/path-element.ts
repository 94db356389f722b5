/**
 * Path elements: one step from a value to a part of it, as structured-merge-diff names them.
 *
 * | element | selects | FieldsV1 key | rendering |
 * |---|---|---|---|
 * | field | a struct field or map entry | `f:<name>` | `.name` |
 * | key | the list-map item with these key fields | `k:{"containerPort":80,"protocol":"TCP"}` | `[containerPort=80,protocol="TCP"]` |
 * | value | the set item equal to this value | `v:"example.com/finalizer"` | `[="example.com/finalizer"]` |
 * | index | a list item by position (never in built-in schemas) | `i:3` | `[3]` |
 *
 * Each element carries `id`, its exact FieldsV1 key: ids are canonical (key fields sorted by name,
 * values in Go's JSON form), so two elements are equal exactly when their ids are, and sets index
 * members by id. Order ({@link comparePathElements}) is SMD's, which is not the ids' string order.
 */
import { FieldsV1Error } from './errors.js';
import {
  compareStrings,
  compareValues,
  goJson,
  goJsonString,
  isJsonMap,
  valueToString,
  type JsonValue,
} from './value.js';

/** One key field of a list-map item. */
export interface KeyField {
  readonly name: string;
  readonly value: JsonValue;
}

/** Selects a struct field or map entry (`f:name`). */
export interface FieldElement {
  readonly kind: 'field';
  readonly id: string;
  readonly name: string;
}
/** Selects a list-map item by its key fields (`k:{...}`). */
export interface KeyElement {
  readonly kind: 'key';
  readonly id: string;
  /** Sorted by name (SMD sorts key fields; kube writes them in that order). */
  readonly fields: readonly KeyField[];
}
/** Selects a set item by value (`v:...`). */
export interface ValueElement {
  readonly kind: 'value';
  readonly id: string;
  readonly value: JsonValue;
}
/** Selects a list item by position (`i:n`). */
export interface IndexElement {
  readonly kind: 'index';
  readonly id: string;
  readonly index: number;
}

/** A step into a value. Build them with {@link fieldElement} and friends; never by hand. */
export type PathElement = FieldElement | KeyElement | ValueElement | IndexElement;

/** A sequence of elements from the object root; the empty path is the object itself. */
export type Path = readonly PathElement[];

function isKeyFields(
  key: Readonly<Record<string, JsonValue>> | readonly KeyField[],
): key is readonly KeyField[] {
  return Array.isArray(key);
}

/** The element selecting field (or map entry) `name`. */
export function fieldElement(name: string): FieldElement {
  return { kind: 'field', id: `f:${name}`, name };
}

/**
 * The element selecting the list-map item whose key fields have these values.
 * @example keyElement({ containerPort: 80, protocol: 'TCP' }).id // 'k:{"containerPort":80,"protocol":"TCP"}'
 */
export function keyElement(key: Readonly<Record<string, JsonValue>> | readonly KeyField[]): KeyElement {
  const fields: KeyField[] = isKeyFields(key)
    ? [...key]
    : Object.entries(key).map(([name, value]): KeyField => ({ name, value }));
  if (fields.length > 1)
    fields.sort((a, b) => compareStrings(a.name, b.name) || compareValues(a.value, b.value));
  let id = 'k:{';
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as KeyField;
    id += `${i === 0 ? '' : ','}${goJsonString(f.name)}:${goJson(f.value)}`;
  }
  return { kind: 'key', id: `${id}}`, fields };
}

/** The element selecting the set item equal to `value` (a scalar in every built-in schema). */
export function valueElement(value: JsonValue): ValueElement {
  return { kind: 'value', id: `v:${goJson(value)}`, value };
}

/** The element selecting list position `index`. */
export function indexElement(index: number): IndexElement {
  return { kind: 'index', id: `i:${index}`, index };
}

const KIND_ORDER = { field: 0, key: 1, value: 2, index: 3 } as const;

function compareKeys(a: readonly KeyField[], b: readonly KeyField[]): number {
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < a.length; i++) {
    const fa = a[i] as KeyField;
    const fb = b[i] as KeyField;
    const c = compareStrings(fa.name, fb.name) || compareValues(fa.value, fb.value);
    if (c !== 0) return c;
  }
  return 0;
}

/**
 * SMD's order of elements: fields < keys < values < indexes; fields by name (code points), keys
 * by number of key fields then field by field, values by {@link compareValues}, indexes
 * numerically. FieldsV1 objects list their entries in this order.
 */
export function comparePathElements(a: PathElement, b: PathElement): number {
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] < KIND_ORDER[b.kind] ? -1 : 1;
  switch (a.kind) {
    case 'field':
      return compareStrings(a.name, (b as FieldElement).name);
    case 'key':
      return compareKeys(a.fields, (b as KeyElement).fields);
    case 'value':
      return compareValues(a.value, (b as ValueElement).value);
    case 'index': {
      const j = (b as IndexElement).index;
      return a.index === j ? 0 : a.index < j ? -1 : 1;
    }
  }
}

/** kube's rendering of one element, as in conflict messages (`.name`, `[name="c"]`, `[="v"]`, `[3]`). */
export function pathElementToString(pe: PathElement): string {
  switch (pe.kind) {
    case 'field':
      return `.${pe.name}`;
    case 'key':
      return `[${pe.fields.map((f) => `${f.name}=${valueToString(f.value)}`).join(',')}]`;
    case 'value':
      return `[=${valueToString(pe.value)}]`;
    case 'index':
      return `[${pe.index}]`;
  }
}

/**
 * kube's rendering of a path, as conflict messages and `details.causes[].field` show it.
 * @example pathToString([fieldElement('spec'), fieldElement('replicas')]) // '.spec.replicas'
 */
export function pathToString(path: Path): string {
  let out = '';
  for (const pe of path) out += pathElementToString(pe);
  return out;
}

function parseJson(text: string, key: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new FieldsV1Error(`invalid path element ${JSON.stringify(key)}`, { cause });
  }
}

/**
 * Parses a FieldsV1 key into an element; undefined for a key of an unknown type (SMD skips
 * those: a later version may know them). Key fields are re-sorted and values re-encoded, so the
 * element's id is canonical even when the input was written differently.
 * @throws FieldsV1Error for a malformed key (shorter than two characters, no colon, bad JSON,
 *   a `k:` that is not a JSON object, an `i:` that is not an integer).
 */
export function parsePathElement(key: string): PathElement | undefined {
  if (key.length < 2)
    throw new FieldsV1Error(`path element ${JSON.stringify(key)} must be 2 characters long`);
  if (key[1] !== ':') throw new FieldsV1Error(`missing colon: ${key}`);
  const body = key.slice(2);
  switch (key[0]) {
    case 'f':
      return fieldElement(body);
    case 'v':
      return valueElement(parseJson(body, key) as JsonValue);
    case 'k': {
      const parsed = parseJson(body, key);
      if (!isJsonMap(parsed))
        throw new FieldsV1Error(`key path element ${JSON.stringify(key)} is not a JSON object`);
      return keyElement(parsed);
    }
    case 'i': {
      // Go's strconv.Atoi: optional sign, decimal digits, within int range.
      if (!/^[+-]?\d+$/.test(body))
        throw new FieldsV1Error(`index path element ${JSON.stringify(key)} is not an integer`);
      const n = Number(body);
      if (!Number.isSafeInteger(n))
        throw new FieldsV1Error(`index path element ${JSON.stringify(key)} is out of range`);
      return indexElement(n);
    }
    default:
      return undefined;
  }
}
