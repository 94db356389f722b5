/** kube's `admission.NewForbidden`: `<resource> "<name>" is forbidden: <why>` (403). */
import { forbidden, type ApiError } from '../api/errors.js';
import type { AdmissionAttributes } from './types.js';

/** The refusal of `a` for `why`; the name falls back to the object's name, then its generateName. */
export function admissionForbidden(a: AdmissionAttributes, why: string): ApiError {
  const meta = a.object?.metadata ?? a.oldObject?.metadata;
  const name = a.name !== '' ? a.name : (meta?.name ?? meta?.generateName ?? '');
  const resource = a.type.group === '' ? a.type.plural : `${a.type.plural}.${a.type.group}`;
  return forbidden(`${resource}${name === '' ? '' : ` "${name}"`} is forbidden: ${why}`, {
    name,
    ...(a.type.group === '' ? {} : { group: a.type.group }),
    kind: a.type.plural,
  });
}
