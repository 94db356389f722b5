/**
 * Pod, PodTemplate and ReplicationController (`ValidatePodCreate`, `ValidatePodUpdate`,
 * `ValidatePodTemplate`, `ValidateReplicationController`). Metadata is validated by the
 * dispatcher before these run.
 */
import { MIRROR_POD_ANNOTATION } from '../../api/annotations.js';
import { forbidden, invalid, notSupported, NEGATIVE, required, type FieldError } from '../field-error.js';
import { arr, has, num, obj, objects, semanticEqual, str, stringMap, type JsonObject } from '../json.js';
import { selectorMatches } from '../meta.js';
import { compareQuantities, parseQuantity } from '../quantity.js';
import { child, index } from '../path.js';
import { validatePodSpec, validatePodTemplateSpec } from './pod-spec.js';
import { podQOSClass } from './resources.js';

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

/** An init container that runs beside the app containers (`restartPolicy: Always`). */
function isSidecar(c: JsonObject): boolean {
  return str(c, 'restartPolicy') === 'Always';
}

/** True when a running container's status carries `resources`, i.e. its node can resize. */
function nodeSupportsResize(old: JsonObject): boolean {
  const running = objects(obj(old, 'status'), 'containerStatuses').find((s) =>
    has(obj(s, 'state') ?? {}, 'running'),
  );
  // No container runs yet: kube cannot tell, and assumes the node supports it.
  return running === undefined || has(running, 'resources');
}

/** kube's checks of one container's resize (validateContainerResize). */
function validateContainerResize(
  now: JsonObject,
  before: JsonObject,
  path: string,
  errs: FieldError[],
): void {
  const resources = obj(now, 'resources') ?? {};
  const oldResources = obj(before, 'resources') ?? {};
  for (const k of ['requests', 'limits']) {
    const list = obj(resources, k) ?? {};
    if (Object.keys(obj(oldResources, k) ?? {}).some((r) => !has(list, r))) {
      errs.push(forbidden(child(path, k), `resource ${k} cannot be removed`));
    }
  }
  const memoryPolicy = objects(now, 'resizePolicy').find((p) => str(p, 'resourceName') === 'memory');
  const policy = memoryPolicy === undefined ? '' : str(memoryPolicy, 'restartPolicy');
  if (policy !== 'NotRequired' && policy !== '') return;
  const limit = parseQuantity(obj(resources, 'limits')?.['memory']);
  const oldLimit = parseQuantity(obj(oldResources, 'limits')?.['memory']);
  const at = `${path}.limits[memory]`;
  if (limit !== undefined && oldLimit !== undefined && compareQuantities(limit, oldLimit) < 0) {
    errs.push(forbidden(at, 'memory limits cannot be decreased unless resizePolicy is RestartContainer'));
  } else if (limit !== undefined && oldLimit === undefined) {
    // Adding a limit lowers it from unlimited.
    errs.push(forbidden(at, 'memory limits cannot be added unless resizePolicy is RestartContainer'));
  }
}

/** `c` with its cpu and memory requests and limits as `before` has them (dropCPUMemoryResourcesFromContainer). */
function withOldCpuMemory(c: JsonObject, before: JsonObject): JsonObject {
  const resources = obj(c, 'resources') ?? {};
  const oldResources = obj(before, 'resources') ?? {};
  const munged: JsonObject = {};
  for (const k of ['limits', 'requests']) {
    const old = obj(oldResources, k);
    if (old === undefined) continue;
    const list: JsonObject = { ...(obj(resources, k) ?? {}) };
    for (const r of ['cpu', 'memory']) {
      if (old[r] === undefined) delete list[r];
      else list[r] = old[r];
    }
    munged[k] = list;
  }
  return { ...c, resources: munged };
}

/**
 * A write through a pod's `resize` subresource (kube's `ValidatePodResize`): the pod must still
 * be valid; only the cpu and memory of app containers and sidecars may change, without removing
 * a request or limit, without changing the QoS class, and without lowering or adding a memory
 * limit unless the container restarts for memory. Static pods, Windows pods and pods on a node
 * that reports no container resources cannot be resized.
 */
export function validatePodResize(pod: JsonObject, old: JsonObject, errs: FieldError[]): void {
  validatePodOnly(pod, errs);
  const spec = obj(pod, 'spec') ?? {};
  const oldSpec = obj(old, 'spec') ?? {};
  // These three answer with their error alone, on a field kube names `[]`.
  const refusal = ((): string | undefined => {
    const podLevel = (s: JsonObject): boolean =>
      ['requests', 'limits'].some((k) => Object.keys(obj(obj(s, 'resources'), k) ?? {}).length > 0);
    if (podLevel(oldSpec) || podLevel(spec)) return 'pods with pod-level resources cannot be resized';
    if (has(obj(obj(old, 'metadata'), 'annotations') ?? {}, MIRROR_POD_ANNOTATION))
      return 'static pods cannot be resized';
    if (str(obj(oldSpec, 'os'), 'name') === 'windows') return 'windows pods cannot be resized';
    return undefined;
  })();
  if (refusal !== undefined) {
    errs.length = 0;
    errs.push(forbidden('[]', refusal));
    return;
  }
  const oldQos = str(obj(old, 'status'), 'qosClass') || podQOSClass(oldSpec);
  if (oldQos !== podQOSClass(spec)) {
    errs.push(
      invalid(
        'spec',
        str(obj(pod, 'status'), 'qosClass'),
        'Pod QOS Class may not change as a result of resizing',
      ),
    );
  }
  if (!nodeSupportsResize(old))
    errs.push(forbidden('spec', 'Pod running on node without support for resize'));
  let reshaped = false;
  for (const [k, noun] of [
    ['containers', 'containers'],
    ['initContainers', 'initContainers'],
  ] as const) {
    const now = objects(spec, k);
    const before = objects(oldSpec, k);
    if (now.length !== before.length) {
      errs.push(forbidden(child('spec', k), `${noun} may not be added or removed on resize`));
      reshaped = true;
      continue;
    }
    before.forEach((c, i) => {
      if (str(now[i], 'name') === str(c, 'name')) return;
      errs.push(forbidden(`spec.${k}[${i}].name`, `${noun} may not be renamed or reordered on resize`));
      reshaped = true;
    });
  }
  if (reshaped) return;
  const containers = objects(spec, 'containers');
  const initContainers = objects(spec, 'initContainers');
  const oldContainers = objects(oldSpec, 'containers');
  const oldInit = objects(oldSpec, 'initContainers');
  oldInit.forEach((c, i) => {
    const now = initContainers[i];
    if (isSidecar(c) && now !== undefined)
      validateContainerResize(now, c, `spec.initContainers[${i}].resources`, errs);
  });
  oldContainers.forEach((c, i) => {
    const now = containers[i];
    if (now !== undefined) validateContainerResize(now, c, `spec.containers[${i}].resources`, errs);
  });
  const munged: JsonObject = { ...spec };
  munged['containers'] = containers.map((c, i) => {
    const before = oldContainers[i] ?? {};
    const m = withOldCpuMemory(c, before);
    if (!semanticEqual(m, before)) errs.push(forbidden('spec', 'only cpu and memory resources are mutable'));
    return m;
  });
  if (Array.isArray(spec['initContainers'])) {
    munged['initContainers'] = initContainers.map((c, i) => {
      const before = oldInit[i] ?? {};
      if (!isSidecar(c)) {
        if (!semanticEqual(c, before))
          errs.push(forbidden('spec', 'resources for non-sidecar init containers are immutable'));
        return c;
      }
      const m = withOldCpuMemory(c, before);
      if (!semanticEqual(m, before))
        errs.push(forbidden('spec', 'only cpu and memory resources for sidecar containers are mutable'));
      return m;
    });
  }
  if (errs.length > 0) return;
  if (!semanticEqual(munged, oldSpec))
    errs.push(forbidden('spec', 'only cpu and memory resources are mutable'));
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
