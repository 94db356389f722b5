/**
 * Shared shapes of the OpenAPI builders: plain JSON values (the documents are built as JSON and
 * serialized once) and the two document flavours.
 */

/** A JSON value. */
export type Json = null | boolean | number | string | readonly Json[] | JsonObject;

/** A JSON object; builders fill it, nothing mutates it after the document is serialized. */
export interface JsonObject {
  [key: string]: Json;
}

/**
 * Which document a schema is for: `v2` (Swagger 2.0, `#/definitions/`) or `v3` (OpenAPI 3.0,
 * `#/components/schemas/`). They differ in references, in how a reference carries sibling
 * keywords, and in the int-or-string and quantity types.
 */
export type OpenApiFlavor = 'v2' | 'v3';

/** `Array.isArray` for JSON values (the built-in narrows a readonly array to `any[]`). */
export function isJsonArray(v: Json | undefined): v is readonly Json[] {
  return Array.isArray(v);
}

/** True for a JSON object (not null, not an array). */
export function isJsonObject(v: Json | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A copy of `o` with its keys in sorted order (how the documents list paths and definitions). */
export function sortKeys(o: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const k of Object.keys(o).sort()) out[k] = o[k] as Json;
  return out;
}
