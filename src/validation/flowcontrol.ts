/**
 * flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration and FlowSchema: the rules of kube's
 * `ValidatePriorityLevelConfiguration` and `ValidateFlowSchema` that keep a level or schema the
 * server's API Priority and Fairness could not run (an unknown type, a limited level without
 * its limits, queuing that cannot deal hands, a schema naming no level), with kube's messages.
 * Runs on defaulted objects: queuing's zero values have become kube's defaults by then.
 */
import { forbidden, invalid, notSupported, required, type FieldError } from './field-error.js';
import { has, num, obj, str, type JsonObject } from './json.js';

const LEVEL_TYPES = ['Exempt', 'Limited'];
const LIMIT_RESPONSES = ['Queue', 'Reject'];

/** A PriorityLevelConfiguration's spec. */
export function validatePriorityLevelConfiguration(
  plc: JsonObject,
  _old: JsonObject | undefined,
  errs: FieldError[],
): void {
  const spec = obj(plc, 'spec') ?? {};
  const type = str(spec, 'type');
  if (type === '') errs.push(required('spec.type'));
  else if (!LEVEL_TYPES.includes(type)) errs.push(notSupported('spec.type', type, LEVEL_TYPES));
  if (type !== 'Limited') return;
  const limited = obj(spec, 'limited');
  if (limited === undefined) {
    errs.push(required('spec.limited', 'must not be empty when type is Limited'));
    return;
  }
  const shares = num(limited, 'nominalConcurrencyShares');
  if (shares !== undefined && shares < 0)
    errs.push(invalid('spec.limited.nominalConcurrencyShares', shares, 'must be a non-negative integer'));
  const lendable = num(limited, 'lendablePercent');
  if (lendable !== undefined && (lendable < 0 || lendable > 100))
    errs.push(invalid('spec.limited.lendablePercent', lendable, 'must be between 0 and 100, inclusive'));
  validateLimitResponse(obj(limited, 'limitResponse') ?? {}, errs);
}

function validateLimitResponse(response: JsonObject, errs: FieldError[]): void {
  const path = 'spec.limited.limitResponse';
  const type = str(response, 'type');
  if (type === '') errs.push(required(`${path}.type`));
  else if (!LIMIT_RESPONSES.includes(type)) errs.push(notSupported(`${path}.type`, type, LIMIT_RESPONSES));
  const queuing = obj(response, 'queuing');
  if (type === 'Queue' && queuing === undefined) {
    errs.push(required(`${path}.queuing`, 'must not be empty if limited.limitResponse.type is Limited'));
  } else if (type !== 'Queue' && has(response, 'queuing')) {
    errs.push(forbidden(`${path}.queuing`, 'must be nil if limited.limitResponse.type is not Limited'));
  }
  if (type !== 'Queue' || queuing === undefined) return;
  const queues = num(queuing, 'queues');
  const handSize = num(queuing, 'handSize');
  if (queues !== undefined && handSize !== undefined && handSize > queues) {
    errs.push(invalid(`${path}.queuing.handSize`, handSize, `should not be greater than queues (${queues})`));
  }
}

/** A FlowSchema's reference to its priority level. */
export function validateFlowSchema(fs: JsonObject, _old: JsonObject | undefined, errs: FieldError[]): void {
  const spec = obj(fs, 'spec') ?? {};
  if (str(obj(spec, 'priorityLevelConfiguration'), 'name') === '') {
    errs.push(required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  }
}
