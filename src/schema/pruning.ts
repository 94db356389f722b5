/**
 * Structural pruning as kube does it: every field the schema does not declare is removed, unless
 * the node has `x-kubernetes-preserve-unknown-fields` (then only embedded resources below it are
 * pruned). At the root and at every `x-kubernetes-embedded-resource` node `apiVersion` and `kind`
 * are kept and `metadata` is reduced to ObjectMeta's fields. Removed paths are returned as kube
 * names them in unknown-field warnings (`spec.foo`, `spec.items[0].bar`).
 */
import { isJsonMap, type SchemaNode } from './node.js';
import { childPath, itemPath } from './values.js';

/** ObjectMeta's JSON fields (what `metadata` of a resource is reduced to). */
export const OBJECT_META_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

/** Prunes `value` in place against `node`; `resourceRoot` for the root and embedded resources. */
export function pruneValue(
  value: unknown,
  node: SchemaNode | undefined,
  resourceRoot: boolean,
  path: string,
  pruned: string[],
): void {
  if (node?.preserveUnknownFields === true) {
    skipPrune(value, node, path, pruned);
    return;
  }
  if (isJsonMap(value)) {
    for (const k of Object.keys(value)) {
      const p = childPath(path, k);
      if (resourceRoot) {
        if (k === 'apiVersion' || k === 'kind') continue;
        if (k === 'metadata') {
          pruneMetadata(value[k], p, pruned);
          continue;
        }
      }
      const prop = node?.properties.get(k);
      if (prop !== undefined) {
        pruneValue(value[k], prop, prop.embeddedResource, p, pruned);
      } else if (node?.additionalProperties !== undefined) {
        const ap = node.additionalProperties;
        if (ap !== true) pruneValue(value[k], ap, ap.embeddedResource, p, pruned);
      } else {
        delete value[k];
        pruned.push(p);
      }
    }
  } else if (Array.isArray(value)) {
    const items = node?.items;
    value.forEach((v, i) =>
      pruneValue(v, items, items?.embeddedResource === true, itemPath(path, i), pruned),
    );
  }
}

function pruneMetadata(meta: unknown, path: string, pruned: string[]): void {
  if (!isJsonMap(meta)) return;
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(k)) {
      delete meta[k];
      pruned.push(childPath(path, k));
    }
  }
}

/** Below a preserve-unknown-fields node: only declared embedded resources are pruned. */
function skipPrune(value: unknown, node: SchemaNode | undefined, path: string, pruned: string[]): void {
  if (node === undefined) return;
  if (isJsonMap(value)) {
    if (node.embeddedResource && isJsonMap(value['metadata']))
      pruneMetadata(value['metadata'], childPath(path, 'metadata'), pruned);
    for (const [k, v] of Object.entries(value)) {
      const prop =
        node.properties.get(k) ??
        (node.additionalProperties === true ? undefined : node.additionalProperties);
      if (prop === undefined) continue;
      if (prop.preserveUnknownFields) skipPrune(v, prop, childPath(path, k), pruned);
      else pruneValue(v, prop, prop.embeddedResource, childPath(path, k), pruned);
    }
  } else if (Array.isArray(value) && node.items !== undefined) {
    const items = node.items;
    value.forEach((v, i) => {
      if (items.preserveUnknownFields) skipPrune(v, items, itemPath(path, i), pruned);
      else pruneValue(v, items, items.embeddedResource, itemPath(path, i), pruned);
    });
  }
}
