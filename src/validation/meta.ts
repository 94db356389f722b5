/**
 * `metadata` validation: kube's `ValidateObjectMeta` (create) and `ValidateObjectMetaUpdate`
 * (update), plus the label, annotation and label-selector checks other validators reuse.
 */
import {
  duplicate,
  forbidden,
  IMMUTABLE,
  invalid,
  NEGATIVE,
  required,
  tooLong,
  type FieldError,
} from './field-error.js';
import { byteLength, isDNS1123Label, isLabelValue, isQualifiedName } from './formats.js';
import {
  arr,
  isObject,
  num,
  obj,
  objects,
  optStr,
  semanticEqual,
  str,
  strings,
  type JsonObject,
} from './json.js';
import { kindInfo } from './kinds.js';
import { nameErrors } from './names.js';
import { child, index } from './path.js';

/** kube's total annotation size limit (keys plus values), 256 KiB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/**
 * Label keys must be qualified names and values valid label values. Errors carry the map's
 * path (`metadata.labels`), not the key, as kube reports them.
 */
export function validateLabels(labels: unknown, path = 'metadata.labels'): FieldError[] {
  if (!isObject(labels)) return [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const msg of isQualifiedName(k)) errs.push(invalid(path, k, msg));
    const value = typeof v === 'string' ? v : '';
    for (const msg of isLabelValue(value)) errs.push(invalid(path, value, msg));
  }
  return errs;
}

/**
 * Annotation keys must be qualified names (case-insensitively) and keys plus values together at
 * most 256 KiB (`Too long: must have at most 262144 bytes`).
 */
export function validateAnnotations(annotations: unknown, path = 'metadata.annotations'): FieldError[] {
  if (!isObject(annotations)) return [];
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(path, k, msg));
    total += byteLength(k) + (typeof v === 'string' ? byteLength(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/** A `metav1.LabelSelector` (absent is valid). */
export function validateLabelSelector(selector: unknown, path: string): FieldError[] {
  if (!isObject(selector)) return [];
  const errs = validateLabels(selector['matchLabels'], child(path, 'matchLabels'));
  objects(selector, 'matchExpressions').forEach((expr, i) => {
    const p = index(child(path, 'matchExpressions'), i);
    const op = str(expr, 'operator');
    const values = arr(expr, 'values') ?? [];
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) {
        errs.push(required(child(p, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) {
        errs.push(
          forbidden(child(p, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        );
      }
    } else {
      errs.push(invalid(child(p, 'operator'), op, 'not a valid selector operator'));
    }
    for (const msg of isQualifiedName(str(expr, 'key')))
      errs.push(invalid(child(p, 'key'), str(expr, 'key'), msg));
    // Values must be label values, as LabelSelectorAsSelector requires.
    values.forEach((v, j) => {
      if (typeof v !== 'string') return;
      for (const msg of isLabelValue(v)) errs.push(invalid(index(child(p, 'values'), j), v, msg));
    });
  });
  return errs;
}

/**
 * Whether a label selector matches a label set (`matchLabels` and `matchExpressions` ANDed).
 * An empty or absent selector matches everything.
 */
export function selectorMatches(selector: unknown, labels: Map<string, string>): boolean {
  if (!isObject(selector)) return true;
  const ml = obj(selector, 'matchLabels');
  if (ml !== undefined) {
    for (const [k, v] of Object.entries(ml)) {
      if (labels.get(k) !== v) return false;
    }
  }
  for (const expr of objects(selector, 'matchExpressions')) {
    const k = str(expr, 'key');
    const values = strings(expr, 'values');
    const has = labels.has(k);
    switch (str(expr, 'operator')) {
      case 'In':
        if (!has || !values.includes(labels.get(k) ?? '')) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels.get(k) ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** True when the selector has no `matchLabels` and no `matchExpressions`. */
export function selectorIsEmpty(selector: JsonObject): boolean {
  const ml = obj(selector, 'matchLabels');
  return (
    (ml === undefined || Object.keys(ml).length === 0) &&
    (arr(selector, 'matchExpressions') ?? []).length === 0
  );
}

function validateOwnerReferences(refs: unknown, path: string): FieldError[] {
  if (!Array.isArray(refs)) return [];
  const errs: FieldError[] = [];
  let firstController = '';
  for (const item of refs) {
    const ref = isObject(item) ? item : {};
    const apiVersion = str(ref, 'apiVersion');
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    if (version === '')
      errs.push(invalid(child(path, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (str(ref, 'kind') === '') errs.push(invalid(child(path, 'kind'), '', 'must not be empty'));
    if (str(ref, 'name') === '') errs.push(invalid(child(path, 'name'), '', 'must not be empty'));
    if (str(ref, 'uid') === '') errs.push(invalid(child(path, 'uid'), '', 'must not be empty'));
    if (apiVersion === 'v1' && str(ref, 'kind') === 'Event') {
      errs.push(invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref['controller'] === true) {
      const name = `${str(ref, 'kind')}/${str(ref, 'name')}`;
      if (firstController !== '') {
        errs.push(
          invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${name}`,
          ),
        );
      } else {
        firstController = name;
      }
    }
  }
  return errs;
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

function validateFinalizers(finalizers: unknown, path: string, builtIn: boolean): FieldError[] {
  if (!Array.isArray(finalizers)) return [];
  const errs: FieldError[] = [];
  const names = finalizers.filter((f): f is string => typeof f === 'string');
  for (const f of names) {
    for (const msg of isQualifiedName(f)) errs.push(invalid(path, f, msg));
  }
  if (names.includes('orphan') && names.includes('foregroundDeletion')) {
    errs.push(invalid(path, names, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  if (builtIn) {
    names.forEach((f, i) => {
      if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
        errs.push(
          invalid(index(path, i), f, 'name is neither a standard finalizer name nor is it fully qualified'),
        );
      }
    });
  }
  return errs;
}

function validateManagedFields(entries: unknown, path: string): FieldError[] {
  if (!Array.isArray(entries)) return [];
  const errs: FieldError[] = [];
  entries.forEach((item, i) => {
    const e = isObject(item) ? item : {};
    const p = index(path, i);
    const op = str(e, 'operation');
    if (op !== 'Apply' && op !== 'Update')
      errs.push(invalid(child(p, 'operation'), op, 'must be `Apply` or `Update`'));
    const ft = str(e, 'fieldsType');
    if (ft !== '' && ft !== 'FieldsV1') errs.push(invalid(child(p, 'fieldsType'), ft, 'must be `FieldsV1`'));
    const manager = str(e, 'manager');
    if (byteLength(manager) > 128) errs.push(tooLong(child(p, 'manager'), 128));
  });
  return errs;
}

/** Options that vary between kinds' metadata validation. */
export interface MetaOptions {
  /** True/false when the kind's scope is known; undefined skips the namespace check. */
  readonly namespaced?: boolean | undefined;
  /** True for built-in kinds (adds kube's legacy finalizer-name rule). */
  readonly builtIn: boolean;
  /** True when validating the new object of an update. */
  readonly update: boolean;
}

/**
 * kube's `ValidateObjectMeta` for an object being created (or the new object of an update):
 * name and generateName per kind, namespace presence and format, generation, labels,
 * annotations, owner references, finalizers, managed fields.
 */
export function validateMetaFields(
  group: string,
  kind: string,
  meta: JsonObject,
  opts: MetaOptions,
  path = 'metadata',
): FieldError[] {
  const errs: FieldError[] = [];
  const generateName = str(meta, 'generateName');
  if (generateName !== '') {
    for (const msg of nameErrors(group, kind, generateName, true, opts.update)) {
      errs.push(invalid(child(path, 'generateName'), generateName, msg));
    }
  }
  const name = str(meta, 'name');
  if (name === '') {
    errs.push(required(child(path, 'name'), 'name or generateName is required'));
  } else {
    for (const msg of nameErrors(group, kind, name, false, opts.update)) {
      errs.push(invalid(child(path, 'name'), name, msg));
    }
  }
  const namespace = str(meta, 'namespace');
  if (opts.namespaced === true) {
    if (namespace === '') {
      errs.push(required(child(path, 'namespace')));
    } else {
      for (const msg of isDNS1123Label(namespace))
        errs.push(invalid(child(path, 'namespace'), namespace, msg));
    }
  } else if (opts.namespaced === false && namespace !== '') {
    errs.push(forbidden(child(path, 'namespace'), 'not allowed on this type'));
  }
  const generation = num(meta, 'generation');
  if (generation !== undefined && generation < 0)
    errs.push(invalid(child(path, 'generation'), generation, NEGATIVE));
  errs.push(...validateLabels(meta['labels'], child(path, 'labels')));
  errs.push(...validateAnnotations(meta['annotations'], child(path, 'annotations')));
  errs.push(...validateOwnerReferences(meta['ownerReferences'], child(path, 'ownerReferences')));
  errs.push(...validateFinalizers(meta['finalizers'], child(path, 'finalizers'), opts.builtIn));
  errs.push(...validateManagedFields(meta['managedFields'], child(path, 'managedFields')));
  return errs;
}

/**
 * kube's `ValidateObjectMetaUpdate` checks that compare with the stored object: identity and
 * timestamps are immutable, generation may not go down, and no finalizer may be added once
 * deletion started. (The resourceVersion precondition is the handler's.)
 */
export function validateMetaUpdate(meta: JsonObject, old: JsonObject, path = 'metadata'): FieldError[] {
  const errs: FieldError[] = [];
  if (optStr(old, 'deletionTimestamp') !== undefined) {
    const oldSet = new Set(strings(old, 'finalizers'));
    const extra = [...new Set(strings(meta, 'finalizers'))].filter((f) => !oldSet.has(f)).sort();
    if (extra.length > 0) {
      errs.push(
        forbidden(
          child(path, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(extra)}`,
        ),
      );
    }
  }
  const gen = num(meta, 'generation') ?? 0;
  const oldGen = num(old, 'generation') ?? 0;
  if (gen < oldGen) errs.push(invalid(child(path, 'generation'), gen, 'must not be decremented'));
  for (const f of [
    'name',
    'namespace',
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
  ]) {
    if (!semanticEqual(meta[f], old[f])) errs.push(invalid(child(path, f), meta[f], IMMUTABLE));
  }
  return errs;
}

/**
 * Validates an object's `metadata` as kube-apiserver does for that kind: on create the
 * `ValidateObjectMeta` rules (per-kind name rule, namespace, labels, annotations ≤ 256 KiB,
 * owner references, finalizers, managed fields), and with `oldMetadata` also the update rules
 * (name, namespace, uid and timestamps immutable; generation not decremented; no new finalizers
 * while deleting).
 *
 * `validateObject` already includes this for every kind; call it directly only for objects that
 * `validateObject` does not know (it does the same there: custom resources get DNS-subdomain
 * names and no scope check).
 *
 * @param metadata The object's `metadata` (anything; a non-object reads as empty).
 */
export function validateObjectMeta(
  group: string,
  kind: string,
  metadata: unknown,
  oldMetadata?: unknown,
): FieldError[] {
  const info = kindInfo(group, kind);
  if (info?.name === 'virtual') return [];
  const meta = isObject(metadata) ? metadata : {};
  const update = oldMetadata !== undefined;
  const errs: FieldError[] = [];
  if (update) errs.push(...validateMetaUpdate(meta, isObject(oldMetadata) ? oldMetadata : {}));
  errs.push(
    ...validateMetaFields(group, kind, meta, {
      namespaced: info?.namespaced,
      builtIn: info !== undefined,
      update,
    }),
  );
  return errs;
}

/** `Duplicate value` for every repeated string of a list, at `path[i]`. */
export function duplicates(values: readonly string[], path: string): FieldError[] {
  const seen = new Set<string>();
  const errs: FieldError[] = [];
  values.forEach((v, i) => {
    if (seen.has(v)) errs.push(duplicate(index(path, i), v));
    seen.add(v);
  });
  return errs;
}
