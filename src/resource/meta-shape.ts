/**
 * The JSON shape of `metadata` fields, checked when a body is decoded: a wrong JSON type is
 * refused, as kube's decoder refuses it before any validation. The rules on the values (names, labels,
 * annotations, finalizers, ...) are src/validation/meta.ts's, run at write time.
 */
import { isJsonObject, type ObjectMeta } from '../api/object.js';
import { jsonKind } from './fields/decoding.js';

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

function wrongType(value: unknown, field: string, want: string): never {
  // Go names a fraction given for an integer by its literal.
  const what =
    typeof value === 'number' && !Number.isInteger(value) ? `number ${String(value)}` : jsonKind(value);
  throw new MetaShapeError(
    `json: cannot unmarshal ${what} into Go struct field ObjectMeta.metadata.${field} of type ${want}`,
  );
}

/** A metadata field of the wrong JSON type; its message is Go's decoding error. */
export class MetaShapeError extends Error {
  override readonly name = 'MetaShapeError';
}

/**
 * Rejects metadata whose fields have the wrong JSON type, as kube's decoder does. `null` is
 * accepted wherever kube's decoder accepts it (it means "unset").
 * @throws MetaShapeError with Go's message.
 */
export function checkMetaShape(meta: ObjectMeta): void {
  for (const f of STRING_FIELDS) {
    const v = meta[f];
    if (v !== undefined && v !== null && typeof v !== 'string') wrongType(v, f, 'string');
  }
  for (const f of ['generation', 'deletionGracePeriodSeconds'] as const) {
    const v = meta[f];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v)))
      wrongType(v, f, 'int64');
  }
  for (const f of ['labels', 'annotations'] as const) {
    const v: unknown = meta[f];
    if (v === undefined || v === null) continue;
    if (!isJsonObject(v)) wrongType(v, f, 'map[string]string');
    for (const value of Object.values(v))
      if (value !== null && typeof value !== 'string') wrongType(value, f, 'string');
  }
  const lists = {
    finalizers: '[]string',
    ownerReferences: '[]v1.OwnerReference',
    managedFields: '[]v1.ManagedFieldsEntry',
  };
  for (const [f, want] of Object.entries(lists) as [keyof typeof lists, string][]) {
    const v: unknown = meta[f];
    if (v !== undefined && v !== null && !Array.isArray(v)) wrongType(v, f, want);
  }
  for (const f of meta.finalizers ?? [])
    if (f !== null && typeof f !== 'string') wrongType(f, 'finalizers', 'string');
  for (const r of meta.ownerReferences ?? [])
    if (r !== null && !isJsonObject(r)) wrongType(r, 'ownerReferences', 'v1.OwnerReference');
}
