/**
 * What part of a resource type a list or watch served from the cache covers: a key prefix (the
 * type, or one namespace), optionally one key (a watch pinned by `metadata.name`), and the label
 * and field selectors. Key checks come first so that objects outside the scope are never parsed.
 */
import type { JsonObject } from '../api/object.js';
import { lowerBound } from './cache-state.js';
import type { ObjectVersion } from './object-version.js';

/**
 * The label and field selectors of a read, as the cache applies them (the resource layer's
 * `Selection` is one).
 */
export interface ObjectFilter {
  /** True when the filter selects every object (no parse needed). */
  readonly everything: boolean;
  /** True when `obj` is selected. */
  matches(obj: JsonObject): boolean;
}

/** The scope of one read. */
export interface CacheScope {
  /** Keys of the read start with this (`/configmaps/` or `/configmaps/default/`). */
  readonly prefix: string;
  /** When set, only this key. */
  readonly key?: string;
  readonly selection: ObjectFilter;
}

/** True when `version` is inside the key range of `scope` (selectors not applied). */
export function inKeyRange(scope: CacheScope, key: string): boolean {
  return scope.key !== undefined ? key === scope.key : key.startsWith(scope.prefix);
}

/** True when `version` is in `scope` (key range and selectors). */
export function inScope(scope: CacheScope, version: ObjectVersion): boolean {
  if (!inKeyRange(scope, version.key)) return false;
  return scope.selection.everything || scope.selection.matches(version.object());
}

/**
 * The versions of a sorted snapshot inside `scope`, in key order. Finds the key range by binary
 * search, so a namespace's objects are found without walking the whole type.
 */
export function* scoped(items: readonly ObjectVersion[], scope: CacheScope): Generator<ObjectVersion> {
  const start = scope.key ?? scope.prefix;
  for (let i = lowerBound(items, start); i < items.length; i++) {
    const item = items[i];
    if (item === undefined || !inKeyRange(scope, item.key)) return;
    if (scope.selection.everything || scope.selection.matches(item.object())) yield item;
  }
}
