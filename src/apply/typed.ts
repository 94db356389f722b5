/**
 * Walks of a JSON value together with its schema type (SMD's `typed` package): the set of
 * fields a value sets, the difference of two values, and the removal of a set of fields.
 *
 * "The fields a value sets" ({@link fieldSetOf}) are its leaves — scalars, atomic lists, maps
 * and structs as a whole, entries of granular maps — plus every item of a granular list (a
 * list-map item `k:{...}` is owned as an item *and* field by field; a set item `v:...` is a
 * leaf). Struct fields holding granular values are not members themselves: owning
 * `.spec.replicas` does not own `.spec`. Empty granular values set nothing.
 */
import { TypedValueError } from './errors.js';
import {
  FieldSet,
  FieldSetBuilder,
  fieldElement,
  pathToString,
  type FieldElement,
  type PathElement,
} from './fieldpath.js';
import { Duplicates, indexList, itemsOf, type WalkMode } from './list-items.js';
import type { LeafType, ListType, TypeNode } from './schema-types.js';
import { goSharpV, goTypeOf, goV } from '../api/go-format.js';
import { setOwn } from '../api/object.js';
import { isJsonMap, jsonEqual, type JsonMap, type JsonValue } from './value.js';

const ANY: TypeNode = { kind: 'leaf', scalar: false };

/** The path element of key `key` of a struct or map value (shared for declared struct fields). */
export function keyPathElement(t: TypeNode, key: string): FieldElement {
  return t.kind === 'struct' ? t.element(key) : fieldElement(key);
}

/** The type of key `key` of a struct or map value; undefined for an undeclared struct field. */
export function childType(t: TypeNode, key: string): TypeNode | undefined {
  if (t.kind === 'struct') return t.field(key);
  if (t.kind === 'map') return t.element;
  return undefined;
}

function shapeError(path: PathElement[], expected: string, v: JsonValue): TypedValueError {
  const got = v === null ? 'null' : Array.isArray(v) ? 'list' : typeof v === 'object' ? 'map' : typeof v;
  return new TypedValueError(pathToString(path), `expected ${expected}, got ${got}`);
}

/**
 * SMD's error for a value its scalar type refuses (strings, numbers and booleans; the others
 * take any scalar), in its words; undefined when the value fits.
 */
function scalarProblem(v: JsonValue, t: LeafType): string | undefined {
  switch (t.decodes?.accepts) {
    case 'string':
    case 'base64':
    case 'time':
    case 'microTime':
      return typeof v === 'string'
        ? undefined
        : `expected string, got &value.valueUnstructured{Value:${goSharpV(v)}}`;
    case 'integer':
    case 'number':
      return typeof v === 'number' ? undefined : `expected numeric (int or float), got ${goTypeOf(v)}`;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : `expected boolean, got &{${goV(v)}}`;
    default:
      return undefined;
  }
}

function walkSet(
  v: JsonValue | undefined,
  t: TypeNode,
  path: PathElement[],
  b: FieldSetBuilder,
  mode: WalkMode,
  named: boolean,
): void {
  if (v === undefined) return;
  switch (t.kind) {
    case 'leaf':
      if (mode === 'config' && v !== null) {
        const problem = scalarProblem(v, t);
        if (problem !== undefined) throw new TypedValueError(pathToString(path), problem);
        if (t.scalar && typeof v === 'object') throw shapeError(path, 'scalar', v);
      }
      b.insert(path);
      return;
    case 'struct':
    case 'map': {
      if (t.atomic) {
        if (mode === 'config' && v !== null && !isJsonMap(v)) throw shapeError(path, 'map', v);
        b.insert(path);
        return;
      }
      if (v === null) return;
      if (!isJsonMap(v)) {
        if (mode === 'config') throw shapeError(path, 'map', v);
        b.insert(path);
        return;
      }
      for (const key of Object.keys(v)) {
        let ct = childType(t, key);
        path.push(keyPathElement(t, key));
        if (ct === undefined) {
          if (mode === 'config')
            throw new TypedValueError(pathToString(path), 'field not declared in schema');
          ct = ANY;
        }
        const before = b.inserts;
        walkSet(v[key], ct, path, b, mode, named);
        // Map entries are owned as entries (SMD inserts every key a struct does not declare);
        // struct fields only when asked to close the set over named fields.
        if (t.kind === 'map' || (named && b.inserts > before)) b.insert(path);
        path.pop();
      }
      return;
    }
    case 'list': {
      if (t.relationship === 'atomic') {
        if (mode === 'config' && v !== null && !Array.isArray(v)) throw shapeError(path, 'list', v);
        b.insert(path);
        return;
      }
      if (v === null) return;
      if (!Array.isArray(v)) {
        if (mode === 'config') throw shapeError(path, 'list', v);
        b.insert(path);
        return;
      }
      const indexed = indexList(v, t, mode, path);
      for (const { pe, value } of indexed.items) {
        path.push(pe);
        // Duplicated items are owned as a unit: the item, not its fields.
        if (!(indexed.byId.get(pe.id) instanceof Duplicates)) walkSet(value, t.element, path, b, mode, named);
        b.insert(path);
        path.pop();
      }
      return;
    }
  }
}

/**
 * The fields `value` sets. In `config` mode (an applied configuration) a value that does not
 * fit the schema throws; in `live` mode it is owned as a leaf. With `withNamedFields`, struct
 * fields with members below them are members too: the same as
 * {@link ensureNamedFieldsAreMembers} of the result, in one walk (pruning needs it).
 * @throws TypedValueError in `config` mode: undeclared field, wrong shape, bad or duplicate list item.
 */
export function fieldSetOf(
  value: JsonValue | undefined,
  t: TypeNode,
  mode: WalkMode,
  withNamedFields = false,
): FieldSet {
  const b = new FieldSetBuilder();
  walkSet(value, t, [], b, mode, withNamedFields);
  return b.build();
}

/** Fields of a new value relative to an old one. */
export interface Comparison {
  /** Present only in the new value. */
  readonly added: FieldSet;
  /** Leaves present in both with different values. */
  readonly modified: FieldSet;
  /** Present only in the old value. */
  readonly removed: FieldSet;
}

interface DiffOut {
  readonly added: FieldSetBuilder;
  readonly modified: FieldSetBuilder;
  readonly removed: FieldSetBuilder;
}

function isEmptyOrNull(v: JsonValue | undefined): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isJsonMap(v) && Object.keys(v).length === 0;
}

function leafDiff(
  l: JsonValue | undefined,
  r: JsonValue | undefined,
  path: PathElement[],
  out: DiffOut,
): void {
  if (l === undefined) out.added.insert(path);
  else if (r === undefined) out.removed.insert(path);
  else if (!jsonEqual(l, r)) out.modified.insert(path);
}

/** Inserts every field of `value` below `path` (not `path` itself) into `b`. */
function insertBelow(value: JsonValue, t: TypeNode, path: PathElement[], b: FieldSetBuilder): void {
  for (const p of fieldSetOf(value, t, 'live').paths()) b.insert([...path, ...p]);
}

function diffList(
  l: JsonValue[] | undefined,
  r: JsonValue[] | undefined,
  t: ListType,
  path: PathElement[],
  out: DiffOut,
): void {
  const li = indexList(l ?? [], t, 'live', path);
  const ri = indexList(r ?? [], t, 'live', path);
  const visit = (pe: PathElement): void => {
    const le = li.byId.get(pe.id);
    const re = ri.byId.get(pe.id);
    path.push(pe);
    if (!(le instanceof Duplicates) && !(re instanceof Duplicates)) {
      diffValue(le, re, t.element, path, out);
    } else if (le === undefined || re === undefined) {
      // A duplicated key is one atomic item.
      leafDiff(le === undefined ? undefined : null, re === undefined ? undefined : null, path, out);
    } else if (!jsonEqual(itemsOf(le), itemsOf(re))) {
      out.modified.insert(path);
      if (!(le instanceof Duplicates)) insertBelow(le, t.element, path, out.removed);
      if (!(re instanceof Duplicates)) insertBelow(re, t.element, path, out.added);
    }
    path.pop();
  };
  const seen = new Set<string>();
  for (const { pe } of [...li.items, ...ri.items]) {
    if (seen.has(pe.id)) continue;
    seen.add(pe.id);
    visit(pe);
  }
}

function diffValue(
  l: JsonValue | undefined,
  r: JsonValue | undefined,
  t: TypeNode,
  path: PathElement[],
  out: DiffOut,
): void {
  if (t.kind === 'leaf') return leafDiff(l, r, path, out);
  if (t.kind === 'list') {
    const shapeOk = (v: JsonValue | undefined): boolean => v === undefined || v === null || Array.isArray(v);
    if (t.relationship === 'atomic' || !shapeOk(l) || !shapeOk(r) || (isEmptyOrNull(l) && isEmptyOrNull(r))) {
      return leafDiff(l, r, path, out);
    }
    diffList(Array.isArray(l) ? l : undefined, Array.isArray(r) ? r : undefined, t, path, out);
  } else {
    const shapeOk = (v: JsonValue | undefined): boolean => v === undefined || v === null || isJsonMap(v);
    if (t.atomic || !shapeOk(l) || !shapeOk(r) || (isEmptyOrNull(l) && isEmptyOrNull(r))) {
      return leafDiff(l, r, path, out);
    }
    const lm = isJsonMap(l) ? l : undefined;
    const rm = isJsonMap(r) ? r : undefined;
    const step = (key: string): void => {
      path.push(keyPathElement(t, key));
      const lv = lm !== undefined && Object.hasOwn(lm, key) ? lm[key] : undefined;
      const rv = rm !== undefined && Object.hasOwn(rm, key) ? rm[key] : undefined;
      diffValue(lv, rv, childType(t, key) ?? ANY, path, out);
      path.pop();
    };
    if (lm !== undefined) for (const key of Object.keys(lm)) step(key);
    if (rm !== undefined)
      for (const key of Object.keys(rm)) if (lm === undefined || !Object.hasOwn(lm, key)) step(key);
  }
  // A granular container that appears or disappears is itself added or removed.
  if (l === undefined) out.added.insert(path);
  else if (r === undefined) out.removed.insert(path);
}

/**
 * What changed from `oldValue` to `newValue` (SMD's `Compare`). Leaves that differ are
 * modified; granular containers are only ever added or removed (an absent one, not a null one).
 * Both values are read as stored objects (`live` mode): this never throws for shape errors.
 */
export function compare(
  oldValue: JsonValue | undefined,
  newValue: JsonValue | undefined,
  t: TypeNode,
): Comparison {
  const out: DiffOut = {
    added: new FieldSetBuilder(),
    modified: new FieldSetBuilder(),
    removed: new FieldSetBuilder(),
  };
  if (oldValue !== undefined || newValue !== undefined) diffValue(oldValue, newValue, t, [], out);
  return { added: out.added.build(), modified: out.modified.build(), removed: out.removed.build() };
}

/**
 * `value` without the fields of `toRemove` (SMD's `RemoveItems`): a member path removes the
 * field, map entry or list item with everything below it. A value emptied by removal comes
 * back as undefined and its key is dropped from the parent (SMD leaves a null there, which Go
 * decodes as unset); untouched values are kept as they are (shared, not copied).
 */
export function removeItems(value: JsonValue, toRemove: FieldSet, t: TypeNode): JsonValue | undefined {
  if (toRemove.isEmpty()) return value;
  if (t.kind === 'leaf') return value;
  if (t.kind === 'list') {
    if (t.relationship === 'atomic' || !Array.isArray(value) || value.length === 0) return value;
    const out: JsonValue[] = [];
    for (const { pe, value: item } of indexList(value, t, 'live', []).items) {
      if (toRemove.hasMember(pe)) continue;
      if (!toRemove.hasChildren(pe)) {
        out.push(item);
        continue;
      }
      const kept = removeItems(item, toRemove.withPrefix(pe), t.element);
      if (kept !== undefined) out.push(kept);
    }
    return out.length === 0 ? undefined : out;
  }
  if (t.atomic || !isJsonMap(value) || Object.keys(value).length === 0) return value;
  const out: JsonMap = {};
  let kept = 0;
  for (const [key, v] of Object.entries(value)) {
    const pe = keyPathElement(t, key);
    if (toRemove.hasMember(pe)) continue;
    const next = toRemove.hasChildren(pe)
      ? removeItems(v, toRemove.withPrefix(pe), childType(t, key) ?? ANY)
      : v;
    if (next !== undefined) {
      setOwn(out, key, next);
      kept++;
    }
  }
  return kept === 0 ? undefined : out;
}

function collectNamed(set: FieldSet, t: TypeNode | undefined, path: PathElement[], b: FieldSetBuilder): void {
  for (const [pe, below] of set.entries()) {
    if (below === undefined) continue;
    let ct: TypeNode | undefined;
    if (pe.kind === 'field' && t?.kind === 'struct') {
      ct = t.field(pe.name);
      if (ct !== undefined) b.insert([...path, pe]);
    } else if (pe.kind === 'field' && t?.kind === 'map') ct = t.element;
    else if (pe.kind === 'key' && t?.kind === 'list') ct = t.element;
    path.push(pe);
    collectNamed(below, ct, path, b);
    path.pop();
  }
}

/**
 * `set` plus every struct field that has members below it (SMD's `EnsureNamedFieldsAreMembers`):
 * a set owning `.spec.strategy.type` also owns `.spec` and `.spec.strategy`, but not map entries
 * or list items on the way. Pruning uses it so that removing a struct removes what nobody owns in it.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, t: TypeNode): FieldSet {
  const b = new FieldSetBuilder();
  collectNamed(set, t, [], b);
  return set.union(b.build());
}
