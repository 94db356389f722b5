/**
 * Printer of `autoscaling` horizontal pod autoscalers. kube prints from the internal (v2-shaped)
 * object; an `autoscaling/v1` object's CPU target is read as the one resource metric it stands for.
 */
import { AGE, column, columns, NAME } from './columns.js';
import { since } from './duration.js';
import { int, list, obj, optInt, optStr, str, type Fields } from './fields.js';
import type { TablePrinter } from './index.js';

/** A quantity as printed; a missing one is Go's zero Quantity, `0`. Not re-canonicalised. */
function quantity(value: unknown): string {
  return optStr(value) ?? (typeof value === 'number' ? String(value) : '0');
}

/** One metric's `current/target` text; `status` is the matching entry of currentMetrics, if any. */
function formatMetric(spec: Fields, status: Fields | undefined): string {
  const type = str(spec['type']);
  const unknown = '<unknown>';
  switch (type) {
    case 'External':
    case 'Object': {
      const key = type === 'External' ? 'external' : 'object';
      const target = obj(obj(spec[key])['target']);
      const current = status === undefined ? undefined : status[key];
      const currentValue =
        current === undefined || current === null ? undefined : obj(obj(current)['current']);
      if (target['averageValue'] !== undefined && target['averageValue'] !== null) {
        const now = currentValue?.['averageValue'];
        const text = now === undefined || now === null ? unknown : quantity(now);
        return `${text}/${quantity(target['averageValue'])} (avg)`;
      }
      const text = currentValue === undefined ? unknown : quantity(currentValue['value']);
      return `${text}/${quantity(target['value'])}`;
    }
    case 'Pods': {
      const current = status?.['pods'];
      const text =
        current === undefined || current === null
          ? unknown
          : quantity(obj(obj(current)['current'])['averageValue']);
      return `${text}/${quantity(obj(obj(spec['pods'])['target'])['averageValue'])}`;
    }
    case 'Resource':
    case 'ContainerResource': {
      const key = type === 'Resource' ? 'resource' : 'containerResource';
      const source = obj(spec[key]);
      const target = obj(source['target']);
      const resourceName = str(source['name']);
      const current = status?.[key];
      const currentValue =
        current === undefined || current === null ? undefined : obj(obj(current)['current']);
      if (target['averageValue'] !== undefined && target['averageValue'] !== null) {
        const text = currentValue === undefined ? unknown : quantity(currentValue['averageValue']);
        return `${resourceName}: ${text}/${quantity(target['averageValue'])}`;
      }
      const utilization = optInt(currentValue?.['averageUtilization']);
      const goal = optInt(target['averageUtilization']);
      return `${resourceName}: ${utilization === undefined ? unknown : `${utilization}%`}/${goal === undefined ? '<auto>' : `${goal}%`}`;
    }
    default:
      return '<unknown type>';
  }
}

/** The metrics of an autoscaling/v1 object (only a CPU utilization target), in v2 shape. */
function v1Metrics(spec: Fields, status: Fields): [specs: Fields[], statuses: Fields[]] {
  const target = optInt(spec['targetCPUUtilizationPercentage']);
  if (target === undefined) return [[], []];
  const metric = { type: 'Resource', resource: { name: 'cpu', target: { averageUtilization: target } } };
  const current = optInt(status['currentCPUUtilizationPercentage']);
  const statuses =
    current === undefined
      ? []
      : [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: current } } }];
  return [[metric], statuses];
}

/** TARGETS: up to two metrics as `current/target`, then `+ N more...`; `<none>` without metrics. */
function formatMetrics(spec: Fields, status: Fields): string {
  let specs = list(spec['metrics']).map(obj);
  let statuses = list(status['currentMetrics']).map(obj);
  if (specs.length === 0 && spec['metrics'] === undefined) [specs, statuses] = v1Metrics(spec, status);
  if (specs.length === 0) return '<none>';
  const max = 2;
  const texts = specs.map((s, i) => formatMetric(s, statuses[i]));
  const shown = texts.slice(0, max).join(', ');
  return texts.length > max ? `${shown} + ${texts.length - max} more...` : shown;
}

const HORIZONTAL_POD_AUTOSCALER: TablePrinter = {
  columns: columns(
    NAME,
    column('Reference', 'string', 'Workload the autoscaler scales, as kind/name.'),
    column('Targets', 'string', 'Current and target values of the metrics.'),
    column('MinPods', 'string', 'Lower bound of the replica count.'),
    column('MaxPods', 'string', 'Upper bound of the replica count.'),
    column('Replicas', 'string', 'Current number of replicas.'),
    AGE,
  ),
  cells(hpa, now) {
    const spec = obj(hpa['spec']);
    const status = obj(hpa['status']);
    const ref = obj(spec['scaleTargetRef']);
    const min = optInt(spec['minReplicas']);
    return [
      hpa.metadata.name ?? '',
      `${str(ref['kind'])}/${str(ref['name'])}`,
      formatMetrics(spec, status),
      min === undefined ? '<unset>' : String(min),
      int(spec['maxReplicas']),
      int(status['currentReplicas']),
      since(hpa.metadata.creationTimestamp, now),
    ];
  },
};

/** `autoscaling` printers by resource. */
export const AUTOSCALING_PRINTERS: Readonly<Record<string, TablePrinter>> = Object.freeze({
  horizontalpodautoscalers: HORIZONTAL_POD_AUTOSCALER,
});
