/**
 * Pod, PodTemplate and ReplicationController (`ValidatePodCreate`, `ValidatePodUpdate`,
 * `ValidatePodTemplate`, `ValidateReplicationController`). Metadata is validated by the
 * dispatcher before these run.
 */
import { MIRROR_POD_ANNOTATION } from '../../api/annotations.js';
import { forbidden, invalid, notSupported, NEGATIVE, required, type FieldError } from '../field-error.js';
import { arr, has, num, obj, objects, semanticEqual, str, stringMap, type JsonObject } from '../json.js';
import { selectorMatches } from '../meta.js';
import { child, index } from '../path.js';
import { validatePodSpec, validatePodTemplateSpec } from './pod-spec.js';

const DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

function validatePodOnly(pod: JsonObject, errs: FieldError[]): void {
  const spec = obj(pod, 'spec') ?? {};
  const annotations = obj(obj(pod, 'metadata'), 'annotations');
  const cost = annotations?.[DELETION_COST];
  if (typeof cost === 'string') {
    const n = /^[+-]?\d+$/.test(cost.trim()) ? Number(cost.trim()) : NaN;
    if (!Number.isInteger(n) || n < -2147483648 || n > 2147483647) {
      errs.push(invalid(`metadata.annotations[${DELETION_COST}]`, cost, 'must be a 32bit integer'));
    }
  }
  validatePodSpec(spec, 'spec', { isPod: true }, errs);
  if (str(spec, 'serviceAccountName') === '') {
    objects(spec, 'volumes').forEach((v, vi) => {
      objects(obj(v, 'projected'), 'sources').forEach((s, si) => {
        if (has(s, 'serviceAccountToken')) {
          errs.push(
            forbidden(
              `spec.volumes[${vi}].projected.sources[${si}].serviceAccountToken`,
              'must not be specified when serviceAccountName is not set',
            ),
          );
        }
      });
    });
  }
  for (const k of ['containers', 'initContainers']) {
    objects(spec, k).forEach((c, i) => {
      const image = str(c, 'image');
      if (image !== image.trim()) {
        errs.push(
          invalid(
            child(index(child('spec', k), i), 'image'),
            image,
            'must not have leading or trailing whitespace',
          ),
        );
      }
    });
  }
}

/** A Pod on create. */
export function validatePodCreate(pod: JsonObject, errs: FieldError[]): void {
  validatePodOnly(pod, errs);
  const spec = obj(pod, 'spec') ?? {};
  if ((arr(spec, 'ephemeralContainers') ?? []).length > 0) {
    errs.push(forbidden('spec.ephemeralContainers', 'cannot be set on create'));
  }
  if (str(spec, 'nodeName') !== '' && (arr(spec, 'schedulingGates') ?? []).length > 0) {
    errs.push(forbidden('spec.nodeName', 'cannot be set until all schedulingGates have been cleared'));
  }
}

/** The keys whose values differ between two objects (either may lack a key), `a`'s first. */
function changedKeys(a: JsonObject, b: JsonObject): string[] {
  return Object.keys({ ...a, ...b }).filter((k) => !semanticEqual(a[k], b[k]));
}

const UPDATABLE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * A Pod on update: the spec is immutable except container images, a shrinking
 * activeDeadlineSeconds, added tolerations and removed scheduling gates.
 */
export function validatePodUpdate(pod: JsonObject, old: JsonObject, errs: FieldError[]): void {
  validatePodOnly(pod, errs);
  const spec = obj(pod, 'spec') ?? {};
  const oldSpec = obj(old, 'spec') ?? {};
  for (const k of ['containers', 'initContainers']) {
    const now = objects(spec, k);
    if (now.length !== objects(oldSpec, k).length) {
      errs.push(forbidden(child('spec', k), 'pod updates may not add or remove containers'));
      return;
    }
  }
  const ads = num(spec, 'activeDeadlineSeconds');
  const oldAds = num(oldSpec, 'activeDeadlineSeconds');
  if (ads !== undefined) {
    if (ads < 0 || ads > 2147483647) {
      errs.push(invalid('spec.activeDeadlineSeconds', ads, 'must be between 0 and 2147483647, inclusive'));
      return;
    }
    if (oldAds !== undefined && oldAds < ads) {
      errs.push(invalid('spec.activeDeadlineSeconds', ads, 'must be less than or equal to previous value'));
      return;
    }
  } else if (oldAds !== undefined) {
    errs.push(
      invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'),
    );
  }
  const oldTolerations = objects(oldSpec, 'tolerations');
  const newTolerations = objects(spec, 'tolerations');
  for (const t of oldTolerations) {
    const { tolerationSeconds: _ignored, ...rest } = t;
    if (!newTolerations.some(({ tolerationSeconds: _s, ...n }) => semanticEqual(n, rest))) {
      errs.push(
        forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds'),
      );
      break;
    }
  }
  const oldGates = new Set(objects(oldSpec, 'schedulingGates').map((g) => str(g, 'name')));
  objects(spec, 'schedulingGates').forEach((g, i) => {
    if (!oldGates.has(str(g, 'name'))) {
      errs.push(
        forbidden(
          `spec.schedulingGates[${i}].name`,
          `only deletion is allowed, but found new scheduling gate '${str(g, 'name')}'`,
        ),
      );
    }
  });
  // Compare with the mutable fields masked out.
  const masked: JsonObject = { ...spec };
  for (const k of ['containers', 'initContainers']) {
    const olds = objects(oldSpec, k);
    if (Array.isArray(spec[k]))
      masked[k] = objects(spec, k).map((c, i) => ({ ...c, image: olds[i]?.['image'] }));
  }
  masked['activeDeadlineSeconds'] = oldSpec['activeDeadlineSeconds'];
  masked['tolerations'] = oldSpec['tolerations'];
  masked['schedulingGates'] = oldSpec['schedulingGates'];
  const oldGrace = num(oldSpec, 'terminationGracePeriodSeconds');
  if (oldGrace !== undefined && oldGrace < 0 && num(spec, 'terminationGracePeriodSeconds') === 1) {
    masked['terminationGracePeriodSeconds'] = oldGrace;
  }
  if (!semanticEqual(masked, oldSpec)) {
    const changed = changedKeys(masked, oldSpec);
    errs.push(forbidden('spec', `${UPDATABLE}\n  changed: ${changed.map((k) => `spec.${k}`).join(', ')}`));
  }
}

/**
 * A write through a pod's `ephemeralcontainers` subresource (kube's
 * `ValidatePodEphemeralContainersUpdate`): the pod must still be valid, a static pod's mirror
 * takes none, and the ephemeral containers already there stay as they are (matched by name, as
 * a patch may reorder them); new ones may be added.
 */
export function validatePodEphemeralContainersUpdate(
  pod: JsonObject,
  old: JsonObject,
  errs: FieldError[],
): void {
  if (has(obj(obj(old, 'metadata'), 'annotations') ?? {}, MIRROR_POD_ANNOTATION)) {
    // kube answers with this error alone, on a field it names `[]`.
    errs.length = 0;
    errs.push(forbidden('[]', 'static pods do not support ephemeral containers'));
    return;
  }
  validatePodOnly(pod, errs);
  const byName = new Map(objects(obj(pod, 'spec'), 'ephemeralContainers').map((c) => [str(c, 'name'), c]));
  for (const before of objects(obj(old, 'spec'), 'ephemeralContainers')) {
    const name = str(before, 'name');
    const now = byName.get(name);
    if (now === undefined) {
      errs.push(
        forbidden('spec.ephemeralContainers', `existing ephemeral containers "${name}" may not be removed\n`),
      );
    } else if (!semanticEqual(now, before)) {
      const changed = changedKeys(before, now);
      errs.push(
        forbidden(
          'spec.ephemeralContainers',
          `existing ephemeral containers "${name}" may not be changed\n  changed: ${changed.join(', ')}`,
        ),
      );
    }
  }
}

/** A PodTemplate (create and update validate the same). */
export function validatePodTemplate(pt: JsonObject, errs: FieldError[]): void {
  validatePodTemplateSpec(obj(pt, 'template') ?? {}, 'template', errs);
}

/** A ReplicationController: non-empty selector matching the template, restartPolicy Always. */
export function validateReplicationController(rc: JsonObject, errs: FieldError[]): void {
  const spec = obj(rc, 'spec') ?? {};
  const minReady = num(spec, 'minReadySeconds') ?? 0;
  if (minReady < 0) errs.push(invalid('spec.minReadySeconds', minReady, NEGATIVE));
  const selector = stringMap(spec, 'selector');
  if (selector.size === 0) errs.push(required('spec.selector'));
  const replicas = num(spec, 'replicas') ?? 0;
  if (replicas < 0) errs.push(invalid('spec.replicas', replicas, NEGATIVE));
  const template = obj(spec, 'template');
  if (template === undefined) {
    errs.push(required('spec.template'));
    return;
  }
  const labels = stringMap(obj(template, 'metadata'), 'labels');
  if (selector.size > 0 && !selectorMatches({ matchLabels: Object.fromEntries(selector) }, labels)) {
    errs.push(
      invalid(
        'spec.template.metadata.labels',
        Object.fromEntries(labels),
        '`selector` does not match template `labels`',
      ),
    );
  }
  validatePodTemplateSpec(template, 'spec.template', errs);
  const tspec = obj(template, 'spec') ?? {};
  const restart = str(tspec, 'restartPolicy');
  if (restart !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (has(tspec, 'activeDeadlineSeconds')) {
    errs.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        'activeDeadlineSeconds in ReplicationController is not Supported',
      ),
    );
  }
}
