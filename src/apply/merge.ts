/**
 * Merging an applied configuration into a live object (SMD's `Merge` with "the configuration
 * wins"), and pruning what the applier stopped applying.
 *
 * Merge: leaves and atomic values of the configuration replace the live ones; structs and
 * granular maps merge key by key; list-maps merge item by item by key, sets are unioned. Order:
 * live items keep their order, configuration items keep theirs, and items present in both are
 * placed where the configuration puts them relative to each other. A `null` in the
 * configuration unsets a field, and an empty list or map in an `omitempty` field is dropped
 * (the stored JSON is what Go's decoding and encoding would leave).
 *
 * Prune: a field the applier applied last time and not this time is removed when no manager
 * owns it now; removing a struct or item removes what nobody owns inside it.
 */
import { FieldSet } from './fieldpath.js';
import { Duplicates, indexList, type ListItem } from './list-items.js';
import type { ListType, StructType, TypeNode } from './schema-types.js';
import { childType, ensureNamedFieldsAreMembers, fieldSetOf, removeItems } from './typed.js';
import { setOwn } from '../api/object.js';
import { cloneJson, isJsonMap, type JsonMap, type JsonValue } from './value.js';

const ANY: TypeNode = { kind: 'leaf', scalar: false };

function isEmptyOrNull(v: JsonValue | undefined): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isJsonMap(v) && Object.keys(v).length === 0;
}

function leaf(l: JsonValue | undefined, r: JsonValue | undefined): JsonValue | undefined {
  return cloneJson(r !== undefined ? r : l);
}

function observed(entry: JsonValue | Duplicates | undefined): JsonValue | undefined {
  // A duplicated live key merges as if absent: the configuration's item replaces all of them.
  return entry instanceof Duplicates ? undefined : entry;
}

function mergeList(l: JsonValue[], r: JsonValue[], t: ListType): JsonValue[] {
  const lhs = indexList(l, t, 'live', []);
  const rhs = indexList(r, t, 'live', []);
  const out: JsonValue[] = [];
  const push = (v: JsonValue | undefined): void => {
    if (v !== undefined) out.push(v);
  };
  // Items in both lists, in the configuration's order: each is placed when its turn comes.
  const shared = rhs.items.filter((it) => lhs.byId.has(it.pe.id)).map((it) => it.pe.id);
  let nextShared = 0;
  const emitted = new Set<string>();
  const mergeItem = (id: string): void => {
    emitted.add(id);
    push(mergeValue(observed(lhs.byId.get(id)), observed(rhs.byId.get(id)), t.element));
    if (shared[nextShared] === id) nextShared++;
  };
  let li = 0;
  let ri = 0;
  while (li < lhs.items.length || ri < rhs.items.length) {
    const lItem: ListItem | undefined = lhs.items[li];
    const rItem: ListItem | undefined = rhs.items[ri];
    if (lItem !== undefined && rItem !== undefined) {
      if (lItem.pe.id === rItem.pe.id && !emitted.has(lItem.pe.id)) {
        mergeItem(lItem.pe.id);
        li++;
        ri++;
        continue;
      }
      const want = shared[nextShared];
      if (rhs.byId.has(lItem.pe.id) && want !== undefined && want !== lItem.pe.id) {
        // Shared, but another shared item comes first in the configuration: place it later.
        li++;
        continue;
      }
    }
    if (lItem !== undefined) {
      if (!rhs.byId.has(lItem.pe.id)) {
        // Only live has it: keep it where it is (each duplicate individually).
        push(mergeValue(lItem.value, undefined, t.element));
        li++;
        continue;
      }
      if (emitted.has(lItem.pe.id)) {
        li++;
        continue;
      }
    }
    if (rItem !== undefined) {
      ri++;
      if (!emitted.has(rItem.pe.id)) mergeItem(rItem.pe.id);
    }
  }
  return out;
}

function mergeMap(
  l: JsonMap | undefined,
  r: JsonMap | undefined,
  t: StructType | Extract<TypeNode, { kind: 'map' }>,
): JsonMap {
  const out: JsonMap = {};
  const put = (key: string, lv: JsonValue | undefined, rv: JsonValue | undefined): void => {
    const ct = childType(t, key) ?? ANY;
    const v = mergeValue(lv, rv, ct);
    if (v === undefined || v === null) return;
    // Go drops an empty `omitempty` list or map when it stores the object: do the same, so
    // that `data: {}` and no data are one state, as in kube.
    if (
      t.kind === 'struct' &&
      (ct.kind === 'list' || ct.kind === 'map') &&
      isEmptyOrNull(v) &&
      t.omitsEmpty(key)
    )
      return;
    setOwn(out, key, v);
  };
  if (l !== undefined) {
    for (const key of Object.keys(l))
      put(key, l[key], r !== undefined && Object.hasOwn(r, key) ? r[key] : undefined);
  }
  if (r !== undefined) {
    for (const key of Object.keys(r))
      if (l === undefined || !Object.hasOwn(l, key)) put(key, undefined, r[key]);
  }
  return out;
}

/** The merge of one value; undefined when both sides are absent. The result shares nothing with the inputs. */
function mergeValue(l: JsonValue | undefined, r: JsonValue | undefined, t: TypeNode): JsonValue | undefined {
  if (t.kind === 'leaf') return leaf(l, r);
  if (t.kind === 'list') {
    const ok = (v: JsonValue | undefined): boolean => v === undefined || v === null || Array.isArray(v);
    if (t.relationship === 'atomic' || !ok(l) || !ok(r) || (isEmptyOrNull(l) && isEmptyOrNull(r)))
      return leaf(l, r);
    return mergeList(Array.isArray(l) ? l : [], Array.isArray(r) ? r : [], t);
  }
  const ok = (v: JsonValue | undefined): boolean => v === undefined || v === null || isJsonMap(v);
  if (t.atomic || !ok(l) || !ok(r) || (isEmptyOrNull(l) && isEmptyOrNull(r))) return leaf(l, r);
  // A struct emptied by nulls stays `{}`, as Go keeps a non-nil struct (`emptyDir: {sizeLimit: null}`).
  return mergeMap(isJsonMap(l) ? l : undefined, isJsonMap(r) ? r : undefined, t);
}

/**
 * `config` merged into `live` (either may be absent). Lists and maps are merged per the schema;
 * the configuration's leaves win. Does not validate: run {@link fieldSetOf} on the
 * configuration in `config` mode first. The result is a fresh value.
 */
export function merge(
  live: JsonValue | undefined,
  config: JsonValue | undefined,
  t: TypeNode,
): JsonValue | undefined {
  return mergeValue(live, config, t);
}

/**
 * Removes from `merged` the fields in `previous` (what the applier applied last time) that
 * nobody in `owned` (every manager's fields after this apply, the applier's new ones included)
 * owns, and what nobody owns inside them. This is SMD's three-step prune: remove all previously
 * applied fields, add back what someone owns, then add back what the applier never owned.
 */
export function prune(merged: JsonMap, previous: FieldSet, owned: FieldSet, t: TypeNode): JsonMap {
  if (previous.isEmpty()) return merged;
  const named = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(s, t);
  const fieldsOf = (v: JsonValue | undefined): FieldSet => fieldSetOf(v, t, 'live', true);
  const last = named(previous);
  const mergedSet = fieldsOf(merged);
  const firstCut = removeItems(merged, last, t);
  const ownedBack = removeItems(merged, mergedSet.difference(fieldsOf(firstCut).union(named(owned))), t);
  const dangling = mergedSet.difference(fieldsOf(ownedBack)).intersection(last);
  return (removeItems(merged, dangling, t) as JsonMap | undefined) ?? {};
}

/** What {@link apply} may remove: the applier's previous fields and everyone else's. */
export interface Removal {
  /** The fields this manager applied last time. */
  readonly previous: FieldSet;
  /** The fields every other manager owns now. */
  readonly others: FieldSet;
}

/**
 * Merges an applied configuration into a live object and, given `removal`, drops what the
 * applier stopped applying and nobody else owns. Ownership bookkeeping (conflicts, entries) is
 * {@link applyOperation}'s; this is the object side only.
 * @throws TypedValueError when `config` does not fit the schema.
 * @example apply(live, { spec: { replicas: 3 } }, types.forKind('k8s.io.api.apps.v1.Deployment'))
 */
export function apply(live: JsonMap | undefined, config: JsonMap, t: TypeNode, removal?: Removal): JsonMap {
  const configSet = fieldSetOf(config, t, 'config');
  const merged = (merge(live, config, t) as JsonMap | undefined) ?? {};
  if (removal === undefined) return merged;
  return prune(merged, removal.previous, removal.others.union(configSet), t);
}
