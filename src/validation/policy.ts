/**
 * policy/v1 PodDisruptionBudget and coordination.k8s.io/v1 Lease.
 */
import { invalid, NEGATIVE, notSupported, type FieldError } from './field-error.js';
import { isValidPercent } from './formats.js';
import { has, num, obj, type JsonObject } from './json.js';
import { validateLabelSelector } from './meta.js';

function validateIntOrPercent(v: unknown, path: string, errs: FieldError[]): void {
  if (typeof v === 'string') {
    const msgs = isValidPercent(v);
    for (const msg of msgs) errs.push(invalid(path, v, msg));
    if (msgs.length === 0 && Number(v.slice(0, -1)) > 100)
      errs.push(invalid(path, v, 'must not be greater than 100%'));
  } else if (typeof v === 'number' && v < 0) {
    errs.push(invalid(path, v, NEGATIVE));
  }
}

/**
 * A PodDisruptionBudget: at most one of minAvailable and maxUnavailable, each a non-negative
 * integer or a percentage up to 100%; an empty selector selects every pod of the namespace.
 */
export function validatePodDisruptionBudget(
  pdb: JsonObject,
  _old: JsonObject | undefined,
  errs: FieldError[],
): void {
  const spec = obj(pdb, 'spec') ?? {};
  if (has(spec, 'minAvailable') && has(spec, 'maxUnavailable')) {
    errs.push(invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set'));
  }
  if (has(spec, 'minAvailable')) validateIntOrPercent(spec['minAvailable'], 'spec.minAvailable', errs);
  if (has(spec, 'maxUnavailable')) validateIntOrPercent(spec['maxUnavailable'], 'spec.maxUnavailable', errs);
  errs.push(...validateLabelSelector(spec['selector'], 'spec.selector'));
  const policy = spec['unhealthyPodEvictionPolicy'];
  if (policy !== undefined && policy !== null && policy !== 'AlwaysAllow' && policy !== 'IfHealthyBudget') {
    errs.push(notSupported('spec.unhealthyPodEvictionPolicy', policy, ['AlwaysAllow', 'IfHealthyBudget']));
  }
}

/** A Lease: positive duration, non-negative transitions. */
export function validateLease(lease: JsonObject, _old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(lease, 'spec') ?? {};
  const duration = num(spec, 'leaseDurationSeconds');
  if (duration !== undefined && duration <= 0)
    errs.push(invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  const transitions = num(spec, 'leaseTransitions');
  if (transitions !== undefined && transitions < 0)
    errs.push(invalid('spec.leaseTransitions', transitions, NEGATIVE));
}
