/**
 * What strategic merge patch needs to know about a field: how lists merge (`patchStrategy`,
 * `patchMergeKey`, from the `+patchStrategy`/`+patchMergeKey` markers of the API types) and the
 * message type of its value (or of its list items), to descend into. The schema registry
 * (`src/registry/schema.ts`) provides it; SMP only depends on this interface.
 */

/** One field of a message, as strategic merge patch sees it. */
export interface PatchFieldInfo {
  /** `patchMergeKey`: the key identifying items of a list of objects. */
  readonly mergeKey?: string;
  /**
   * `patchStrategy`: comma separated `merge`, `replace`, `retainKeys` (e.g. `merge,retainKeys`).
   * Lists without `merge` are replaced by a patch.
   */
  readonly strategy?: string;
  /** Fully qualified message type of the value (of the items, for lists; of the values, for maps). */
  readonly type?: string;
  /** The field is a map (`map<string, type>`): its keys are data, its values of `type`. */
  readonly map?: boolean;
}

/** Lookup of fields by message type and JSON field name. */
export interface PatchSchema {
  /** The field `jsonName` of `messageType`, or undefined when unknown (then: replace lists, merge maps). */
  field(messageType: string, jsonName: string): PatchFieldInfo | undefined;
}
