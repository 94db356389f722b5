/**
 * `validateObject`: metadata first (as every kube `Validate<Kind>` starts with
 * `ValidateObjectMeta`), then the kind's own rules, looked up in one table.
 */
import {
  validateControllerRevision,
  validateDaemonSet,
  validateDeployment,
  validateReplicaSet,
  validateStatefulSet,
} from './apps.js';
import { validateCronJob, validateJob, validateJobUpdate } from './batch.js';
import {
  validateCoreEvent,
  validateLimitRange,
  validateNamespace,
  validateNode,
  validateNodeUpdate,
  validatePersistentVolume,
  validatePersistentVolumeClaim,
  validatePersistentVolumeClaimUpdate,
  validateResourceQuota,
} from './core/cluster.js';
import {
  validateConfigMap,
  validateConfigMapUpdate,
  validateSecret,
  validateSecretUpdate,
} from './core/config.js';
import {
  validatePodCreate,
  validatePodEphemeralContainersUpdate,
  validatePodResize,
  validatePodTemplate,
  validatePodUpdate,
  validateReplicationController,
} from './core/pod.js';
import { validateEndpoints, validateService, validateServiceUpdate } from './core/service.js';
import type { FieldError } from './field-error.js';
import { isObject, type JsonObject } from './json.js';
import { kindInfo, kindKey } from './kinds.js';
import { validateMetaFields, validateMetaUpdate } from './meta.js';
import { GROUP_VALIDATORS } from './groups.js';

/** A kind's own validation; `old` is the stored object on update. */
export type KindValidator = (obj: JsonObject, old: JsonObject | undefined, errs: FieldError[]) => void;

/** An update's validation through a subresource (a subresource never creates). */
type UpdateValidator = (obj: JsonObject, old: JsonObject, errs: FieldError[]) => void;

/**
 * Updates through a subresource with rules of their own instead of the kind's update rules, by
 * `<group>/<Kind>/<subresource>`: a pod's ephemeralcontainers (`ValidatePodEphemeralContainersUpdate`)
 * and resize (`ValidatePodResize`).
 */
const SUBRESOURCE_VALIDATORS: ReadonlyMap<string, UpdateValidator> = new Map([
  ['/Pod/ephemeralcontainers', validatePodEphemeralContainersUpdate],
  ['/Pod/resize', validatePodResize],
]);

const CORE_VALIDATORS: ReadonlyMap<string, KindValidator> = new Map<string, KindValidator>([
  ['/Pod', (o, old, e) => (old === undefined ? validatePodCreate(o, e) : validatePodUpdate(o, old, e))],
  ['/PodTemplate', (o, _old, e) => validatePodTemplate(o, e)],
  ['/ReplicationController', (o, _old, e) => validateReplicationController(o, e)],
  ['/Service', (o, old, e) => (old === undefined ? validateService(o, e) : validateServiceUpdate(o, old, e))],
  ['/Endpoints', (o, _old, e) => validateEndpoints(o, e)],
  [
    '/ConfigMap',
    (o, old, e) => (old === undefined ? validateConfigMap(o, e) : validateConfigMapUpdate(o, old, e)),
  ],
  ['/Secret', (o, old, e) => (old === undefined ? validateSecret(o, e) : validateSecretUpdate(o, old, e))],
  ['/Namespace', (o, _old, e) => validateNamespace(o, e)],
  ['/Node', (o, old, e) => (old === undefined ? validateNode(o, e) : validateNodeUpdate(o, old, e))],
  ['/PersistentVolume', (o, _old, e) => validatePersistentVolume(o, e)],
  [
    '/PersistentVolumeClaim',
    (o, old, e) =>
      old === undefined
        ? validatePersistentVolumeClaim(o, e)
        : validatePersistentVolumeClaimUpdate(o, old, e),
  ],
  ['/ResourceQuota', (o, _old, e) => validateResourceQuota(o, e)],
  ['/LimitRange', (o, _old, e) => validateLimitRange(o, e)],
  ['/Event', (o, _old, e) => validateCoreEvent(o, e)],
  ['apps/Deployment', validateDeployment],
  ['apps/ReplicaSet', validateReplicaSet],
  ['apps/DaemonSet', validateDaemonSet],
  ['apps/StatefulSet', validateStatefulSet],
  ['apps/ControllerRevision', validateControllerRevision],
  ['batch/Job', (o, old, e) => (old === undefined ? validateJob(o, e) : validateJobUpdate(o, old, e))],
  ['batch/CronJob', validateCronJob],
]);

/** Kinds whose metadata kube does not validate through `ValidateObjectMeta`. */
const NO_META = new Set(['/Event']);

function dedupe(errs: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errs.filter((e) => {
    const k = `${e.field}\u0000${e.reason}\u0000${e.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * Validates an object as kube-apiserver validates that kind: `ValidateObjectMeta` (per-kind
 * name rule, namespace, labels, annotations, owner references, finalizers) and the kind's own
 * `Validate<Kind>`; with `old`, the update rules (`ValidateObjectMetaUpdate` and the kind's
 * `Validate<Kind>Update`: immutable selectors, immutable Secret types, ...).
 *
 * Call it on the defaulted object (kube validates after defaulting; several fields defaulting
 * fills are required here) and after `prepareForCreate`/`prepareForUpdate`.
 *
 * Edge cases:
 * - Unknown kinds (custom resources) get metadata validation only, with DNS-subdomain names.
 * - Review kinds (TokenReview, SubjectAccessReview, ...) are not validated here.
 * - A non-object `metadata` or `spec` reads as empty (so "Required value" errors follow).
 * - Identical errors are reported once, as kube's aggregate does.
 *
 * @returns The field errors, empty when the object is valid; the HTTP layer turns a non-empty
 *   list into a 422 `Invalid` Status with one cause per error.
 */
export function validateObject(
  group: string,
  kind: string,
  obj: Record<string, unknown>,
  old?: Record<string, unknown>,
  subresource?: string,
): FieldError[] {
  const info = kindInfo(group, kind);
  if (info?.name === 'virtual') return [];
  const k = kindKey(group, kind);
  const errs: FieldError[] = [];
  if (!NO_META.has(k)) {
    const meta = isObject(obj['metadata']) ? obj['metadata'] : {};
    if (old !== undefined)
      errs.push(...validateMetaUpdate(meta, isObject(old['metadata']) ? old['metadata'] : {}));
    errs.push(
      ...validateMetaFields(group, kind, meta, {
        namespaced: info?.namespaced,
        builtIn: info !== undefined,
        update: old !== undefined,
      }),
    );
  }
  const ownRules =
    old === undefined || subresource === undefined
      ? undefined
      : SUBRESOURCE_VALIDATORS.get(`${k}/${subresource}`);
  if (ownRules !== undefined && old !== undefined) ownRules(obj, old, errs);
  else (CORE_VALIDATORS.get(k) ?? GROUP_VALIDATORS.get(k))?.(obj, old, errs);
  return dedupe(errs);
}
