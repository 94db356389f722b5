/**
 * Structural defaulting as kube does it: a property with a `default` that is absent, or null
 * where the schema does not allow null, gets a deep copy of the default; then defaulting
 * recurses into properties, additionalProperties values and list items (a null list item of a
 * non-nullable item schema with a default is replaced too). The root itself is never defaulted.
 */
import { cloneJson, setOwn } from '../api/object.js';
import { isJsonMap, type SchemaNode } from './node.js';

function nonNullableNull(v: unknown, node: SchemaNode): boolean {
  return v === null && !node.nullable;
}

/** Applies `node`'s defaults to `value` in place. */
export function applyDefaults(value: unknown, node: SchemaNode): void {
  if (isJsonMap(value)) {
    for (const [k, prop] of node.properties) {
      if (!prop.hasDefault) continue;
      if (!Object.hasOwn(value, k) || nonNullableNull(value[k], prop))
        setOwn(value, k, cloneJson(prop.default));
    }
    for (const [k, v] of Object.entries(value)) {
      const p = node.properties.get(k);
      if (p !== undefined) applyDefaults(v, p);
      else if (node.additionalProperties !== undefined && node.additionalProperties !== true) {
        const ap = node.additionalProperties;
        if (ap.hasDefault && nonNullableNull(v, ap)) setOwn(value, k, cloneJson(ap.default));
        applyDefaults(value[k], ap);
      }
    }
  } else if (Array.isArray(value) && node.items !== undefined) {
    const items = node.items;
    for (let i = 0; i < value.length; i++) {
      if (items.hasDefault && nonNullableNull(value[i], items)) value[i] = cloneJson(items.default);
      applyDefaults(value[i], items);
    }
  }
}

/**
 * kube's `PruneNonNullableNullsWithoutDefaults`: removes object fields whose value is null where
 * the schema neither allows null nor has a default (clients often send `field: null` for "unset").
 */
export function pruneNonNullableNulls(value: unknown, node: SchemaNode | undefined): void {
  if (node === undefined) return;
  if (isJsonMap(value)) {
    for (const [k, v] of Object.entries(value)) {
      const p =
        node.properties.get(k) ??
        (node.additionalProperties === true ? undefined : node.additionalProperties);
      if (p === undefined) continue;
      if (v === null && !p.nullable && !p.hasDefault) delete value[k];
      else pruneNonNullableNulls(v, p);
    }
  } else if (Array.isArray(value)) {
    for (const v of value) pruneNonNullableNulls(v, node.items);
  }
}
