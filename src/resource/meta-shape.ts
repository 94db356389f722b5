/**
 * The JSON shape of `metadata` fields, checked when a body is decoded: a wrong JSON type is a 400,
 * as kube's decoder rejects it before any validation. The rules on the values (names, labels,
 * annotations, finalizers, ...) are src/validation/meta.ts's, run at write time.
 */
import { badRequest } from '../api/errors.js';
import { isJsonObject, type ObjectMeta } from '../api/object.js';

const STRING_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'selfLink',
] as const;

function wrongType(field: string, want: string): never {
  throw badRequest(
    `json: cannot unmarshal into Go struct field ObjectMeta.metadata.${field} of type ${want}`,
  );
}

/**
 * Rejects metadata whose fields have the wrong JSON type (400 BadRequest, as kube's decoder does).
 * `null` is accepted wherever kube's decoder accepts it (it means "unset").
 */
export function checkMetaShape(meta: ObjectMeta): void {
  for (const f of STRING_FIELDS) {
    const v = meta[f];
    if (v !== undefined && v !== null && typeof v !== 'string') wrongType(f, 'string');
  }
  for (const f of ['generation', 'deletionGracePeriodSeconds'] as const) {
    const v = meta[f];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v)))
      wrongType(f, 'int64');
  }
  for (const f of ['labels', 'annotations'] as const) {
    const v: unknown = meta[f];
    if (v === undefined || v === null) continue;
    if (!isJsonObject(v)) wrongType(f, 'map[string]string');
    for (const value of Object.values(v)) if (typeof value !== 'string') wrongType(f, 'string');
  }
  for (const f of ['finalizers', 'ownerReferences', 'managedFields'] as const) {
    const v: unknown = meta[f];
    if (v !== undefined && v !== null && !Array.isArray(v)) wrongType(f, 'array');
  }
  if (Array.isArray(meta.finalizers) && meta.finalizers.some((f) => typeof f !== 'string')) {
    wrongType('finalizers', '[]string');
  }
  if (Array.isArray(meta.ownerReferences) && meta.ownerReferences.some((r) => !isJsonObject(r))) {
    wrongType('ownerReferences', 'OwnerReference');
  }
}
