/** Small readers of pod JSON shared by the pod plugins. */
import { isJsonObject, type JsonObject } from '../api/object.js';

/** `obj.spec` (created when `create` and missing). */
export function specOf(obj: JsonObject, create = false): JsonObject {
  if (isJsonObject(obj['spec'])) return obj['spec'];
  const spec: JsonObject = {};
  if (create) obj['spec'] = spec;
  return spec;
}

/** The objects of an array field (non-objects skipped). */
export function objectList(v: unknown): JsonObject[] {
  return Array.isArray(v) ? v.filter((x): x is JsonObject => isJsonObject(x)) : [];
}

/** Init containers, containers and ephemeral containers. */
export function allContainers(spec: JsonObject): JsonObject[] {
  return [
    ...objectList(spec['initContainers']),
    ...objectList(spec['containers']),
    ...objectList(spec['ephemeralContainers']),
  ];
}

/** True for a Pod of the core group. */
export function isCore(a: { type: { group: string; kind: string } }, kind: string): boolean {
  return a.type.group === '' && a.type.kind === kind;
}
