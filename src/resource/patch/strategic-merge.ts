/**
 * Strategic merge patch, kube's patch format for built-in kinds: a JSON merge patch whose lists
 * merge according to the API schema (`patchStrategy: merge` lists of objects merge by their
 * `patchMergeKey`, lists of primitives merge as sets, other lists are replaced) plus directives:
 *
 * - `$patch: replace` in a map replaces the whole map; `{"$patch": "replace"}` as a list item
 *   replaces the whole list with the other items;
 * - `$patch: delete` in a map deletes it; as a list item with a merge key, deletes that item;
 * - `$deleteFromPrimitiveList/<field>: [...]` removes those values from a primitive list;
 * - `$setElementOrder/<field>: [...]` orders the merged list (merge-key values or primitives);
 * - a merged list comes out in kube's order: the patch's items in the patch's order, interleaved
 *   with the items only the server had (see {@link kubeOrder});
 * - `$retainKeys: [...]` drops every key of the original map not listed.
 *
 * The original is never modified. Malformed patches are {@link StrategicMergePatchError}s.
 */
import { cloneJson, isJsonObject, jsonEqual, ownMember, setOwn, type JsonObject } from '../../api/object.js';
import type { PatchFieldInfo, PatchSchema } from './schema.js';

/** The patch is not a valid strategic merge patch for the object. */
export class StrategicMergePatchError extends Error {
  readonly code = 'STRATEGIC_MERGE_PATCH';
}

const PATCH = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM = '$deleteFromPrimitiveList/';
const SET_ORDER = '$setElementOrder/';

/**
 * Where we are in the schema: a message (its fields are the keys), a map field (every key's value
 * is of `values`), or unknown (lists replace, maps merge).
 */
type Scope = { readonly message: string } | { readonly values: string | undefined } | undefined;

function fieldInfo(schema: PatchSchema | undefined, scope: Scope, key: string): PatchFieldInfo | undefined {
  if (scope === undefined || schema === undefined) return undefined;
  if ('values' in scope) return scope.values === undefined ? undefined : { type: scope.values };
  return schema.field(scope.message, key);
}

/** The scope inside a value described by `info`. */
function scopeOf(info: PatchFieldInfo | undefined): Scope {
  if (info === undefined) return undefined;
  if (info.map === true) return { values: info.type };
  return info.type === undefined ? undefined : { message: info.type };
}

function isDirectiveKey(key: string): boolean {
  return key === PATCH || key === RETAIN_KEYS || key.startsWith(DELETE_FROM) || key.startsWith(SET_ORDER);
}

/** A patch value with every directive removed, for keys the original does not have. */
function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((v) => !(isJsonObject(v) && v[PATCH] !== undefined && Object.keys(v).length === 1))
      .map(stripDirectives);
  }
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    if (!isDirectiveKey(k) && v !== null) setOwn(out, k, stripDirectives(v));
  }
  return out;
}

/**
 * `original` with `patch` applied, using `schema` from the kind's message type `messageType`.
 * @throws StrategicMergePatchError for a malformed patch (bad directive, item without merge key).
 */
export function applyStrategicMergePatch(
  original: unknown,
  patch: unknown,
  messageType: string | undefined,
  schema: PatchSchema | undefined,
): unknown {
  if (!isJsonObject(patch)) throw new StrategicMergePatchError('strategic merge patch must be a JSON object');
  const base = isJsonObject(original) ? cloneJson(original) : {};
  return (
    mergeMap(base, patch, messageType === undefined ? undefined : { message: messageType }, schema) ?? {}
  );
}

/** Merges `patch` into `original` (owned, mutated); undefined means "delete this map". */
function mergeMap(
  original: JsonObject,
  patch: JsonObject,
  scope: Scope,
  schema: PatchSchema | undefined,
): JsonObject | undefined {
  const directive = patch[PATCH];
  if (directive !== undefined) {
    if (directive === 'replace') return stripDirectives(patch) as JsonObject;
    if (directive === 'delete') return undefined;
    if (directive !== 'merge')
      throw new StrategicMergePatchError(`Unknown patch type: ${JSON.stringify(directive)} in map`);
  }
  const retain = patch[RETAIN_KEYS];
  if (retain !== undefined) {
    if (!Array.isArray(retain) || retain.some((k) => typeof k !== 'string')) {
      throw new StrategicMergePatchError('$retainKeys must be a list of strings');
    }
    const keep = new Set(retain as string[]);
    for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
  }
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(DELETE_FROM)) continue;
    const field = key.slice(DELETE_FROM.length);
    if (!Array.isArray(value)) throw new StrategicMergePatchError(`${key} must be a list`);
    const current = ownMember(original, field);
    if (Array.isArray(current))
      setOwn(
        original,
        field,
        current.filter((item) => !value.some((v) => jsonEqual(v, item))),
      );
  }
  // The lists `$setElementOrder` orders, as the server had them (their order is the fallback).
  const serverLists = new Map<string, unknown[]>();
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const list = ownMember(original, key.slice(SET_ORDER.length));
    serverLists.set(key, Array.isArray(list) ? list : []);
  }
  for (const [key, value] of Object.entries(patch)) {
    if (isDirectiveKey(key)) continue;
    if (value === null) {
      delete original[key];
      continue;
    }
    const info = fieldInfo(schema, scope, key);
    const current = ownMember(original, key);
    if (isJsonObject(value) && isJsonObject(current)) {
      const merged = mergeMap(current, value, scopeOf(info), schema);
      if (merged === undefined) delete original[key];
      else setOwn(original, key, merged);
    } else if (isJsonObject(value) && value[PATCH] === 'delete') {
      delete original[key];
    } else if (Array.isArray(value)) {
      setOwn(original, key, mergeList(Array.isArray(current) ? current : [], value, info, schema));
    } else {
      setOwn(original, key, stripDirectives(value));
    }
  }
  for (const [key, value] of Object.entries(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const field = key.slice(SET_ORDER.length);
    if (!Array.isArray(value)) throw new StrategicMergePatchError(`${key} must be a list`);
    const list = ownMember(original, field);
    if (!Array.isArray(list)) continue;
    const keyOf = identityOf(fieldInfo(schema, scope, field)?.mergeKey);
    setOwn(original, field, kubeOrder(list, value, serverLists.get(key) ?? [], keyOf));
  }
  return original;
}

function mergeList(
  original: unknown[],
  patch: unknown[],
  info: PatchFieldInfo | undefined,
  schema: PatchSchema | undefined,
): unknown[] {
  const strategies = (info?.strategy ?? '').split(',');
  const replaceItem = patch.findIndex((p) => isJsonObject(p) && p[PATCH] === 'replace');
  if (replaceItem >= 0) return stripDirectives(patch.filter((_, i) => i !== replaceItem)) as unknown[];
  if (!strategies.includes('merge')) return stripDirectives(patch) as unknown[];
  const mergeKey = info?.mergeKey;
  const objects = patch.some(isJsonObject) || original.some(isJsonObject);
  if (!objects || mergeKey === undefined) {
    // Primitive list with merge strategy: a set union, in kube's order.
    const out = [...original];
    for (const item of patch) if (!out.some((o) => jsonEqual(o, item))) out.push(item);
    return kubeOrder(out, patch, original, identityOf(undefined));
  }
  const out = [...original];
  for (const item of patch) {
    if (!isJsonObject(item))
      throw new StrategicMergePatchError(`list item ${JSON.stringify(item)} is not a map`);
    if (!Object.hasOwn(item, mergeKey)) {
      throw new StrategicMergePatchError(
        `map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`,
      );
    }
    const keyValue = item[mergeKey];
    const at = out.findIndex((o) => isJsonObject(o) && jsonEqual(o[mergeKey], keyValue));
    const directive = item[PATCH];
    if (directive === 'delete') {
      if (at >= 0) out.splice(at, 1);
      continue;
    }
    if (directive !== undefined && directive !== 'merge' && directive !== 'replace') {
      throw new StrategicMergePatchError(`Unknown patch type: ${JSON.stringify(directive)} in list item`);
    }
    if (at >= 0 && directive !== 'replace') {
      const merged = mergeMap(out[at] as JsonObject, item, scopeOf(info), schema);
      if (merged === undefined) out.splice(at, 1);
      else out[at] = merged;
    } else if (at >= 0) {
      out[at] = stripDirectives(item);
    } else {
      out.push(stripDirectives(item));
    }
  }
  const named = patch.filter((item) => !(isJsonObject(item) && Object.hasOwn(item, PATCH)));
  return kubeOrder(out, named, original, identityOf(mergeKey));
}

/** An item's identity in a merged list: its merge key's value, or the item itself (primitives). */
function identityOf(mergeKey: string | undefined): (item: unknown) => unknown {
  return (item) => (mergeKey !== undefined && isJsonObject(item) ? item[mergeKey] : item);
}

/**
 * A merged list in kube's order (strategicpatch's `normalizeElementOrder`): the items `named`
 * (the patch's items, or a `$setElementOrder` list) in that order, interleaved with the items
 * only the server had, in `server`'s order. Of two items the server had, its order decides; an
 * item new to the server goes before the server's remaining items. `keyOf` gives an item's
 * identity (its merge key's value, or the item itself in a list of primitives).
 */
function kubeOrder(
  merged: unknown[],
  named: unknown[],
  server: unknown[],
  keyOf: (item: unknown) => unknown,
): unknown[] {
  const namedKeys = named.map(keyOf);
  const serverKeys = server.map(keyOf);
  const indexIn = (keys: unknown[], key: unknown): number => keys.findIndex((k) => jsonEqual(k, key));
  // Each item's place in the patch and on the server, found once.
  const placed = merged.map((item) => {
    const key = keyOf(item);
    return { item, inNamed: indexIn(namedKeys, key), onServer: indexIn(serverKeys, key) };
  });
  const inPatch = placed.filter((p) => p.inNamed >= 0).sort((a, b) => a.inNamed - b.inNamed);
  const serverOnly = placed.filter((p) => p.inNamed < 0).sort((a, b) => a.onServer - b.onServer);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < serverOnly.length || j < inPatch.length) {
    const left = serverOnly[i];
    const right = inPatch[j];
    if (
      right === undefined ||
      (left !== undefined && left.onServer >= 0 && right.onServer >= 0 && left.onServer < right.onServer)
    ) {
      out.push(left?.item);
      i++;
    } else {
      out.push(right.item);
      j++;
    }
  }
  return out;
}
