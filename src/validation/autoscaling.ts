/**
 * autoscaling HorizontalPodAutoscaler (v2 shape; v1 objects are recognised by `apiVersion`):
 * target reference, replica bounds, metric sources and scaling behaviour.
 */
import { invalid, notSupported, required, type FieldError } from './field-error.js';
import { isPathSegmentName, isQualifiedName } from './formats.js';
import { has, type JsonObject, num, obj, objects, oneOf, str } from './json.js';
import { child, index } from './path.js';
import { checkQuantity } from './core/resources.js';

const METRIC_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const TARGET_TYPES = ['AverageValue', 'Utilization', 'Value'];

function validateTarget(target: JsonObject | undefined, path: string, errs: FieldError[]): void {
  if (target === undefined) {
    errs.push(required(path));
    return;
  }
  const type = str(target, 'type');
  if (type === '') errs.push(required(child(path, 'type')));
  else if (!TARGET_TYPES.includes(type)) errs.push(notSupported(child(path, 'type'), type, TARGET_TYPES));
  for (const k of ['value', 'averageValue']) {
    if (has(target, k)) checkQuantity(target[k], child(path, k), errs);
  }
  const util = num(target, 'averageUtilization');
  if (util !== undefined && util < 1)
    errs.push(invalid(child(path, 'averageUtilization'), util, 'must be greater than 0'));
  const hasValue = has(target, 'value') || has(target, 'averageValue') || has(target, 'averageUtilization');
  if (!hasValue)
    errs.push(required(path, 'must set either a target value or averageValue or averageUtilization'));
}

function validateMetric(m: JsonObject, path: string, errs: FieldError[]): void {
  const type = str(m, 'type');
  if (type === '') {
    errs.push(required(child(path, 'type'), 'must specify a metric source type'));
    return;
  }
  if (!METRIC_TYPES.includes(type)) {
    errs.push(notSupported(child(path, 'type'), type, METRIC_TYPES));
    return;
  }
  const key = type.charAt(0).toLowerCase() + type.slice(1);
  const source = obj(m, key);
  if (source === undefined) {
    errs.push(required(child(path, key), `must populate information for the given metric source`));
    return;
  }
  const sp = child(path, key);
  if (type === 'Resource' || type === 'ContainerResource') {
    const name = str(source, 'name');
    if (name === '') errs.push(required(child(sp, 'name'), 'must specify a resource name'));
    if (type === 'ContainerResource' && str(source, 'container') === '')
      errs.push(required(child(sp, 'container'), 'must specify a container'));
  } else {
    const metric = obj(source, 'metric');
    const name = str(metric, 'name');
    if (name === '') errs.push(required(child(sp, 'metric', 'name'), 'must specify a metric name'));
    else
      for (const msg of isPathSegmentName(name)) errs.push(invalid(child(sp, 'metric', 'name'), name, msg));
  }
  validateTarget(obj(source, 'target'), child(sp, 'target'), errs);
}

function validateRules(rules: JsonObject | undefined, path: string, errs: FieldError[]): void {
  if (rules === undefined) return;
  const select = rules['selectPolicy'];
  if (select !== undefined && select !== null && !oneOf(select, ['Disabled', 'Max', 'Min'])) {
    errs.push(notSupported(child(path, 'selectPolicy'), select, ['Disabled', 'Max', 'Min']));
  }
  const window = num(rules, 'stabilizationWindowSeconds');
  if (window !== undefined && (window < 0 || window > 3600)) {
    errs.push(
      invalid(
        child(path, 'stabilizationWindowSeconds'),
        window,
        'must be less than or equal to 3600 and non-negative',
      ),
    );
  }
  const policies = objects(rules, 'policies');
  if (policies.length === 0) errs.push(required(child(path, 'policies'), 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const pp = index(child(path, 'policies'), i);
    const t = str(p, 'type');
    if (t !== 'Pods' && t !== 'Percent') errs.push(notSupported(child(pp, 'type'), t, ['Percent', 'Pods']));
    if ((num(p, 'value') ?? 0) <= 0)
      errs.push(invalid(child(pp, 'value'), num(p, 'value') ?? 0, 'must be greater than zero'));
    const period = num(p, 'periodSeconds') ?? 0;
    if (period <= 0 || period > 1800)
      errs.push(
        invalid(
          child(pp, 'periodSeconds'),
          period,
          'must be greater than zero and less than or equal to 1800',
        ),
      );
  });
}

/** A HorizontalPodAutoscaler. */
export function validateHPA(hpa: JsonObject, _old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(hpa, 'spec') ?? {};
  const ref = obj(spec, 'scaleTargetRef') ?? {};
  const kind = str(ref, 'kind');
  if (kind === '') errs.push(required('spec.scaleTargetRef.kind'));
  else for (const msg of isPathSegmentName(kind)) errs.push(invalid('spec.scaleTargetRef.kind', kind, msg));
  const name = str(ref, 'name');
  if (name === '') errs.push(required('spec.scaleTargetRef.name'));
  else for (const msg of isPathSegmentName(name)) errs.push(invalid('spec.scaleTargetRef.name', name, msg));
  const min = num(spec, 'minReplicas');
  const max = num(spec, 'maxReplicas') ?? 0;
  if (min !== undefined && min < 1)
    errs.push(invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) errs.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min)
    errs.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  if (hpa['apiVersion'] === 'autoscaling/v1') {
    const target = num(spec, 'targetCPUUtilizationPercentage');
    if (target !== undefined && target < 1)
      errs.push(invalid('spec.targetCPUUtilizationPercentage', target, 'must be greater than 0'));
    return;
  }
  objects(spec, 'metrics').forEach((m, i) => validateMetric(m, index('spec.metrics', i), errs));
  const behavior = obj(spec, 'behavior');
  validateRules(obj(behavior, 'scaleUp'), 'spec.behavior.scaleUp', errs);
  validateRules(obj(behavior, 'scaleDown'), 'spec.behavior.scaleDown', errs);
  for (const m of objects(spec, 'metrics')) {
    const resName = str(obj(m, 'resource'), 'name');
    if (resName !== '')
      for (const msg of isQualifiedName(resName)) errs.push(invalid('spec.metrics', resName, msg));
  }
}
