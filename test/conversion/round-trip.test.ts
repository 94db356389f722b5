/**
 * Round-trip properties of every converted pair (src/conversion): an object of either form taken
 * to the other and back is what it was.
 *
 * - core v1 ↔ events.k8s.io/v1 Event: both directions exact;
 * - autoscaling/v2 → v1 → v2 exact for valid v2 objects (the cpu utilization metric, when there
 *   is one, last: kube's v1 conversion puts it back last);
 * - autoscaling/v1 → v2 → v1 keeps every field of the v1 object, and v2's form is stable from
 *   then on (kube writes the current metrics annotation even when only the cpu one exists).
 * Plus kube's fixed points: the annotation names and formats, and the default cpu target.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  eventFromCore,
  eventToCore,
  hpaToV1,
  hpaToV2,
  toStorageVersion,
} from '../../src/conversion/index.js';
import type { KubeObject } from '../../src/api/object.js';

const RUNS = { numRuns: 200 };

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/);
const quantity = fc.oneof(
  fc.integer({ min: 0, max: 5000 }).map(String),
  fc.constantFrom('100m', '1Gi', '2500m'),
);
const selector = fc.option(fc.record({ matchLabels: fc.dictionary(name, name, { maxKeys: 2 }) }), {
  nil: undefined,
});
const time = fc
  .integer({ min: 1_600_000_000, max: 1_800_000_000 })
  .map((s) => new Date(s * 1000).toISOString().replace('.000', ''));

/** Drops undefined values (what JSON would carry). */
function clean<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

const meta = fc.record(
  {
    name,
    namespace: name,
    uid: fc.uuid(),
    labels: fc.dictionary(name, name, { maxKeys: 2 }),
    annotations: fc.dictionary(fc.stringMatching(/^example\.com\/[a-z]{1,6}$/), name, {
      minKeys: 1,
      maxKeys: 2,
    }),
  },
  { requiredKeys: ['name', 'namespace'] },
);

// ---- Events -------------------------------------------------------------------------------------

const objectRef = fc.record(
  {
    kind: fc.constantFrom('Pod', 'Node'),
    name,
    namespace: name,
    uid: fc.uuid(),
    apiVersion: fc.constant('v1'),
  },
  { requiredKeys: [] },
);

const eventsEvent = fc
  .record(
    {
      metadata: meta,
      eventTime: fc.option(
        time.map((t) => t.replace('Z', '.000000Z')),
        { nil: undefined },
      ),
      series: fc.option(
        fc.record({ count: fc.nat(100), lastObservedTime: time.map((t) => t.replace('Z', '.000000Z')) }),
        {
          nil: undefined,
        },
      ),
      reportingController: fc.option(name, { nil: undefined }),
      reportingInstance: fc.option(name, { nil: undefined }),
      action: fc.option(name, { nil: undefined }),
      reason: fc.option(name, { nil: undefined }),
      regarding: objectRef,
      related: fc.option(objectRef, { nil: undefined }),
      note: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
      type: fc.option(fc.constantFrom('Normal', 'Warning'), { nil: undefined }),
      deprecatedSource: fc.record({ component: name, host: name }, { requiredKeys: [] }),
      deprecatedFirstTimestamp: fc.option(time, { nil: undefined }),
      deprecatedLastTimestamp: fc.option(time, { nil: undefined }),
      deprecatedCount: fc.option(fc.nat(50), { nil: undefined }),
    },
    { requiredKeys: ['metadata', 'regarding', 'deprecatedSource'] },
  )
  .map((e) => clean({ kind: 'Event', apiVersion: 'events.k8s.io/v1', ...e }) as KubeObject);

describe('core v1 ↔ events.k8s.io/v1 Event', () => {
  it('events.k8s.io → core → events.k8s.io is exact', () => {
    fc.assert(
      fc.property(eventsEvent, (e) => {
        expect(eventFromCore(eventToCore(e))).toEqual(e);
      }),
      RUNS,
    );
  });

  it('core → events.k8s.io → core is exact', () => {
    fc.assert(
      fc.property(eventsEvent, (e) => {
        const core = eventToCore(e);
        expect(core.apiVersion).toBe('v1');
        expect(eventToCore(eventFromCore(core))).toEqual(core);
        expect(toStorageVersion(e)).toEqual(core);
      }),
      RUNS,
    );
  });
});

// ---- HorizontalPodAutoscaler --------------------------------------------------------------------

const metricId = fc.record({ name, selector }, { requiredKeys: ['name'] });
const valueTarget = fc.oneof(
  quantity.map((value) => ({ type: 'Value', value })),
  quantity.map((averageValue) => ({ type: 'AverageValue', averageValue })),
);
const resourceTarget = fc.oneof(
  fc.integer({ min: 1, max: 200 }).map((averageUtilization) => ({ type: 'Utilization', averageUtilization })),
  quantity.map((averageValue) => ({ type: 'AverageValue', averageValue })),
);
const describedObject = fc.record(
  { kind: fc.constantFrom('Service', 'Ingress'), name, apiVersion: fc.constant('v1') },
  { requiredKeys: ['kind', 'name'] },
);

/** Valid v2 metrics other than a cpu utilization one. */
const otherMetric = fc.oneof(
  fc
    .record({ describedObject, metric: metricId, target: valueTarget })
    .map((object) => ({ type: 'Object', object })),
  fc
    .record({
      metric: metricId,
      target: quantity.map((averageValue) => ({ type: 'AverageValue', averageValue })),
    })
    .map((pods) => ({ type: 'Pods', pods })),
  fc
    .record({ name: fc.constantFrom('memory', 'cpu'), target: resourceTarget })
    .filter((r) => !(r.name === 'cpu' && r.target.type === 'Utilization'))
    .map((resource) => ({ type: 'Resource', resource })),
  fc
    .record({ name: fc.constantFrom('memory', 'cpu'), container: name, target: resourceTarget })
    .map((containerResource) => ({ type: 'ContainerResource', containerResource })),
  fc.record({ metric: metricId, target: valueTarget }).map((external) => ({ type: 'External', external })),
);
const cpuMetric = fc.integer({ min: 1, max: 200 }).map((u) => ({
  type: 'Resource',
  resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: u } },
}));
const metrics = fc
  .tuple(fc.array(otherMetric, { maxLength: 3 }), fc.option(cpuMetric, { nil: undefined }))
  .map(([others, cpu]) => (cpu === undefined ? others : [...others, cpu]))
  .filter((m) => m.length > 0);

const currentValue = fc.record(
  { value: quantity, averageValue: quantity, averageUtilization: fc.nat(300) },
  { requiredKeys: [] },
);
const currentMetric = fc.oneof(
  fc
    .record({
      describedObject,
      metric: metricId,
      current: currentValue.map(({ averageUtilization: _u, ...c }) => c),
    })
    .map((object) => ({ type: 'Object', object })),
  fc
    .record({ metric: metricId, current: fc.record({ averageValue: quantity }) })
    .map((pods) => ({ type: 'Pods', pods })),
  fc
    .record({ name: fc.constantFrom('memory', 'cpu'), current: currentValue.map(({ value: _v, ...c }) => c) })
    .map((resource) => ({ type: 'Resource', resource })),
  fc
    .record({
      name: fc.constantFrom('memory', 'cpu'),
      container: name,
      current: currentValue.map(({ value: _v, ...c }) => c),
    })
    .map((containerResource) => ({ type: 'ContainerResource', containerResource })),
  fc
    .record({ metric: metricId, current: currentValue.map(({ averageUtilization: _u, ...c }) => c) })
    .map((external) => ({ type: 'External', external })),
);
const rules = fc.record(
  {
    stabilizationWindowSeconds: fc.nat(3600),
    selectPolicy: fc.constantFrom('Max', 'Min', 'Disabled'),
    policies: fc.array(
      fc.record({
        type: fc.constantFrom('Pods', 'Percent'),
        value: fc.integer({ min: 1, max: 100 }),
        periodSeconds: fc.integer({ min: 1, max: 1800 }),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  },
  { requiredKeys: [] },
);
const condition = fc.record(
  {
    type: fc.constantFrom('AbleToScale', 'ScalingActive', 'ScalingLimited'),
    status: fc.constantFrom('True', 'False', 'Unknown'),
    lastTransitionTime: time,
    reason: name,
    message: fc.string({ maxLength: 20 }),
  },
  { requiredKeys: ['type', 'status'] },
);

/** The spec fields both HPA versions share. */
const scaling = {
  scaleTargetRef: fc.record({
    kind: fc.constant('Deployment'),
    name,
    apiVersion: fc.constant('apps/v1'),
  }),
  minReplicas: fc.integer({ min: 1, max: 5 }),
  maxReplicas: fc.integer({ min: 5, max: 50 }),
};

const hpaV2 = fc
  .record(
    {
      metadata: meta,
      spec: fc.record(
        {
          ...scaling,
          metrics,
          // kube reads an empty behavior back as none (v2 defaulting never leaves it empty).
          behavior: fc
            .record({ scaleUp: rules, scaleDown: rules }, { requiredKeys: [] })
            .filter((b) => Object.keys(b).length > 0),
        },
        { requiredKeys: ['scaleTargetRef', 'maxReplicas', 'metrics'] },
      ),
      status: fc.record(
        {
          observedGeneration: fc.nat(10),
          lastScaleTime: time,
          // omitempty in v2: Go never shows a 0 there.
          currentReplicas: fc.integer({ min: 1, max: 50 }),
          desiredReplicas: fc.nat(50),
          currentMetrics: fc.array(currentMetric, { minLength: 1, maxLength: 3 }),
          conditions: fc.array(condition, { minLength: 1, maxLength: 3 }),
        },
        { requiredKeys: ['desiredReplicas'] },
      ),
    },
    { requiredKeys: ['metadata', 'spec'] },
  )
  .map((h) => clean({ kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v2', ...h }) as KubeObject);

const hpaV1 = fc
  .record(
    {
      metadata: meta,
      spec: fc.record(
        {
          ...scaling,
          targetCPUUtilizationPercentage: fc.integer({ min: 1, max: 100 }),
        },
        { requiredKeys: ['scaleTargetRef', 'maxReplicas', 'targetCPUUtilizationPercentage'] },
      ),
      status: fc.record(
        {
          observedGeneration: fc.nat(10),
          lastScaleTime: time,
          currentReplicas: fc.nat(50),
          desiredReplicas: fc.nat(50),
          currentCPUUtilizationPercentage: fc.nat(300),
        },
        { requiredKeys: ['currentReplicas', 'desiredReplicas'] },
      ),
    },
    { requiredKeys: ['metadata', 'spec'] },
  )
  .map((h) => clean({ kind: 'HorizontalPodAutoscaler', apiVersion: 'autoscaling/v1', ...h }) as KubeObject);

function withoutRoundTripAnnotations(o: KubeObject): KubeObject {
  const annotations = { ...((o.metadata?.['annotations'] as Record<string, string> | undefined) ?? {}) };
  for (const k of Object.keys(annotations))
    if (k.startsWith('autoscaling.alpha.kubernetes.io/')) delete annotations[k];
  const { annotations: _a, ...m } = o.metadata ?? {};
  return { ...o, metadata: Object.keys(annotations).length === 0 ? m : { ...m, annotations } };
}

describe('autoscaling/v2 ↔ autoscaling/v1 HorizontalPodAutoscaler', () => {
  it('v2 → v1 → v2 is exact', () => {
    fc.assert(
      fc.property(hpaV2, (h) => {
        const v1 = hpaToV1(h);
        expect(v1.apiVersion).toBe('autoscaling/v1');
        expect(v1['spec']).not.toHaveProperty('metrics');
        expect(hpaToV2(v1)).toEqual(h);
      }),
      RUNS,
    );
  });

  it('v1 → v2 → v1 keeps the v1 object, and v2 is stable from then on', () => {
    fc.assert(
      fc.property(hpaV1, (h) => {
        const v2 = hpaToV2(h);
        const back = hpaToV1(v2);
        expect(withoutRoundTripAnnotations(back)).toEqual(h);
        expect(hpaToV2(back)).toEqual(v2);
        expect(toStorageVersion(h)).toEqual(v2);
      }),
      RUNS,
    );
  });

  it('writes kube annotations: v1 metric shapes, Go-named behavior, cpu as targetCPUUtilizationPercentage', () => {
    const v2 = {
      kind: 'HorizontalPodAutoscaler',
      apiVersion: 'autoscaling/v2',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
        minReplicas: 1,
        maxReplicas: 10,
        metrics: [
          {
            type: 'Pods',
            pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } },
          },
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
          },
        ],
        behavior: {
          scaleDown: {
            stabilizationWindowSeconds: 300,
            policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }],
          },
        },
      },
      status: {
        currentReplicas: 2,
        desiredReplicas: 2,
        currentMetrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', current: { averageUtilization: 40, averageValue: '200m' } },
          },
        ],
      },
    } as KubeObject;
    const v1 = hpaToV1(v2);
    expect(v1['spec']).toEqual({
      scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
      minReplicas: 1,
      maxReplicas: 10,
      targetCPUUtilizationPercentage: 50,
    });
    expect(v1['status']).toEqual({
      currentReplicas: 2,
      desiredReplicas: 2,
      currentCPUUtilizationPercentage: 40,
    });
    const a = v1.metadata?.['annotations'] as Record<string, string>;
    expect(JSON.parse(a['autoscaling.alpha.kubernetes.io/metrics'] ?? '')).toEqual([
      { type: 'Pods', pods: { metricName: 'qps', targetAverageValue: '10' } },
    ]);
    expect(JSON.parse(a['autoscaling.alpha.kubernetes.io/current-metrics'] ?? '')).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', currentAverageUtilization: 40, currentAverageValue: '200m' },
      },
    ]);
    expect(JSON.parse(a['autoscaling.alpha.kubernetes.io/behavior'] ?? '')).toEqual({
      ScaleUp: null,
      ScaleDown: {
        StabilizationWindowSeconds: 300,
        SelectPolicy: null,
        Policies: [{ Type: 'Percent', Value: 100, PeriodSeconds: 15 }],
      },
    });
    expect(a).not.toHaveProperty('autoscaling.alpha.kubernetes.io/conditions');
  });

  it("gives a v1 object without any target kube's implicit cpu 80%", () => {
    const v2 = hpaToV2({
      kind: 'HorizontalPodAutoscaler',
      apiVersion: 'autoscaling/v1',
      metadata: { name: 'a' },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'a' }, maxReplicas: 3 },
    });
    expect(v2['spec']).toEqual({
      scaleTargetRef: { kind: 'Deployment', name: 'a' },
      maxReplicas: 3,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
        },
      ],
    });
    expect(v2.metadata).toEqual({ name: 'a' });
  });
});
