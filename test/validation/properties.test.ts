import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { validateObject } from '../../src/validation/index.js';
import { defaultObject } from '../../src/defaults/index.js';
import { prepareForCreate } from '../../src/defaults/prepare.js';

/** Every kind that has a defaulter, and a few that do not. */
const KINDS: readonly (readonly [string, string])[] = [
  ['', 'Pod'],
  ['', 'PodTemplate'],
  ['', 'ReplicationController'],
  ['', 'Service'],
  ['', 'Secret'],
  ['', 'ConfigMap'],
  ['', 'Namespace'],
  ['', 'PersistentVolume'],
  ['', 'PersistentVolumeClaim'],
  ['', 'Endpoints'],
  ['', 'LimitRange'],
  ['', 'ResourceQuota'],
  ['', 'Node'],
  ['', 'Event'],
  ['apps', 'Deployment'],
  ['apps', 'ReplicaSet'],
  ['apps', 'DaemonSet'],
  ['apps', 'StatefulSet'],
  ['batch', 'Job'],
  ['batch', 'CronJob'],
  ['networking.k8s.io', 'NetworkPolicy'],
  ['networking.k8s.io', 'Ingress'],
  ['networking.k8s.io', 'IngressClass'],
  ['rbac.authorization.k8s.io', 'RoleBinding'],
  ['rbac.authorization.k8s.io', 'ClusterRole'],
  ['storage.k8s.io', 'StorageClass'],
  ['storage.k8s.io', 'CSIDriver'],
  ['scheduling.k8s.io', 'PriorityClass'],
  ['autoscaling', 'HorizontalPodAutoscaler'],
  ['admissionregistration.k8s.io', 'MutatingWebhookConfiguration'],
  ['apiextensions.k8s.io', 'CustomResourceDefinition'],
  ['events.k8s.io', 'Event'],
  ['discovery.k8s.io', 'EndpointSlice'],
  ['policy', 'PodDisruptionBudget'],
];

const dnsLabel = fc.stringMatching(/^[a-z]([a-z0-9-]{0,10}[a-z0-9])?$/);
const image = fc.constantFrom(
  'nginx',
  'nginx:1.27',
  'busybox:latest',
  'registry.local:5000/app:v1',
  'alpine@sha256:' + 'a'.repeat(64),
);
const quantity = fc.oneof(
  fc.constantFrom('100m', '0.5', '1', '2Gi', '1024Mi', '1.5', '1500m', '64Mi', '1e3'),
  fc.integer({ min: 1, max: 64 }),
);

/** Containers that are valid once defaulted, with unique names. */
const containers = fc.uniqueArray(dnsLabel, { minLength: 1, maxLength: 3 }).chain((names) =>
  fc.tuple(
    ...names.map((name) =>
      fc.record(
        {
          name: fc.constant(name),
          image,
          ports: fc
            .uniqueArray(fc.integer({ min: 1, max: 65535 }), { maxLength: 2 })
            .map((ps) => ps.map((containerPort) => ({ containerPort }))),
          resources: fc.record(
            { limits: fc.record({ cpu: quantity, memory: quantity }, { requiredKeys: [] }) },
            { requiredKeys: [] },
          ),
          readinessProbe: fc.record({ httpGet: fc.record({ port: fc.integer({ min: 1, max: 65535 }) }) }),
          env: fc.array(
            fc.record({ name: fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,8}$/), value: fc.string() }),
            { maxLength: 2 },
          ),
        },
        { requiredKeys: ['name', 'image'] },
      ),
    ),
  ),
);

const podSpec = fc.record(
  {
    containers,
    restartPolicy: fc.constantFrom('Always', undefined),
    terminationGracePeriodSeconds: fc.option(fc.integer({ min: 0, max: 600 }), { nil: undefined }),
    volumes: fc.constant([{ name: 'scratch' }, { name: 'cfg', configMap: { name: 'cfg' } }]),
  },
  { requiredKeys: ['containers'] },
);

const labels = fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.stringMatching(/^[a-z0-9]{0,8}$/), {
  maxKeys: 3,
});

/** Objects that kube-apiserver accepts after defaulting, with their group and kind. */
const validObjects = fc.oneof(
  fc
    .tuple(dnsLabel, podSpec)
    .map(([name, spec]) => ['', 'Pod', { metadata: { name, namespace: 'default' }, spec }] as const),
  fc.tuple(dnsLabel, podSpec, labels, fc.integer({ min: 0, max: 10 })).map(
    ([name, spec, extra, replicas]) =>
      [
        'apps',
        'Deployment',
        {
          metadata: { name, namespace: 'default' },
          spec: {
            replicas,
            selector: { matchLabels: { app: name } },
            template: { metadata: { labels: { ...extra, app: name } }, spec },
          },
        },
      ] as const,
  ),
  fc.tuple(dnsLabel, podSpec).map(
    ([name, spec]) =>
      [
        'batch',
        'Job',
        {
          metadata: { name, namespace: 'default' },
          spec: { template: { spec: { ...spec, restartPolicy: 'Never' } } },
        },
      ] as const,
  ),
  fc.tuple(dnsLabel, fc.uniqueArray(fc.integer({ min: 1, max: 65535 }), { minLength: 1, maxLength: 3 })).map(
    ([name, ports]) =>
      [
        '',
        'Service',
        {
          metadata: { name, namespace: 'default' },
          spec: { selector: { app: name }, ports: ports.map((port, i) => ({ name: `p${i}`, port })) },
        },
      ] as const,
  ),
  fc
    .tuple(
      dnsLabel,
      fc.dictionary(
        fc.stringMatching(/^[a-zA-Z0-9._-]{1,10}$/).filter((k) => k !== '.' && !k.startsWith('..')),
        fc.string(),
      ),
    )
    .map(([name, data]) => ['', 'ConfigMap', { metadata: { name, namespace: 'default' }, data }] as const),
  fc
    .tuple(dnsLabel, fc.dictionary(fc.stringMatching(/^[a-z0-9]{1,8}$/), fc.string()))
    .map(
      ([name, stringData]) =>
        ['', 'Secret', { metadata: { name, namespace: 'default' }, stringData }] as const,
    ),
);

describe('defaulting and validation properties', () => {
  it('defaulting is idempotent and never throws, whatever the body', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...KINDS),
        fc.jsonValue(),
        fc.jsonValue(),
        fc.oneof(fc.constant({ name: 'x' }), fc.jsonValue()),
        ([group, kind], spec, extra, metadata) => {
          const once: Record<string, unknown> = {
            metadata,
            spec,
            extra,
            webhooks: [spec],
            subsets: [spec],
            rules: [spec],
          };
          defaultObject(group, kind, once);
          const twice = structuredClone(once);
          defaultObject(group, kind, twice);
          expect(twice).toEqual(once);
          // Validation must not throw on malformed bodies either.
          expect(Array.isArray(validateObject(group, kind, once))).toBe(true);
          expect(Array.isArray(validateObject(group, kind, once, once))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('defaulting is idempotent on well-formed objects', () => {
    fc.assert(
      fc.property(validObjects, ([group, kind, obj]) => {
        const once = structuredClone(obj) as Record<string, unknown>;
        defaultObject(group, kind, once);
        const twice = structuredClone(once);
        defaultObject(group, kind, twice);
        expect(twice).toEqual(once);
      }),
      { numRuns: 200 },
    );
  });

  it('defaulted valid objects validate, on create and as an unchanged update', () => {
    fc.assert(
      fc.property(validObjects, ([group, kind, obj]) => {
        const o = structuredClone(obj) as Record<string, unknown>;
        defaultObject(group, kind, o);
        (o['metadata'] as Record<string, unknown>)['uid'] = 'uid-1';
        const errs = [...prepareForCreate(group, kind, o), ...validateObject(group, kind, o)];
        expect(errs).toEqual([]);
        expect(validateObject(group, kind, structuredClone(o), o)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});
