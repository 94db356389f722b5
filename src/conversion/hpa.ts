/**
 * kube's conversion between the two served forms of a HorizontalPodAutoscaler: `autoscaling/v2`
 * (the storage version, as kube-apiserver 1.33 stores `/registry/horizontalpodautoscalers`) and
 * `autoscaling/v1`, after kube's `pkg/apis/autoscaling/v1/conversion.go`:
 *
 * - a `Resource` metric on `cpu` with an `Utilization` target is v1's
 *   `spec.targetCPUUtilizationPercentage`; the other metrics travel in the annotation
 *   `autoscaling.alpha.kubernetes.io/metrics` in v1's (v2beta1-shaped) MetricSpec form;
 * - every `status.currentMetrics` entry travels in `autoscaling.alpha.kubernetes.io/current-metrics`
 *   (the cpu one also as `status.currentCPUUtilizationPercentage`), `status.conditions` in
 *   `autoscaling.alpha.kubernetes.io/conditions`, `spec.behavior` in
 *   `autoscaling.alpha.kubernetes.io/behavior` (kube marshals its internal type there, without
 *   JSON tags: Go field names, read back case-insensitively);
 * - v1 → v2 reads those annotations back and removes them; without metrics at all, v2 gets kube's
 *   implicit default (cpu at 80%).
 *
 * Like kube, the cpu utilization metric comes back last among the metrics. Where kube's Go structs
 * would write zero values for absent fields (`targetValue: "0"`), absent stays absent here, so a
 * round trip gives back exactly what went in.
 */
import { isJsonObject, type KubeObject } from '../api/object.js';
import { fields, obj, specFromV1, specToV1, statusFromV1, statusToV1, type Obj } from './hpa-metrics.js';

/** The two apiVersions. */
export const HPA_V1 = 'autoscaling/v1';
export const HPA_V2 = 'autoscaling/v2';

/** kube's round-trip annotations (`pkg/apis/autoscaling/annotations.go`). */
export const METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
export const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
export const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
export const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';
const ROUND_TRIP = [
  METRICS_ANNOTATION,
  CURRENT_METRICS_ANNOTATION,
  CONDITIONS_ANNOTATION,
  BEHAVIOR_ANNOTATION,
];

/** kube's implicit target of a v1 object without any metric. */
const DEFAULT_CPU_UTILIZATION = 80;

function isCpuUtilization(m: Obj): boolean {
  const r = obj(m['resource']);
  const t = obj(r?.['target']);
  return (
    m['type'] === 'Resource' &&
    r?.['name'] === 'cpu' &&
    t?.['type'] === 'Utilization' &&
    t['averageUtilization'] !== undefined
  );
}

// ---- behavior (Go field names) ------------------------------------------------------------------

const RULE_FIELDS: readonly (readonly [string, string])[] = [
  ['stabilizationWindowSeconds', 'StabilizationWindowSeconds'],
  ['selectPolicy', 'SelectPolicy'],
  ['policies', 'Policies'],
  ['tolerance', 'Tolerance'],
];
const POLICY_FIELDS: readonly (readonly [string, string])[] = [
  ['type', 'Type'],
  ['value', 'Value'],
  ['periodSeconds', 'PeriodSeconds'],
];

function goNamed(v: Obj, names: readonly (readonly [string, string])[], always: readonly string[]): Obj {
  const out: Obj = {};
  for (const [json, go] of names) {
    const value = v[json];
    if (value !== undefined) out[go] = value;
    else if (always.includes(json)) out[go] = null;
  }
  return out;
}

/** Reads a Go-named object as encoding/json does (keys matched case-insensitively, null = absent). */
function jsonNamed(v: Obj, names: readonly (readonly [string, string])[]): Obj {
  const lower = new Map(Object.entries(v).map(([k, x]) => [k.toLowerCase(), x]));
  const out: Obj = {};
  for (const [json] of names) {
    const value = lower.get(json.toLowerCase());
    if (value !== undefined && value !== null) out[json] = value;
  }
  return out;
}

function rulesToGo(rules: unknown): unknown {
  const r = obj(rules);
  if (r === undefined) return null;
  const out = goNamed(r, RULE_FIELDS, ['stabilizationWindowSeconds', 'selectPolicy', 'policies']);
  const policies: unknown = r['policies'];
  if (Array.isArray(policies)) {
    out['Policies'] = policies.map((p: unknown) => (isJsonObject(p) ? goNamed(p, POLICY_FIELDS, []) : p));
  }
  return out;
}

function rulesFromGo(rules: unknown): Obj | undefined {
  const r = obj(rules);
  if (r === undefined) return undefined;
  const out = jsonNamed(r, RULE_FIELDS);
  const policies: unknown = out['policies'];
  if (Array.isArray(policies)) {
    out['policies'] = policies.map((p: unknown) => (isJsonObject(p) ? jsonNamed(p, POLICY_FIELDS) : p));
  }
  return out;
}

function behaviorFromGo(text: string): Obj | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const b = obj(parsed);
  if (b === undefined) return undefined;
  const lower = new Map(Object.entries(b).map(([k, x]) => [k.toLowerCase(), x]));
  const out = fields([
    ['scaleUp', rulesFromGo(lower.get('scaleup'))],
    ['scaleDown', rulesFromGo(lower.get('scaledown'))],
  ]);
  return Object.keys(out).length === 0 ? undefined : out;
}

// ---- whole objects ------------------------------------------------------------------------------

function parseList(text: string | undefined): Obj[] | undefined {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter(isJsonObject) : undefined;
  } catch {
    return undefined;
  }
}

function annotationsOf(o: KubeObject): Record<string, string> {
  const a = obj(o.metadata?.['annotations']);
  const out: Record<string, string> = {};
  if (a !== undefined) for (const [k, v] of Object.entries(a)) if (typeof v === 'string') out[k] = v;
  return out;
}

function withAnnotations(o: KubeObject, annotations: Record<string, string>): Obj {
  const { annotations: _a, ...meta } = o.metadata ?? {};
  return Object.keys(annotations).length === 0 ? meta : { ...meta, annotations };
}

function rest(o: KubeObject): Obj {
  const { kind: _k, apiVersion: _v, metadata: _m, spec: _s, status: _st, ...others } = o;
  return others;
}

/** The autoscaling/v1 form of an autoscaling/v2 HorizontalPodAutoscaler (a new object). */
export function hpaToV1(o: KubeObject): KubeObject {
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const annotations = annotationsOf(o);
  for (const k of ROUND_TRIP) delete annotations[k];

  const metrics = Array.isArray(spec?.['metrics']) ? spec['metrics'].filter(isJsonObject) : [];
  const cpu = metrics.find(isCpuUtilization);
  const others = metrics.filter((m) => !isCpuUtilization(m));
  if (others.length > 0) annotations[METRICS_ANNOTATION] = JSON.stringify(others.map(specToV1));
  const current = Array.isArray(status?.['currentMetrics'])
    ? status['currentMetrics'].filter(isJsonObject)
    : [];
  if (current.length > 0) annotations[CURRENT_METRICS_ANNOTATION] = JSON.stringify(current.map(statusToV1));
  const conditions = Array.isArray(status?.['conditions']) ? status['conditions'] : [];
  if (conditions.length > 0) annotations[CONDITIONS_ANNOTATION] = JSON.stringify(conditions);
  const behavior = obj(spec?.['behavior']);
  if (behavior !== undefined) {
    annotations[BEHAVIOR_ANNOTATION] = JSON.stringify({
      ScaleUp: rulesToGo(behavior['scaleUp']),
      ScaleDown: rulesToGo(behavior['scaleDown']),
    });
  }
  const cpuCurrent = current.find((m) => m['type'] === 'Resource' && obj(m['resource'])?.['name'] === 'cpu');
  const out: KubeObject = {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: HPA_V1,
    metadata: withAnnotations(o, annotations),
  };
  if (spec !== undefined) {
    const { metrics: _m, behavior: _b, ...specRest } = spec;
    out['spec'] = fields([
      ...Object.entries(specRest),
      ['targetCPUUtilizationPercentage', obj(obj(cpu?.['resource'])?.['target'])?.['averageUtilization']],
    ]);
  }
  if (status !== undefined) {
    const { currentMetrics: _c, conditions: _cond, ...statusRest } = status;
    out['status'] = fields([
      // v1's replica counts have no omitempty: Go writes them even when 0.
      ['currentReplicas', 0],
      ['desiredReplicas', 0],
      ...Object.entries(statusRest),
      [
        'currentCPUUtilizationPercentage',
        obj(obj(cpuCurrent?.['resource'])?.['current'])?.['averageUtilization'],
      ],
    ]);
  }
  return Object.assign(out, rest(o));
}

/** The autoscaling/v2 form of an autoscaling/v1 HorizontalPodAutoscaler (a new object). */
export function hpaToV2(o: KubeObject): KubeObject {
  const spec = obj(o['spec']);
  const status = obj(o['status']);
  const annotations = annotationsOf(o);
  const otherMetrics = parseList(annotations[METRICS_ANNOTATION]);
  const currentMetrics = parseList(annotations[CURRENT_METRICS_ANNOTATION]);
  const conditions = parseList(annotations[CONDITIONS_ANNOTATION]);
  const behaviorText = annotations[BEHAVIOR_ANNOTATION];
  for (const k of ROUND_TRIP) delete annotations[k];

  const out: KubeObject = {
    kind: 'HorizontalPodAutoscaler',
    apiVersion: HPA_V2,
    metadata: withAnnotations(o, annotations),
  };
  if (spec !== undefined) {
    const { targetCPUUtilizationPercentage: cpu, ...specRest } = spec;
    const metrics = (otherMetrics ?? []).map(specFromV1);
    if (cpu !== undefined) metrics.push(cpuMetric(cpu));
    if (metrics.length === 0) metrics.push(cpuMetric(DEFAULT_CPU_UTILIZATION));
    const behavior = behaviorText === undefined ? undefined : behaviorFromGo(behaviorText);
    out['spec'] = fields([...Object.entries(specRest), ['metrics', metrics], ['behavior', behavior]]);
  }
  if (status !== undefined) {
    const { currentCPUUtilizationPercentage: cpu, currentReplicas, ...statusRest } = status;
    const current =
      currentMetrics !== undefined
        ? currentMetrics.map(statusFromV1)
        : cpu !== undefined
          ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: cpu } } }]
          : undefined;
    out['status'] = fields([
      // v2's currentReplicas has omitempty (v1's has not).
      ['currentReplicas', currentReplicas === 0 ? undefined : currentReplicas],
      ...Object.entries(statusRest),
      ['currentMetrics', current],
      ['conditions', conditions],
    ]);
  }
  return Object.assign(out, rest(o));
}

function cpuMetric(utilization: unknown): Obj {
  return {
    type: 'Resource',
    resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: utilization } },
  };
}
