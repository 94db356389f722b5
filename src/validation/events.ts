/**
 * events.k8s.io/v1 Event (`ValidateEventCreate` and `ValidateEventUpdate` for the v1 API).
 * Field paths are kube's internal names (`involvedObject`, `message`, `firstTimestamp`,
 * `source`, ...), which is how kube-apiserver reports them for this API too.
 */
import { IMMUTABLE, invalid, required, type FieldError } from './field-error.js';
import { has, num, obj, semanticEqual, str, type JsonObject } from './json.js';
import { validateReportingFields } from './core/cluster.js';

/** v1 field → the internal field name kube reports. */
const IMMUTABLE_FIELDS: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['reason', 'reason'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingController', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
  ['type', 'type'],
];

/**
 * An events.k8s.io Event: eventTime, type, reporting controller and instance, action and
 * reason required; the `deprecated*` fields may not be set on new events.
 */
export function validateEvent(ev: JsonObject, old: JsonObject | undefined, errs: FieldError[]): void {
  const namespace = str(obj(ev, 'metadata'), 'namespace');
  const regardingNs = str(obj(ev, 'regarding'), 'namespace');
  if (has(ev, 'eventTime')) {
    if (regardingNs === '' && namespace !== 'default' && namespace !== 'kube-system') {
      errs.push(invalid('involvedObject.namespace', regardingNs, 'does not match event.namespace'));
    }
    validateReportingFields(ev, 'reportingController', 'reportingInstance', 'note', errs);
  } else {
    const ok = regardingNs === '' ? namespace === '' || namespace === 'default' : namespace === regardingNs;
    if (!ok) errs.push(invalid('involvedObject.namespace', regardingNs, 'does not match event.namespace'));
  }
  if (old !== undefined) {
    const series = obj(ev, 'series');
    if (!semanticEqual(series, obj(old, 'series'))) validateSeries(series, errs);
    for (const [v1, internal] of IMMUTABLE_FIELDS) {
      if (!semanticEqual(ev[v1], old[v1])) errs.push(invalid(internal, ev[v1] ?? null, IMMUTABLE));
    }
    return;
  }
  validateSeries(obj(ev, 'series'), errs);
  if (!has(ev, 'eventTime')) errs.push(required('eventTime'));
  const type = str(ev, 'type');
  if (type !== 'Normal' && type !== 'Warning') errs.push(invalid('type', '', `has invalid value: ${type}`));
  if (has(ev, 'deprecatedFirstTimestamp')) errs.push(invalid('firstTimestamp', '', 'needs to be unset'));
  if (has(ev, 'deprecatedLastTimestamp')) errs.push(invalid('lastTimestamp', '', 'needs to be unset'));
  if ((num(ev, 'deprecatedCount') ?? 0) !== 0) errs.push(invalid('count', '', 'needs to be unset'));
  const source = obj(ev, 'deprecatedSource');
  if (str(source, 'component') !== '' || str(source, 'host') !== '')
    errs.push(invalid('source', '', 'needs to be unset'));
}

function validateSeries(series: JsonObject | undefined, errs: FieldError[]): void {
  if (series === undefined) return;
  const count = num(series, 'count') ?? 0;
  if (count < 2) errs.push(invalid('series.count', '', 'should be at least 2'));
  if (!has(series, 'lastObservedTime')) errs.push(required('series.lastObservedTime'));
}
