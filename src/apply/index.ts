/**
 * Server-side apply and field ownership (Capstan's structured-merge-diff), driven by the schema
 * registry. How the HTTP layer wires it, in kube-apiserver's order:
 *
 * 1. At start: `const types = new ObjectTypes(schemas)`; per served kind
 *    `types.forKind(messageName)` (cheap after the first call; keep one ObjectTypes per server).
 * 2. Manager: {@link managerOrUserAgent}(query `fieldManager`, `User-Agent`). Apply requires a
 *    `fieldManager` (kube: 400 otherwise); validating its length/characters is the handler's.
 * 3. PATCH `application/apply-patch+yaml`: parse the body, then {@link applyOperation} with the
 *    stored object (`live: undefined` creates), `force` from the query, `kind`/`apiVersion` of
 *    the endpoint. Then default the result (kube defaults right after the merge, which is how
 *    an unset field gets "reset to its default"), restore server-owned metadata on updates (uid,
 *    creationTimestamp, ...), validate, admit, store. `changed: false` means nothing to write:
 *    answer with the stored object, no new revision.
 * 4. POST, PUT, other PATCHes: after decoding and defaulting, before admission and the
 *    strategy, {@link updateOperation} with the stored object (undefined on create) and the
 *    object to store; store `result.object`.
 * 5. `ignoredFields`: kube's reset fields, e.g. `FieldSet.fromPaths([[fieldElement('status')]])`
 *    on the main resource of kinds with a status subresource; on `/status`, the kind's spec-side
 *    fields. Nobody can own them through that endpoint and they never conflict there.
 * 6. Errors: {@link ApplyConflictError} → `new ApiError('Conflict', err.message, { causes: err.causes })`
 *    (409, reason Conflict, causes `{ reason: 'FieldManagerConflict', message, field }`);
 *    {@link ApplyError} → reason and code of {@link APPLY_ERROR_STATUS}[err.code], `err.message`.
 */
export {
  APPLY_ERROR_STATUS,
  ApplyConflictError,
  ApplyError,
  FieldsV1Error,
  TypedValueError,
} from './errors.js';
export type { ApplyConflict, ApplyErrorCode, ConflictCause } from './errors.js';
export { FieldSet, FieldSetBuilder } from './fieldpath.js';
export {
  comparePathElements,
  fieldElement,
  indexElement,
  keyElement,
  parsePathElement,
  pathElementToString,
  pathToString,
  valueElement,
} from './path-element.js';
export type { Path, PathElement } from './path-element.js';
export { ObjectTypes, KEY_DEFAULTS } from './schema-types.js';
export type { ListType, LeafType, MapType, StructType, TypeNode } from './schema-types.js';
export { compare, ensureNamedFieldsAreMembers, fieldSetOf, removeItems } from './typed.js';
export type { Comparison } from './typed.js';
export { apply, merge, prune } from './merge.js';
export type { Removal } from './merge.js';
export { decodeManagedFields, encodeManagedFields, formatTime, managerIdentifier } from './entries.js';
export type { ManagedFieldsEntry } from './entries.js';
export { MAX_UPDATE_MANAGERS, applyOperation, updateOperation } from './managed-fields.js';
export type {
  ApplyOptions,
  ApplyResult,
  OperationOptions,
  UpdateOptions,
  UpdateResult,
} from './managed-fields.js';
export { FIELD_MANAGER_MAX_LENGTH, defaultManagerName, managerOrUserAgent } from './manager-name.js';
