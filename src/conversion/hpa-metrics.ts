/**
 * The metric shapes of kube's HorizontalPodAutoscaler conversion: autoscaling/v2's MetricSpec and
 * MetricStatus and the v1 (v2beta1-shaped) forms kube writes into the
 * `autoscaling.alpha.kubernetes.io/metrics` and `.../current-metrics` annotations, with Go's
 * struct field order. A target's `type` is not carried in the v1 form: it is read back from the
 * fields present, as kube's conversion does (see hpa.ts).
 */
import { isJsonObject, type JsonObject } from '../api/object.js';

/** A JSON object. */
export type Obj = JsonObject;

/** `v` when it is a JSON object. */
export function obj(v: unknown): Obj | undefined {
  return isJsonObject(v) ? v : undefined;
}

/** The defined entries of `pairs`, in order (Go's struct field order). */
export function fields(pairs: readonly (readonly [string, unknown])[]): Obj {
  const out: Obj = {};
  for (const [k, v] of pairs) if (v !== undefined) out[k] = v;
  return out;
}

// ---- metric specs -------------------------------------------------------------------------------

/** A v2 MetricSpec in v1's annotation form. */
export function specToV1(m: Obj): Obj {
  const type = m['type'];
  const o = obj(m['object']);
  const p = obj(m['pods']);
  const r = obj(m['resource']);
  const c = obj(m['containerResource']);
  const e = obj(m['external']);
  const target = (s: Obj | undefined): Obj => obj(s?.['target']) ?? {};
  const metric = (s: Obj | undefined): Obj => obj(s?.['metric']) ?? {};
  return fields([
    ['type', type],
    [
      'object',
      o &&
        fields([
          ['target', o['describedObject']],
          ['metricName', metric(o)['name']],
          ['targetValue', target(o)['value']],
          ['selector', metric(o)['selector']],
          ['averageValue', target(o)['averageValue']],
        ]),
    ],
    [
      'pods',
      p &&
        fields([
          ['metricName', metric(p)['name']],
          ['targetAverageValue', target(p)['averageValue']],
          ['selector', metric(p)['selector']],
        ]),
    ],
    [
      'resource',
      r &&
        fields([
          ['name', r['name']],
          ['targetAverageUtilization', target(r)['averageUtilization']],
          ['targetAverageValue', target(r)['averageValue']],
        ]),
    ],
    [
      'containerResource',
      c &&
        fields([
          ['name', c['name']],
          ['targetAverageUtilization', target(c)['averageUtilization']],
          ['targetAverageValue', target(c)['averageValue']],
          ['container', c['container']],
        ]),
    ],
    [
      'external',
      e &&
        fields([
          ['metricName', metric(e)['name']],
          ['metricSelector', metric(e)['selector']],
          ['targetValue', target(e)['value']],
          ['targetAverageValue', target(e)['averageValue']],
        ]),
    ],
  ]);
}

function metricId(name: unknown, selector: unknown): Obj {
  return fields([
    ['name', name],
    ['selector', selector],
  ]);
}

/** A v1 annotation MetricSpec in v2's form. */
export function specFromV1(m: Obj): Obj {
  const o = obj(m['object']);
  const p = obj(m['pods']);
  const r = obj(m['resource']);
  const c = obj(m['containerResource']);
  const e = obj(m['external']);
  const utilizationTarget = (s: Obj): Obj =>
    s['targetAverageUtilization'] !== undefined
      ? fields([
          ['type', 'Utilization'],
          ['averageUtilization', s['targetAverageUtilization']],
          ['averageValue', s['targetAverageValue']],
        ])
      : fields([
          ['type', 'AverageValue'],
          ['averageValue', s['targetAverageValue']],
        ]);
  return fields([
    ['type', m['type']],
    [
      'object',
      o &&
        fields([
          ['metric', metricId(o['metricName'], o['selector'])],
          [
            'target',
            fields([
              ['type', o['averageValue'] === undefined ? 'Value' : 'AverageValue'],
              ['value', o['targetValue']],
              ['averageValue', o['averageValue']],
            ]),
          ],
          ['describedObject', o['target']],
        ]),
    ],
    [
      'pods',
      p &&
        fields([
          ['metric', metricId(p['metricName'], p['selector'])],
          [
            'target',
            fields([
              ['type', 'AverageValue'],
              ['averageValue', p['targetAverageValue']],
            ]),
          ],
        ]),
    ],
    [
      'resource',
      r &&
        fields([
          ['name', r['name']],
          ['target', utilizationTarget(r)],
        ]),
    ],
    [
      'containerResource',
      c &&
        fields([
          ['name', c['name']],
          ['target', utilizationTarget(c)],
          ['container', c['container']],
        ]),
    ],
    [
      'external',
      e &&
        fields([
          ['metric', metricId(e['metricName'], e['metricSelector'])],
          [
            'target',
            fields([
              ['type', e['targetAverageValue'] === undefined ? 'Value' : 'AverageValue'],
              ['value', e['targetValue']],
              ['averageValue', e['targetAverageValue']],
            ]),
          ],
        ]),
    ],
  ]);
}

// ---- metric statuses ----------------------------------------------------------------------------

/** A v2 MetricStatus in v1's annotation form. */
export function statusToV1(m: Obj): Obj {
  const o = obj(m['object']);
  const p = obj(m['pods']);
  const r = obj(m['resource']);
  const c = obj(m['containerResource']);
  const e = obj(m['external']);
  const current = (s: Obj | undefined): Obj => obj(s?.['current']) ?? {};
  const metric = (s: Obj | undefined): Obj => obj(s?.['metric']) ?? {};
  return fields([
    ['type', m['type']],
    [
      'object',
      o &&
        fields([
          ['target', o['describedObject']],
          ['metricName', metric(o)['name']],
          ['currentValue', current(o)['value']],
          ['selector', metric(o)['selector']],
          ['averageValue', current(o)['averageValue']],
        ]),
    ],
    [
      'pods',
      p &&
        fields([
          ['metricName', metric(p)['name']],
          ['currentAverageValue', current(p)['averageValue']],
          ['selector', metric(p)['selector']],
        ]),
    ],
    [
      'resource',
      r &&
        fields([
          ['name', r['name']],
          ['currentAverageUtilization', current(r)['averageUtilization']],
          ['currentAverageValue', current(r)['averageValue']],
        ]),
    ],
    [
      'containerResource',
      c &&
        fields([
          ['name', c['name']],
          ['currentAverageUtilization', current(c)['averageUtilization']],
          ['currentAverageValue', current(c)['averageValue']],
          ['container', c['container']],
        ]),
    ],
    [
      'external',
      e &&
        fields([
          ['metricName', metric(e)['name']],
          ['metricSelector', metric(e)['selector']],
          ['currentValue', current(e)['value']],
          ['currentAverageValue', current(e)['averageValue']],
        ]),
    ],
  ]);
}

/** A v1 annotation MetricStatus in v2's form. */
export function statusFromV1(m: Obj): Obj {
  const o = obj(m['object']);
  const p = obj(m['pods']);
  const r = obj(m['resource']);
  const c = obj(m['containerResource']);
  const e = obj(m['external']);
  const utilization = (s: Obj): Obj =>
    fields([
      ['averageValue', s['currentAverageValue']],
      ['averageUtilization', s['currentAverageUtilization']],
    ]);
  return fields([
    ['type', m['type']],
    [
      'object',
      o &&
        fields([
          ['metric', metricId(o['metricName'], o['selector'])],
          [
            'current',
            fields([
              ['value', o['currentValue']],
              ['averageValue', o['averageValue']],
            ]),
          ],
          ['describedObject', o['target']],
        ]),
    ],
    [
      'pods',
      p &&
        fields([
          ['metric', metricId(p['metricName'], p['selector'])],
          ['current', fields([['averageValue', p['currentAverageValue']]])],
        ]),
    ],
    [
      'resource',
      r &&
        fields([
          ['name', r['name']],
          ['current', utilization(r)],
        ]),
    ],
    [
      'containerResource',
      c &&
        fields([
          ['name', c['name']],
          ['current', utilization(c)],
          ['container', c['container']],
        ]),
    ],
    [
      'external',
      e &&
        fields([
          ['metric', metricId(e['metricName'], e['metricSelector'])],
          [
            'current',
            fields([
              ['value', e['currentValue']],
              ['averageValue', e['currentAverageValue']],
            ]),
          ],
        ]),
    ],
  ]);
}
