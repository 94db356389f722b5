/**
 * apps/v1: Deployment, ReplicaSet, DaemonSet, StatefulSet, ControllerRevision
 * (`pkg/apis/apps/validation` plus the immutable selector the apps/v1 strategies enforce).
 */
import {
  forbidden,
  IMMUTABLE,
  invalid,
  NEGATIVE,
  notSupported,
  required,
  type FieldError,
} from './field-error.js';
import { isValidPercent } from './formats.js';
import { has, isObject, num, obj, semanticEqual, str, stringMap, type JsonObject } from './json.js';
import {
  selectorIsEmpty,
  selectorMatches,
  validateAnnotations,
  validateLabelSelector,
  validateLabels,
} from './meta.js';
import { child } from './path.js';
import { validatePodTemplateSpec } from './core/pod-spec.js';

function nonNegative(spec: JsonObject, k: string, path: string, errs: FieldError[]): void {
  const v = num(spec, k);
  if (v !== undefined && v < 0) errs.push(invalid(child(path, k), v, NEGATIVE));
}

/** A required, non-empty selector (`empty selector is invalid for <kind>`). */
function validateSelector(spec: JsonObject, kindWord: string, errs: FieldError[]): void {
  const selector = spec['selector'];
  if (!isObject(selector)) {
    errs.push(required('spec.selector'));
    return;
  }
  errs.push(...validateLabelSelector(selector, 'spec.selector'));
  if (selectorIsEmpty(selector))
    errs.push(invalid('spec.selector', selector, `empty selector is invalid for ${kindWord}`));
}

function templateLabels(spec: JsonObject): Map<string, string> {
  return stringMap(obj(obj(spec, 'template'), 'metadata'), 'labels');
}

/**
 * The selector must match the template's labels. As in kube, an absent selector matches
 * nothing (so a missing selector also reports the mismatch) and an empty one is not checked.
 */
function checkSelectorMatches(spec: JsonObject, errs: FieldError[]): void {
  const selector = spec['selector'];
  if (!isObject(selector)) {
    errs.push(
      invalid(
        'spec.template.metadata.labels',
        Object.fromEntries(templateLabels(spec)),
        '`selector` does not match template `labels`',
      ),
    );
    return;
  }
  if (selectorIsEmpty(selector)) return;
  if (!selectorMatches(selector, templateLabels(spec))) {
    errs.push(
      invalid(
        'spec.template.metadata.labels',
        Object.fromEntries(templateLabels(spec)),
        '`selector` does not match template `labels`',
      ),
    );
  }
}

/** Template validation and the restart rules shared by Deployment, ReplicaSet and DaemonSet. */
function validateTemplate(spec: JsonObject, kindWord: string, errs: FieldError[]): void {
  const template = obj(spec, 'template') ?? {};
  validatePodTemplateSpec(template, 'spec.template', errs);
  const tspec = obj(template, 'spec') ?? {};
  const restart = str(tspec, 'restartPolicy');
  if (restart !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (has(tspec, 'activeDeadlineSeconds')) {
    errs.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        `activeDeadlineSeconds in ${kindWord} is not Supported`,
      ),
    );
  }
}

/** Parsed value of an int-or-percent (`25%` → 25); non-numbers read as 0. */
function intOrPercentValue(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && isValidPercent(v).length === 0) return Number(v.slice(0, -1));
  return 0;
}

function validateIntOrPercent(v: unknown, path: string, errs: FieldError[]): void {
  if (typeof v === 'string') {
    for (const msg of isValidPercent(v)) errs.push(invalid(path, v, msg));
  } else if (typeof v === 'number') {
    if (v < 0) errs.push(invalid(path, v, NEGATIVE));
  } else if (v !== undefined && v !== null) {
    errs.push(invalid(path, v, "must be an integer or percentage (e.g '5%')"));
  }
}

function notMoreThan100Percent(v: unknown, path: string, errs: FieldError[]): void {
  if (typeof v === 'string' && isValidPercent(v).length === 0 && Number(v.slice(0, -1)) > 100) {
    errs.push(invalid(path, v, 'must not be greater than 100%'));
  }
}

function validateDeploymentStrategy(spec: JsonObject, errs: FieldError[]): void {
  const strategy = obj(spec, 'strategy') ?? {};
  const type = str(strategy, 'type');
  const ru = obj(strategy, 'rollingUpdate');
  if (type === 'Recreate') {
    if (ru !== undefined)
      errs.push(
        forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"),
      );
  } else if (type === 'RollingUpdate') {
    if (ru === undefined) {
      errs.push(required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil'));
      return;
    }
    validateIntOrPercent(ru['maxUnavailable'], 'spec.strategy.rollingUpdate.maxUnavailable', errs);
    validateIntOrPercent(ru['maxSurge'], 'spec.strategy.rollingUpdate.maxSurge', errs);
    if (intOrPercentValue(ru['maxUnavailable']) === 0 && intOrPercentValue(ru['maxSurge']) === 0) {
      errs.push(
        invalid(
          'spec.strategy.rollingUpdate.maxUnavailable',
          ru['maxUnavailable'] ?? 0,
          'may not be 0 when `maxSurge` is 0',
        ),
      );
    }
    notMoreThan100Percent(ru['maxUnavailable'], 'spec.strategy.rollingUpdate.maxUnavailable', errs);
  } else {
    errs.push(notSupported('spec.strategy', strategy, ['Recreate', 'RollingUpdate']));
  }
}

function immutableSelector(o: JsonObject, old: JsonObject, errs: FieldError[]): void {
  const sel = obj(o, 'spec')?.['selector'];
  const oldSel = obj(old, 'spec')?.['selector'];
  if (!semanticEqual(sel, oldSel)) errs.push(invalid('spec.selector', sel ?? null, IMMUTABLE));
}

/** A Deployment; with `old`, also the immutable selector. */
export function validateDeployment(d: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(d, 'spec') ?? {};
  nonNegative(spec, 'replicas', 'spec', errs);
  validateSelector(spec, 'deployment', errs);
  checkSelectorMatches(spec, errs);
  validateTemplate(spec, 'ReplicaSet', errs);
  validateDeploymentStrategy(spec, errs);
  nonNegative(spec, 'minReadySeconds', 'spec', errs);
  nonNegative(spec, 'revisionHistoryLimit', 'spec', errs);
  const pds = num(spec, 'progressDeadlineSeconds');
  if (pds !== undefined) {
    if (pds < 0) errs.push(invalid('spec.progressDeadlineSeconds', pds, NEGATIVE));
    if (pds <= (num(spec, 'minReadySeconds') ?? 0)) {
      errs.push(invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
    }
  }
  if (old !== undefined) immutableSelector(d, old, errs);
}

/** A ReplicaSet; with `old`, also the immutable selector. */
export function validateReplicaSet(rs: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(rs, 'spec') ?? {};
  nonNegative(spec, 'replicas', 'spec', errs);
  nonNegative(spec, 'minReadySeconds', 'spec', errs);
  // kube's ReplicaSet validation reuses the Deployment wording.
  validateSelector(spec, 'deployment', errs);
  checkSelectorMatches(spec, errs);
  validateTemplate(spec, 'ReplicaSet', errs);
  if (old !== undefined) immutableSelector(rs, old, errs);
}

function validateDaemonSetStrategy(spec: JsonObject, errs: FieldError[]): void {
  const strategy = obj(spec, 'updateStrategy') ?? {};
  const type = str(strategy, 'type');
  if (type === 'OnDelete') return;
  if (type !== 'RollingUpdate') {
    errs.push(notSupported('spec.updateStrategy', strategy, ['RollingUpdate', 'OnDelete']));
    return;
  }
  const ru = obj(strategy, 'rollingUpdate');
  if (ru === undefined) {
    errs.push(required('spec.updateStrategy.rollingUpdate'));
    return;
  }
  const p = 'spec.updateStrategy.rollingUpdate';
  validateIntOrPercent(ru['maxUnavailable'], `${p}.maxUnavailable`, errs);
  validateIntOrPercent(ru['maxSurge'], `${p}.maxSurge`, errs);
  notMoreThan100Percent(ru['maxUnavailable'], `${p}.maxUnavailable`, errs);
  notMoreThan100Percent(ru['maxSurge'], `${p}.maxSurge`, errs);
  const unavailable = intOrPercentValue(ru['maxUnavailable']) !== 0;
  const surge = intOrPercentValue(ru['maxSurge']) !== 0;
  if (unavailable && surge)
    errs.push(invalid(`${p}.maxSurge`, ru['maxSurge'], 'may not be set when maxUnavailable is non-zero'));
  else if (!unavailable && !surge)
    errs.push(required(`${p}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
}

/** A DaemonSet; with `old`, also the immutable selector. */
export function validateDaemonSet(ds: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(ds, 'spec') ?? {};
  errs.push(...validateLabelSelector(spec['selector'], 'spec.selector'));
  checkSelectorMatches(spec, errs);
  const selector = spec['selector'];
  if (isObject(selector) && selectorIsEmpty(selector))
    errs.push(invalid('spec.selector', selector, 'empty selector is invalid for daemonset'));
  validateTemplate(spec, 'DaemonSet', errs);
  nonNegative(spec, 'minReadySeconds', 'spec', errs);
  validateDaemonSetStrategy(spec, errs);
  nonNegative(spec, 'revisionHistoryLimit', 'spec', errs);
  if (old !== undefined) immutableSelector(ds, old, errs);
}

/** A StatefulSet; with `old`, the spec fields that may not change. */
export function validateStatefulSet(ss: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(ss, 'spec') ?? {};
  const pmp = str(spec, 'podManagementPolicy');
  if (pmp === '') errs.push(required('spec.podManagementPolicy'));
  else if (pmp !== 'OrderedReady' && pmp !== 'Parallel')
    errs.push(invalid('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
  const strategy = obj(spec, 'updateStrategy') ?? {};
  const type = str(strategy, 'type');
  const ru = obj(strategy, 'rollingUpdate');
  if (type === '') {
    errs.push(required('spec.updateStrategy'));
  } else if (type === 'OnDelete') {
    if (ru !== undefined)
      errs.push(
        invalid('spec.updateStrategy.rollingUpdate', ru, "only allowed for updateStrategy 'RollingUpdate'"),
      );
  } else if (type === 'RollingUpdate') {
    if (ru !== undefined) {
      nonNegative(ru, 'partition', 'spec.updateStrategy.rollingUpdate', errs);
      const mu = ru['maxUnavailable'];
      if (mu !== undefined && mu !== null) {
        validateIntOrPercent(mu, 'spec.updateStrategy.rollingUpdate.maxUnavailable', errs);
        if (intOrPercentValue(mu) === 0)
          errs.push(invalid('spec.updateStrategy.rollingUpdate.maxUnavailable', mu, 'cannot be 0'));
        notMoreThan100Percent(mu, 'spec.updateStrategy.rollingUpdate.maxUnavailable', errs);
      }
    }
  } else {
    errs.push(invalid('spec.updateStrategy', strategy, "must be 'RollingUpdate' or 'OnDelete'"));
  }
  const retention = obj(spec, 'persistentVolumeClaimRetentionPolicy');
  if (retention !== undefined) {
    for (const k of ['whenDeleted', 'whenScaled']) {
      const v = str(retention, k);
      if (v !== 'Retain' && v !== 'Delete')
        errs.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${k}`, v, ['Retain', 'Delete']));
    }
  }
  nonNegative(spec, 'replicas', 'spec', errs);
  nonNegative(spec, 'minReadySeconds', 'spec', errs);
  const start = num(obj(spec, 'ordinals'), 'start');
  if (start !== undefined && start < 0) errs.push(invalid('spec.ordinals.start', start, NEGATIVE));
  validateSelector(spec, 'statefulset', errs);
  checkSelectorMatches(spec, errs);
  // kube validates only the template's labels and annotations for StatefulSets.
  const tmeta = obj(obj(spec, 'template'), 'metadata');
  errs.push(...validateLabels(tmeta?.['labels'], 'spec.template.labels'));
  errs.push(...validateAnnotations(tmeta?.['annotations'], 'spec.template.annotations'));
  const tspec = obj(obj(spec, 'template'), 'spec') ?? {};
  const restart = str(tspec, 'restartPolicy');
  if (restart !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (has(tspec, 'activeDeadlineSeconds')) {
    errs.push(
      forbidden(
        'spec.template.spec.activeDeadlineSeconds',
        'activeDeadlineSeconds in StatefulSet is not Supported',
      ),
    );
  }
  if (old !== undefined) {
    const oldSpec = obj(old, 'spec') ?? {};
    const mutable = [
      'replicas',
      'template',
      'updateStrategy',
      'minReadySeconds',
      'ordinals',
      'persistentVolumeClaimRetentionPolicy',
    ];
    const masked: JsonObject = { ...spec };
    for (const k of mutable) masked[k] = oldSpec[k];
    if (!semanticEqual(masked, oldSpec)) {
      errs.push(
        forbidden(
          'spec',
          "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ),
      );
    }
  }
}

/** A ControllerRevision: data required, revision non-negative, data immutable. */
export function validateControllerRevision(
  cr: JsonObject,
  old: JsonObject | undefined,
  errs: FieldError[],
): void {
  if (!has(cr, 'data')) errs.push(required('data', 'data is mandatory'));
  const revision = num(cr, 'revision') ?? 0;
  if (revision < 0) errs.push(invalid('revision', revision, NEGATIVE));
  if (old !== undefined && !semanticEqual(cr['data'], old['data']))
    errs.push(invalid('data', cr['data'] ?? null, IMMUTABLE));
}
