/**
 * kube's two field-manager layers for objects that `kubectl apply` (client-side) manages through
 * the `kubectl.kubernetes.io/last-applied-configuration` annotation, so that the documented
 * upgrade to `kubectl apply --server-side` works. Both act only for the manager `kubectl`
 * (kubectl's server-side default; another manager opts out):
 *
 * - **conflicts the annotation allows** (kube's lastAppliedManager): an apply that conflicts
 *   only on fields whose live value is still the one the annotation recorded goes through as if
 *   forced, since those fields were last set by the same user with client-side apply;
 * - **the annotation kept current** (kube's lastAppliedUpdater): after such an apply, an object
 *   that carries the annotation gets the applied configuration in it (without the annotation
 *   itself), so a later client-side apply diffs against what was applied last.
 */
import { LAST_APPLIED_CONFIG_ANNOTATION } from '../api/annotations.js';
import { TypedValueError } from './errors.js';
import type { FieldSet } from './fieldpath.js';
import type { StructType } from './schema-types.js';
import { compare, fieldSetOf } from './typed.js';
import { Conflicts } from './updater.js';
import { goJson, isJsonMap, type JsonMap, type JsonValue } from './value.js';

/** The only manager both layers act for. */
export const LAST_APPLIED_MANAGER = 'kubectl';

/** kube's total size limit of an object's annotations (keys and values), in bytes. */
const ANNOTATIONS_SIZE_LIMIT = 256 * 1024;

function annotationsOf(obj: JsonMap | undefined): JsonMap | undefined {
  const meta = obj?.['metadata'];
  if (!isJsonMap(meta)) return undefined;
  const annotations = meta['annotations'];
  return isJsonMap(annotations) ? annotations : undefined;
}

/** The object's non-empty last-applied annotation, if any. */
function lastAppliedOf(obj: JsonMap | undefined): string | undefined {
  const value = annotationsOf(obj)?.[LAST_APPLIED_CONFIG_ANNOTATION];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The fields of `live` whose values are still those its last-applied annotation recorded: the
 * conflicts an apply by `kubectl` may override. Undefined when there is no usable annotation
 * (absent, not JSON of an object, of another apiVersion, or not of the kind's schema), in which
 * case the conflicts stand.
 */
export function allowedByLastApplied(
  live: JsonMap | undefined,
  type: StructType,
  apiVersion: string,
): FieldSet | undefined {
  const text = lastAppliedOf(live);
  if (text === undefined || live === undefined) return undefined;
  let recorded: unknown;
  try {
    recorded = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonMap(recorded) || recorded['apiVersion'] !== apiVersion) return undefined;
  try {
    const set = fieldSetOf(recorded, type, 'config');
    const changed = compare(recorded, live, type);
    return set.difference(changed.modified).difference(changed.added).difference(changed.removed);
  } catch (err) {
    if (err instanceof TypedValueError) return undefined;
    throw err;
  }
}

/** `conflicts` without the fields in `allowed`; undefined when none is left. */
export function conflictsBeyond(conflicts: Conflicts, allowed: FieldSet): Conflicts | undefined {
  const left = new Map<string, FieldSet>();
  for (const [manager, fields] of conflicts.byManager) {
    const rest = fields.difference(allowed);
    if (!rest.isEmpty()) left.set(manager, rest);
  }
  return left.size === 0 ? undefined : new Conflicts(left);
}

/**
 * The annotation's value for an applied `config`: the configuration without the annotation
 * (an `annotations` map it leaves empty stays, as `{}`), as Go's encoder writes it: sorted
 * keys, HTML-safe escapes, and a final newline.
 */
function lastAppliedValue(config: JsonMap): string {
  const meta = config['metadata'];
  const annotations = annotationsOf(config);
  if (!isJsonMap(meta) || annotations === undefined || !(LAST_APPLIED_CONFIG_ANNOTATION in annotations)) {
    return `${goJson(config)}\n`;
  }
  const kept: JsonMap = {};
  for (const key of Object.keys(annotations))
    if (key !== LAST_APPLIED_CONFIG_ANNOTATION) kept[key] = annotations[key] as JsonValue;
  return `${goJson({ ...config, metadata: { ...meta, annotations: kept } })}\n`;
}

function annotationsSize(annotations: JsonMap): number {
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    size += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  return size;
}

/**
 * `object` (the outcome of an apply of `config`) with its last-applied annotation set to
 * `config`, when it carries one; the annotation is dropped instead when the new value would put
 * the annotations over kube's size limit. `object` itself is not modified.
 */
export function withLastAppliedSynced(object: JsonMap, config: JsonMap): JsonMap {
  if (lastAppliedOf(object) === undefined) return object;
  const meta = object['metadata'] as JsonMap;
  const annotations: JsonMap = { ...(annotationsOf(object) as JsonMap) };
  annotations[LAST_APPLIED_CONFIG_ANNOTATION] = lastAppliedValue(config);
  if (annotationsSize(annotations) > ANNOTATIONS_SIZE_LIMIT)
    delete annotations[LAST_APPLIED_CONFIG_ANNOTATION];
  return { ...object, metadata: { ...meta, annotations } };
}
