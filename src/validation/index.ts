/**
 * Validation of the built-in kinds, as kube-apiserver does it. Defaulting and strategy
 * preparation are src/defaults (`defaultObject`, `prepareForCreate`, `prepareForUpdate`), which
 * sits above this folder. The resource handler calls, for a create:
 *
 * ```ts
 * defaultObject(group, kind, obj);               // kube's defaulters (on decode)
 * // handler: uid, creationTimestamp, name from generateName
 * const prep = prepareForCreate(group, kind, obj); // strategy content (Service IP families, Job selector, ...)
 * const errs = [...prep, ...validateObject(group, kind, obj)];
 * if (errs.length > 0) throw invalid(kind, group, name, errs); // 422
 * ```
 *
 * and for an update (PUT, or the result of a patch): `defaultObject`, then the handler's
 * generic carry-overs from `old` (uid, creationTimestamp, deletion fields, status),
 * `prepareForUpdate(group, kind, obj, old)`, then `validateObject(group, kind, obj, old)`.
 */
export type { FieldError, FieldErrorReason } from './field-error.js';
export { validateObject } from './validate.js';
export { validateName } from './names.js';
export {
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  validateObjectMeta,
  TOTAL_ANNOTATION_SIZE_LIMIT,
} from './meta.js';
export { kindInfo, type KindInfo, type NameRule } from './kinds.js';
export { canonicalQuantity, parseQuantity, type Quantity } from './quantity.js';
