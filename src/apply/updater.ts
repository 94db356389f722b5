/**
 * Ownership bookkeeping of one operation (SMD's `merge.Updater`), over a map of managers to the
 * fields they own. Managers are opaque keys here (managed-fields.ts makes them from entries).
 *
 * - Update (a write that is not an apply): every field the write changes moves to the writer,
 *   taken from whoever owned it, without conflict; removed fields leave every owner.
 * - Apply: the applier owns exactly the fields of its configuration; fields it applied before
 *   and dropped are removed from the object when nobody owns them; changing a field another
 *   manager owns is a conflict unless forced, and forcing takes the field from that manager.
 *   Applying a value equal to the live one changes nothing, so it is no conflict: the field
 *   becomes shared.
 *
 * Field paths are the same in every version of a kind here (Capstan serves one schema per
 * kind), so entries recorded against another apiVersion are compared as they are.
 */
import type { FieldSet } from './fieldpath.js';
import { merge, prune } from './merge.js';
import type { TypeNode } from './schema-types.js';
import { compare, fieldSetOf, type Comparison } from './typed.js';
import { jsonEqual, type JsonMap } from './value.js';

/** The fields one manager owns, the version it used, and whether it owns them by applying. */
export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/** Manager key → owned fields. Operations return new maps; inputs are not modified. */
export type ManagerSets = ReadonlyMap<string, VersionedSet>;

/** An apply's conflicts: manager key → the fields of theirs it would change. */
export class Conflicts extends Error {
  override readonly name = 'Conflicts';
  constructor(readonly byManager: ReadonlyMap<string, FieldSet>) {
    super('apply conflicts with other managers');
  }
}

function filtered(c: Comparison, ignored: FieldSet | undefined): Comparison {
  if (ignored === undefined) return c;
  return {
    added: c.added.recursiveDifference(ignored),
    modified: c.modified.recursiveDifference(ignored),
    removed: c.removed.recursiveDifference(ignored),
  };
}

/**
 * Takes the fields `oldObject` → `newObject` changes away from every manager but `workflow`:
 * fields they own that are modified or added are conflicts (thrown unless `force`; else taken),
 * removed fields are dropped from them. Managers left with nothing are deleted.
 * @throws Conflicts when not forced and another manager owns a changed field.
 */
function update(
  oldObject: JsonMap,
  newObject: JsonMap,
  managers: Map<string, VersionedSet>,
  workflow: string,
  force: boolean,
  t: TypeNode,
  ignored: FieldSet | undefined,
): Comparison {
  const comparison = compare(oldObject, newObject, t);
  const c = filtered(comparison, ignored);
  const changed = c.modified.union(c.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [manager, vs] of managers) {
    if (manager === workflow) continue;
    const taken = vs.set.intersection(changed);
    if (!taken.isEmpty()) conflicts.set(manager, taken);
  }
  if (!force && conflicts.size > 0) throw new Conflicts(conflicts);
  for (const [manager, vs] of managers) {
    if (manager === workflow) continue;
    let set = vs.set;
    const taken = conflicts.get(manager);
    if (taken !== undefined) set = set.difference(taken);
    if (!c.removed.isEmpty()) set = set.difference(c.removed);
    if (set !== vs.set) managers.set(manager, { ...vs, set });
  }
  for (const [manager, vs] of managers) if (vs.set.isEmpty()) managers.delete(manager);
  return comparison;
}

/** Options common to both operations. */
export interface UpdaterOptions {
  /** The kind's type (ObjectTypes.forKind). */
  readonly type: TypeNode;
  /** The apiVersion of the request (recorded on the writer's fields). */
  readonly apiVersion: string;
  /** Fields nobody can own through this endpoint (kube's reset fields: `status` on the main resource). */
  readonly ignored?: FieldSet;
}

/**
 * Ownership after a non-apply write by `manager`: it gains every field the write modified or
 * added (kept with what it owned before, minus removed fields); others lose those fields.
 * Never conflicts.
 */
export function updateManagers(
  oldObject: JsonMap,
  newObject: JsonMap,
  managers: ManagerSets,
  manager: string,
  options: UpdaterOptions,
): Map<string, VersionedSet> {
  const out = new Map(managers);
  const c = update(oldObject, newObject, out, manager, true, options.type, options.ignored);
  const previous = out.get(manager)?.set;
  let set = c.modified.union(c.added);
  if (previous !== undefined) set = previous.difference(c.removed).union(set);
  if (options.ignored !== undefined) set = set.recursiveDifference(options.ignored);
  if (set.isEmpty()) out.delete(manager);
  else out.set(manager, { set, apiVersion: options.apiVersion, applied: false });
  return out;
}

/** The outcome of an apply. */
export interface ApplyOutcome {
  /** The merged and pruned object, or undefined when it equals the live one (nothing to write). */
  readonly object: JsonMap | undefined;
  readonly managers: Map<string, VersionedSet>;
}

/**
 * Merges `config` into `live` for `manager`, prunes what it stopped applying, and moves
 * ownership. `live` and `config` must not carry `metadata.managedFields`.
 * @throws TypedValueError when `config` does not fit the schema.
 * @throws Conflicts when not forced and the apply changes fields other managers own.
 */
export function applyManagers(
  live: JsonMap,
  config: JsonMap,
  managers: ManagerSets,
  manager: string,
  force: boolean,
  options: UpdaterOptions,
): ApplyOutcome {
  const t = options.type;
  let set = fieldSetOf(config, t, 'config');
  if (options.ignored !== undefined) set = set.recursiveDifference(options.ignored);
  const out = new Map(managers);
  const previous = out.get(manager)?.set;
  out.set(manager, { set, apiVersion: options.apiVersion, applied: true });
  let object = (merge(live, config, t) as JsonMap | undefined) ?? {};
  // Nothing to prune when the applier still applies everything it applied before (the common
  // re-apply): every previously applied field, and every item or struct above one, is owned now.
  if (previous !== undefined && !previous.difference(set).isEmpty()) {
    let owned = set;
    for (const vs of out.values()) owned = owned.union(vs.set);
    object = prune(object, previous, owned, t);
  }
  update(live, object, out, manager, force, t, options.ignored);
  return { object: jsonEqual(live, object) ? undefined : object, managers: out };
}
