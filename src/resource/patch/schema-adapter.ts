/**
 * The strategic-merge-patch view ({@link PatchSchema}) of the schema registry's message schemas
 * (src/registry/schema.ts, generated from `proto/` with the `+patchMergeKey`/`+patchStrategy`
 * markers of the API types).
 */
import { isMap, isScalarType, loadSchemas, type SchemaSet } from '../../registry/schema.js';
import type { PatchFieldInfo, PatchSchema } from './schema.js';

/** A {@link PatchSchema} over `set` (lookups are cached by the set). */
export function patchSchemaFrom(set: SchemaSet): PatchSchema {
  return {
    field(messageType: string, jsonName: string): PatchFieldInfo | undefined {
      const message = set.message(messageType);
      if (message === undefined) return undefined;
      const f = set.field(message, jsonName);
      if (f === undefined) return undefined;
      return {
        ...(f.patchMergeKey === undefined ? {} : { mergeKey: f.patchMergeKey }),
        ...(f.patchStrategy === undefined ? {} : { strategy: f.patchStrategy }),
        ...(isScalarType(f.type) ? {} : { type: f.type }),
        ...(isMap(f) ? { map: true } : {}),
      };
    },
  };
}

/** The patch schema of the built-in kinds, from the generated schema file. @throws SchemaError */
export function loadPatchSchema(): PatchSchema {
  return patchSchemaFrom(loadSchemas());
}
