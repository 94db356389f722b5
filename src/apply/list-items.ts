/**
 * How list items are identified: a list-map item by its key fields (with key defaults), a set
 * item by its value. Shared by the walkers that own, compare, merge and remove values.
 *
 * Two modes, because kube treats the two sides differently: an applied configuration (`config`)
 * must be well formed — a malformed item or a duplicate key is an error — while stored objects
 * (`live`) are taken as they are: duplicate keys are allowed (kube permits e.g. two env vars of
 * one name; such items are owned and replaced as a unit), and an item without a usable key is
 * identified by its position so that it is kept, never merged.
 */
import { TypedValueError } from './errors.js';
import {
  indexElement,
  keyElement,
  pathToString,
  valueElement,
  type KeyField,
  type Path,
  type PathElement,
} from './path-element.js';
import type { ListType } from './schema-types.js';
import { isJsonMap, type JsonValue } from './value.js';

/** `config`: reject what does not fit the schema; `live`: accept stored data as it is. */
export type WalkMode = 'config' | 'live';

/** The element of one list item, or a TypedValueError message when it has none. */
function itemElement(item: JsonValue, t: ListType): PathElement | string {
  if (t.relationship === 'map') {
    if (item === null) return 'associative list with keys may not have a null element';
    if (!isJsonMap(item)) return 'associative list with keys may not have non-map elements';
    const fields: KeyField[] = [];
    for (const name of t.keys) {
      const value = Object.hasOwn(item, name) ? item[name] : t.keyDefaults.get(name);
      if (value === undefined) {
        return `associative list with keys has an element that omits key field ${JSON.stringify(name)} (and doesn't have default value)`;
      }
      fields.push({ name, value });
    }
    return keyElement(fields);
  }
  if (item === null) return "associative list without keys has an element that's an explicit null";
  if (Array.isArray(item)) return 'not supported: associative list with lists as elements';
  if (typeof item === 'object') return "associative list without keys has an element that's a map type";
  return valueElement(item);
}

/** One item of a granular list with its element. */
export interface ListItem {
  readonly pe: PathElement;
  readonly value: JsonValue;
}

/** The items of a granular list, in order, and by element id. */
export interface IndexedList {
  readonly items: readonly ListItem[];
  /** Element id → the item, or all items sharing the id (length ≥ 2) when it is duplicated. */
  readonly byId: ReadonlyMap<string, JsonValue | Duplicates>;
}

/** Items sharing one key in a live object. */
export class Duplicates {
  constructor(readonly values: JsonValue[]) {}
}

/**
 * Identifies every item of a granular (set or map) list.
 * @throws TypedValueError in `config` mode for a malformed item or a duplicate.
 */
export function indexList(list: readonly JsonValue[], t: ListType, mode: WalkMode, path: Path): IndexedList {
  const items: ListItem[] = [];
  const byId = new Map<string, JsonValue | Duplicates>();
  for (let i = 0; i < list.length; i++) {
    const value = list[i] as JsonValue;
    let pe = itemElement(value, t);
    if (typeof pe === 'string') {
      if (mode === 'config') throw new TypedValueError(pathToString(path), `element ${i}: ${pe}`);
      pe = indexElement(i);
    }
    const seen = byId.get(pe.id);
    if (!byId.has(pe.id)) {
      byId.set(pe.id, value);
    } else if (mode === 'config') {
      throw new TypedValueError(pathToString(path), `duplicate entries for key ${pathToString([pe])}`);
    } else if (seen instanceof Duplicates) {
      seen.values.push(value);
    } else {
      byId.set(pe.id, new Duplicates([seen as JsonValue, value]));
    }
    items.push({ pe, value });
  }
  return { items, byId };
}

/** The items of one id as a list (one item, or all duplicates), for whole-unit comparison. */
export function itemsOf(entry: JsonValue | Duplicates): JsonValue[] {
  return entry instanceof Duplicates ? entry.values : [entry];
}
