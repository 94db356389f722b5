/**
 * The remaining core/v1 kinds: Namespace, Node, PersistentVolume, PersistentVolumeClaim,
 * ResourceQuota, LimitRange and the legacy core Event.
 */
import { VOLUME_SOURCES } from './facts.js';
import { duplicate, forbidden, invalid, notSupported, required, type FieldError } from '../field-error.js';
import { byteLength, cidrErrors, isDNS1123Subdomain, isLabelValue, isQualifiedName } from '../formats.js';
import { has, obj, objects, optStr, semanticEqual, str, strings, type JsonObject } from '../json.js';
import { validateLabelSelector } from '../meta.js';
import { child, index, key } from '../path.js';
import { compareQuantities, parseQuantity, quantitySign } from '../quantity.js';
import { checkQuantity, validateResourceList } from './resources.js';

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** A Namespace: `spec.finalizers` are qualified names, standard when unprefixed. */
export function validateNamespace(ns: JsonObject, errs: FieldError[]): void {
  for (const f of strings(obj(ns, 'spec'), 'finalizers')) {
    for (const msg of isQualifiedName(f)) errs.push(invalid('spec.finalizers', f, msg));
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      errs.push(
        invalid('spec.finalizers', f, 'name is neither a standard finalizer name nor is it fully qualified'),
      );
    }
  }
}

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** A Node: taints (reported under `metadata.taints`, as kube does), pod CIDRs. */
export function validateNode(node: JsonObject, errs: FieldError[]): void {
  const spec = obj(node, 'spec');
  const seen = new Set<string>();
  objects(spec, 'taints').forEach((t, i) => {
    const p = index('metadata.taints', i);
    for (const msg of isQualifiedName(str(t, 'key'))) errs.push(invalid(child(p, 'key'), str(t, 'key'), msg));
    const value = str(t, 'value');
    const msgs = isLabelValue(value);
    if (msgs.length > 0) errs.push(invalid(child(p, 'value'), value, msgs.join(';')));
    const effect = str(t, 'effect');
    if (effect === '') errs.push(required(child(p, 'effect')));
    else if (!TAINT_EFFECTS.includes(effect))
      errs.push(notSupported(child(p, 'effect'), effect, TAINT_EFFECTS));
    const k = `${effect}\u0000${str(t, 'key')}`;
    if (seen.has(k)) errs.push(duplicate(p, t, 'taints must be unique by key and effect pair'));
    seen.add(k);
  });
  strings(spec, 'podCIDRs').forEach((c, i) => {
    for (const msg of cidrErrors(c)) errs.push(invalid(index('spec.podCIDRs', i), c, msg));
  });
}

/** A Node on update: pod CIDRs and provider ID are set once. */
export function validateNodeUpdate(node: JsonObject, old: JsonObject, errs: FieldError[]): void {
  const spec = obj(node, 'spec');
  const oldSpec = obj(old, 'spec');
  const oldCIDRs = strings(oldSpec, 'podCIDRs');
  if (oldCIDRs.length > 0 && !semanticEqual(oldCIDRs, strings(spec, 'podCIDRs'))) {
    errs.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  const oldProvider = str(oldSpec, 'providerID');
  if (oldProvider !== '' && oldProvider !== str(spec, 'providerID')) {
    errs.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  validateNode(node, errs);
}

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];

function validateAccessModes(spec: JsonObject, path: string, detail: string, errs: FieldError[]): void {
  const modes = strings(spec, 'accessModes');
  if (modes.length === 0) errs.push(required(child(path, 'accessModes'), detail));
  let rwop = false;
  let other = false;
  for (const m of modes) {
    if (!ACCESS_MODES.includes(m)) errs.push(notSupported(child(path, 'accessModes'), m, ACCESS_MODES));
    else if (m === 'ReadWriteOncePod') rwop = true;
    else other = true;
  }
  if (rwop && other)
    errs.push(forbidden(child(path, 'accessModes'), 'may not use ReadWriteOncePod with other access modes'));
}

function validateVolumeMode(spec: JsonObject, path: string, errs: FieldError[]): void {
  const mode = spec['volumeMode'];
  if (mode !== undefined && mode !== null && mode !== 'Block' && mode !== 'Filesystem') {
    errs.push(notSupported(child(path, 'volumeMode'), mode, ['Block', 'Filesystem']));
  }
}

/** A PersistentVolume: access modes, a storage capacity, reclaim policy, exactly one source. */
export function validatePersistentVolume(pv: JsonObject, errs: FieldError[]): void {
  const spec = obj(pv, 'spec') ?? {};
  validateAccessModes(spec, 'spec', '', errs);
  const capacity = obj(spec, 'capacity');
  if (capacity === undefined || Object.keys(capacity).length === 0) errs.push(required('spec.capacity'));
  if (capacity === undefined || !('storage' in capacity) || Object.keys(capacity).length > 1) {
    errs.push(notSupported('spec.capacity', capacity ?? null, ['storage']));
  }
  for (const [k, v] of Object.entries(capacity ?? {})) {
    const q = checkQuantity(v, key('spec.capacity', k), errs);
    if (q !== undefined && quantitySign(q) === 0)
      errs.push(invalid(key('spec.capacity', k), '0', 'must be greater than zero'));
  }
  const reclaim = str(spec, 'persistentVolumeReclaimPolicy');
  if (reclaim !== '' && !['Delete', 'Recycle', 'Retain'].includes(reclaim)) {
    errs.push(notSupported('spec.persistentVolumeReclaimPolicy', reclaim, ['Delete', 'Recycle', 'Retain']));
  }
  const sources = [...VOLUME_SOURCES, 'local'].filter(
    (s) =>
      has(spec, s) &&
      ![
        'emptyDir',
        'secret',
        'configMap',
        'downwardAPI',
        'projected',
        'gitRepo',
        'ephemeral',
        'persistentVolumeClaim',
        'image',
      ].includes(s),
  );
  sources
    .slice(1)
    .forEach((s) => errs.push(forbidden(child('spec', s), 'may not specify more than 1 volume type')));
  if (sources.length === 0) errs.push(required('spec', 'must specify a volume type'));
  const hostPath = obj(spec, 'hostPath');
  if (hostPath !== undefined && str(hostPath, 'path') === '') errs.push(required('spec.hostPath.path'));
  validateVolumeMode(spec, 'spec', errs);
  const sc = str(spec, 'storageClassName');
  if (sc !== '')
    for (const msg of isDNS1123Subdomain(sc)) errs.push(invalid('spec.storageClassName', sc, msg));
}

/** A PersistentVolumeClaim spec (claims, claim templates, ephemeral volumes). */
export function validateClaimSpec(spec: JsonObject, path: string, errs: FieldError[]): void {
  validateAccessModes(spec, path, 'at least 1 access mode is required', errs);
  errs.push(...validateLabelSelector(spec['selector'], child(path, 'selector')));
  const storagePath = key(child(path, 'resources'), 'storage');
  const requests = obj(obj(spec, 'resources'), 'requests');
  if (requests === undefined || !('storage' in requests)) {
    errs.push(required(storagePath));
  } else {
    const q = checkQuantity(requests['storage'], storagePath, errs);
    if (q !== undefined && quantitySign(q) === 0)
      errs.push(invalid(storagePath, '0', 'must be greater than zero'));
  }
  validateResourceList(obj(obj(spec, 'resources'), 'limits'), child(path, 'resources', 'limits'), errs);
  const sc = optStr(spec, 'storageClassName');
  if (sc !== undefined && sc !== '')
    for (const msg of isDNS1123Subdomain(sc)) errs.push(invalid(child(path, 'storageClassName'), sc, msg));
  validateVolumeMode(spec, path, errs);
  for (const k of ['dataSource', 'dataSourceRef']) {
    const ds = obj(spec, k);
    if (ds === undefined) continue;
    if (str(ds, 'name') === '') errs.push(required(child(path, k, 'name')));
    if (str(ds, 'kind') === '') errs.push(required(child(path, k, 'kind')));
    if (str(ds, 'apiGroup') === '' && str(ds, 'kind') !== 'PersistentVolumeClaim') {
      errs.push(
        invalid(
          child(path, k),
          str(ds, 'kind'),
          "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
        ),
      );
    }
  }
}

/** A PersistentVolumeClaim on create. */
export function validatePersistentVolumeClaim(pvc: JsonObject, errs: FieldError[]): void {
  validateClaimSpec(obj(pvc, 'spec') ?? {}, 'spec', errs);
}

/**
 * A PersistentVolumeClaim on update: the spec is immutable except a growing storage request
 * (and setting volumeName once); storage may not shrink to or below the recorded capacity.
 */
export function validatePersistentVolumeClaimUpdate(
  pvc: JsonObject,
  old: JsonObject,
  errs: FieldError[],
): void {
  validatePersistentVolumeClaim(pvc, errs);
  const spec = obj(pvc, 'spec') ?? {};
  const oldSpec = obj(old, 'spec') ?? {};
  const masked: JsonObject = {
    ...spec,
    resources: oldSpec['resources'],
    volumeAttributesClassName: oldSpec['volumeAttributesClassName'],
  };
  if (str(oldSpec, 'volumeName') === '') masked['volumeName'] = oldSpec['volumeName'];
  if (!has(oldSpec, 'storageClassName') && has(spec, 'storageClassName'))
    masked['storageClassName'] = oldSpec['storageClassName'];
  const limitsChanged = !semanticEqual(
    obj(obj(spec, 'resources'), 'limits'),
    obj(obj(oldSpec, 'resources'), 'limits'),
  );
  if (!semanticEqual(masked, oldSpec) || limitsChanged) {
    errs.push(
      forbidden(
        'spec',
        'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
      ),
    );
  }
  const size = parseQuantity(obj(obj(spec, 'resources'), 'requests')?.['storage']);
  const oldSize = parseQuantity(obj(obj(oldSpec, 'resources'), 'requests')?.['storage']);
  const capacity = parseQuantity(obj(obj(old, 'status'), 'capacity')?.['storage']);
  if (size !== undefined && oldSize !== undefined && compareQuantities(size, oldSize) < 0) {
    if (capacity === undefined || compareQuantities(size, capacity) <= 0) {
      errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
    }
  }
}

/** A ResourceQuota: hard limits are qualified names with well-formed quantities. */
export function validateResourceQuota(rq: JsonObject, errs: FieldError[]): void {
  validateResourceList(obj(obj(rq, 'spec'), 'hard'), 'spec.hard', errs);
  const scopes = strings(obj(rq, 'spec'), 'scopes');
  const known = [
    'Terminating',
    'NotTerminating',
    'BestEffort',
    'NotBestEffort',
    'PriorityClass',
    'CrossNamespacePodAffinity',
    'VolumeAttributesClass',
  ];
  if (scopes.some((s) => !known.includes(s))) errs.push(invalid('spec.scopes', scopes, 'unsupported scope'));
}

/** A LimitRange: unique, qualified limit types. */
export function validateLimitRange(lr: JsonObject, errs: FieldError[]): void {
  const types = new Set<string>();
  objects(obj(lr, 'spec'), 'limits').forEach((item, i) => {
    const p = index('spec.limits', i);
    const type = str(item, 'type');
    for (const msg of isQualifiedName(type)) errs.push(invalid(child(p, 'type'), type, msg));
    if (!type.includes('/') && !['Pod', 'Container', 'PersistentVolumeClaim'].includes(type)) {
      errs.push(invalid(child(p, 'type'), type, 'must be a standard limit type or fully qualified'));
    }
    if (types.has(type)) errs.push(duplicate(child(p, 'type'), type));
    types.add(type);
    for (const k of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) {
      validateResourceList(obj(item, k), child(p, k), errs);
    }
    if (type === 'Pod') {
      if (Object.keys(obj(item, 'default') ?? {}).length > 0)
        errs.push(forbidden(child(p, 'default'), "may not be specified when `type` is 'Pod'"));
      if (Object.keys(obj(item, 'defaultRequest') ?? {}).length > 0)
        errs.push(forbidden(child(p, 'defaultRequest'), "may not be specified when `type` is 'Pod'"));
    }
  });
}

/**
 * The legacy core/v1 Event (`legacyValidateEvent`): kube applies no ObjectMeta validation to
 * it, only namespace agreement with the involved object, and the reporting fields once
 * `eventTime` is set.
 */
export function validateCoreEvent(ev: JsonObject, errs: FieldError[]): void {
  const namespace = str(obj(ev, 'metadata'), 'namespace');
  const involvedNs = str(obj(ev, 'involvedObject'), 'namespace');
  if (!has(ev, 'eventTime')) {
    const ok = involvedNs === '' ? namespace === '' || namespace === 'default' : namespace === involvedNs;
    if (!ok) errs.push(invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  } else {
    if (involvedNs === '' && namespace !== 'default' && namespace !== 'kube-system') {
      errs.push(invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
    validateReportingFields(ev, 'reportingComponent', 'reportingInstance', 'message', errs);
  }
  for (const msg of isDNS1123Subdomain(namespace)) errs.push(invalid('namespace', namespace, msg));
}

/** The reporting fields kube requires of new-style events (core and events.k8s.io). */
export function validateReportingFields(
  ev: JsonObject,
  controllerField: string,
  instanceField: string,
  noteField: string,
  errs: FieldError[],
): void {
  const controller = str(ev, controllerField);
  if (controller === '') errs.push(required(controllerField));
  for (const msg of isQualifiedName(controller)) errs.push(invalid(controllerField, controller, msg));
  const instance = str(ev, instanceField);
  if (instance === '') errs.push(required('reportingInstance'));
  if (byteLength(instance) > 128)
    errs.push(invalid('reportingInstance', '', 'can have at most 128 characters'));
  const action = str(ev, 'action');
  if (action === '') errs.push(required('action'));
  if (byteLength(action) > 128) errs.push(invalid('action', '', 'can have at most 128 characters'));
  const reason = str(ev, 'reason');
  if (reason === '') errs.push(required('reason'));
  if (byteLength(reason) > 128) errs.push(invalid('reason', '', 'can have at most 128 characters'));
  if (byteLength(str(ev, noteField)) > 1024)
    errs.push(invalid('message', '', 'can have at most 1024 characters'));
}
