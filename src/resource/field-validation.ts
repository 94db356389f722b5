/**
 * Field validation of request bodies (`fieldValidation=Strict|Warn|Ignore`), as kube-apiserver
 * does it for JSON and YAML bodies:
 *
 * - fields the kind's schema does not declare are dropped from the object in every mode (kube's
 *   typed decoder drops them), and reported as `unknown field "spec.foo"`;
 * - repeated keys in the body keep the last value and are reported as `duplicate field "a.b"`
 *   (JSON) or with the YAML decoder's `yaml: unmarshal errors: ...` (YAML);
 * - Strict: a 400 naming every problem (`Deployment in version "v1" cannot be handled as a
 *   Deployment: strict decoding error: unknown field "spec.foo", duplicate field "spec.replicas"`
 *   for objects, `strict decoding error: ...` for patches); Warn (the default): one `Warning`
 *   header per problem; Ignore: nothing reported, nothing scanned.
 *
 * Kinds the schema set does not describe are not checked.
 */
import { badRequest } from '../api/errors.js';
import { decodingError, type BodyRole } from './decode.js';
import { goV } from '../api/go-format.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from './context.js';
import {
  duplicateFieldMessage,
  duplicateJsonFields,
  duplicateYamlKeys,
  yamlDuplicateMessage,
} from './fields/duplicates.js';
import { checkDecoding, dropGoOmitted } from './fields/decoding.js';
import { isJsonObject, type JsonObject, type KubeObject } from '../api/object.js';
import type { WriteOptions } from './write-options.js';

export type { BodyRole } from './decode.js';

/** The problems of the request body itself (duplicate keys); empty under Ignore or without a raw body. */
export function duplicateProblems(write: WriteOptions): string[] {
  const raw = write.rawBody;
  if (raw === undefined || write.fieldValidation === 'Ignore') return [];
  const text = raw.bytes.toString('utf8');
  if (raw.yaml) {
    const lines = duplicateYamlKeys(text);
    return lines.length === 0 ? [] : [yamlDuplicateMessage(lines)];
  }
  return duplicateJsonFields(text).map(duplicateFieldMessage);
}

/**
 * Reports `problems` per the request's mode: a 400 under Strict, warnings under Warn.
 * @throws ApiError 400 under Strict when there are problems.
 */
export function report(
  type: ResourceType,
  role: BodyRole,
  problems: readonly string[],
  write: WriteOptions,
): void {
  if (problems.length === 0 || write.fieldValidation === 'Ignore') return;
  if (write.fieldValidation === 'Warn') {
    write.warnings.push(...problems);
    return;
  }
  const detail = `strict decoding error: ${problems.join(', ')}`;
  throw badRequest(
    role === 'patch'
      ? detail
      : `${type.kind} in version "${type.version}" cannot be handled as a ${type.kind}: ${detail}`,
  );
}

/**
 * Drops unknown fields from `obj` (in place) and reports them with the body's duplicate keys.
 * @throws ApiError 400 for a value of the wrong type (in every mode, as kube's decoder refuses
 * it), or under Strict when the body has unknown or duplicate fields.
 */
export function validateFields(
  ctx: ResourceContext,
  type: ResourceType,
  obj: JsonObject,
  write: WriteOptions,
  role: BodyRole,
): void {
  const problems = unknownProblems(ctx, type, obj, role);
  if (write.fieldValidation === 'Ignore') return;
  problems.push(...duplicateProblems(write));
  report(type, role, problems, write);
}

/**
 * Drops unknown fields from `obj` (in place); returns one `unknown field "path"` per field.
 * @throws ApiError for a value of the wrong type: kube's decoding error, a 400 for a body that
 * is an `object`, a 422 on the field `patch` for a patched object (in the unstructured
 * converter's words, showing the patch, when `strategicPatch` made it).
 */
export function unknownProblems(
  ctx: ResourceContext,
  type: ResourceType,
  obj: JsonObject,
  role: BodyRole,
  strategicPatch?: unknown,
): string[] {
  const strategy = ctx.strategies.find(type);
  if (strategy?.pruneUnknown !== undefined) {
    const pruned = strategy.pruneUnknown(obj as KubeObject);
    // kube reads a custom resource's metadata as the typed ObjectMeta: Go's omitted fields go.
    if (isJsonObject(obj['metadata'])) dropGoOmitted(obj['metadata'], ctx.fields.objectMetaType());
    return pruned.map((p) => `unknown field ${JSON.stringify(p)}`);
  }
  const t = ctx.fields.typeOf(type);
  if (t === undefined) return [];
  const strategic = strategicPatch !== undefined;
  const decoded = checkDecoding(obj, t, strategic ? 'unstructured' : 'json');
  if (decoded.typeError !== undefined) {
    const shown = strategic ? () => goV(strategicPatch) : () => JSON.stringify(obj);
    throw decodingError(type, role, shown, decoded.typeError);
  }
  return decoded.unknown.map((p) => `unknown field ${JSON.stringify(p)}`);
}
