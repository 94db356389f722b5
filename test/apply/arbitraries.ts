/**
 * fast-check generators of Deployment, ConfigMap and Service manifests over a small domain
 * (few names and values), so that random sequences of writes collide on the same fields, list
 * items and map entries often. Keys are unique per list (with key defaults applied), as apply
 * requires; a port number always comes with the same protocol, so that strategic merge patch
 * (which keys ports by number alone) and apply (number and protocol) identify the same items.
 *
 * Lists, maps and structs are never empty when present. An empty value applied where a prune
 * just removed one (`containers: []`, `template: {}`) can take a second write to settle: kube
 * too compares its stored null with the applied `[]`, and Go's non-pointer structs, which are
 * never absent there, are not marked in the schema. The unit tests cover empty values.
 */
import fc from 'fast-check';

const PORT_PROTOCOL: Record<number, readonly (string | undefined)[]> = {
  80: [undefined, 'TCP'],
  443: [undefined, 'TCP'],
  53: ['UDP'],
};

const labels = fc.dictionary(fc.constantFrom('k1', 'k2', 'k3'), fc.constantFrom('v1', 'v2'), {
  minKeys: 1,
  maxKeys: 3,
});

const containerPort = fc
  .record({
    port: fc.constantFrom(80, 443, 53),
    pick: fc.nat(1),
    name: fc.option(fc.constantFrom('http', 'dns'), { nil: undefined }),
  })
  .map(({ port, pick, name }) => {
    const protocols = PORT_PROTOCOL[port] as readonly (string | undefined)[];
    const protocol = protocols[pick % protocols.length];
    return {
      containerPort: port,
      ...(protocol === undefined ? {} : { protocol }),
      ...(name === undefined ? {} : { name }),
    };
  });

const container = fc.record(
  {
    name: fc.constantFrom('a', 'b', 'c'),
    image: fc.constantFrom('i1', 'i2'),
    ports: fc.uniqueArray(containerPort, { selector: (p) => p.containerPort, minLength: 1, maxLength: 3 }),
    env: fc.uniqueArray(fc.record({ name: fc.constantFrom('E1', 'E2'), value: fc.constantFrom('x', 'y') }), {
      selector: (e) => e.name,
      minLength: 1,
      maxLength: 2,
    }),
    args: fc.subarray(['--a', '--b'], { minLength: 1 }),
  },
  { requiredKeys: ['name'] },
);

/** Options of the Deployment generator. */
export interface DeploymentOptions {
  /** Include atomic maps and structs (nodeSelector, selector), where apply and SMP differ by design. */
  readonly atomics: boolean;
}

/** Deployment manifests named `web`. */
export function deploymentManifest(
  o: DeploymentOptions = { atomics: true },
): fc.Arbitrary<Record<string, unknown>> {
  const podSpec = fc.record(
    {
      containers: fc.uniqueArray(container, { selector: (c) => c.name, minLength: 1, maxLength: 3 }),
      ...(o.atomics ? { nodeSelector: labels } : {}),
      restartPolicy: fc.constantFrom('Always', 'OnFailure'),
    },
    { requiredKeys: ['containers'] },
  );
  return fc
    .record(
      {
        labels,
        finalizers: fc.subarray(['f1', 'f2', 'f3'], { minLength: 1 }),
        replicas: fc.integer({ min: 0, max: 3 }),
        paused: fc.boolean(),
        ...(o.atomics ? { selector: fc.constant({ matchLabels: { app: 'web' } }) } : {}),
        podSpec,
        templateLabels: labels,
      },
      { requiredKeys: [] },
    )
    .map((r) => {
      const spec: Record<string, unknown> = {};
      if (r.replicas !== undefined) spec['replicas'] = r.replicas;
      if (r.paused !== undefined) spec['paused'] = r.paused;
      if (r.selector !== undefined) spec['selector'] = r.selector;
      if (r.podSpec !== undefined || r.templateLabels !== undefined) {
        spec['template'] = {
          ...(r.templateLabels === undefined ? {} : { metadata: { labels: r.templateLabels } }),
          ...(r.podSpec === undefined ? {} : { spec: r.podSpec }),
        };
      }
      return {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          name: 'web',
          namespace: 'default',
          ...(r.labels === undefined ? {} : { labels: r.labels }),
          ...(r.finalizers === undefined ? {} : { finalizers: r.finalizers }),
        },
        ...(Object.keys(spec).length === 0 ? {} : { spec }),
      };
    });
}

/** ConfigMap manifests named `cfg`. */
export const configMapManifest: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      labels,
      data: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.constantFrom('1', '2', '3'), {
        minKeys: 1,
        maxKeys: 4,
      }),
      immutable: fc.boolean(),
    },
    { requiredKeys: [] },
  )
  .map(({ labels: l, ...rest }) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cfg', namespace: 'default', ...(l === undefined ? {} : { labels: l }) },
    ...rest,
  }));

const servicePort = fc
  .record({
    port: fc.constantFrom(80, 443, 53),
    pick: fc.nat(1),
    targetPort: fc.option(fc.constantFrom(8080, 'http'), { nil: undefined }),
  })
  .map(({ port, pick, targetPort }) => {
    const protocols = PORT_PROTOCOL[port] as readonly (string | undefined)[];
    const protocol = protocols[pick % protocols.length];
    return {
      port,
      ...(protocol === undefined ? {} : { protocol }),
      ...(targetPort === undefined ? {} : { targetPort }),
    };
  });

/** Service manifests named `svc`. */
export function serviceManifest(
  o: DeploymentOptions = { atomics: true },
): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record(
      {
        ports: fc.uniqueArray(servicePort, { selector: (p) => p.port, minLength: 1, maxLength: 3 }),
        ...(o.atomics ? { selector: labels } : {}),
        type: fc.constantFrom('ClusterIP', 'NodePort'),
      },
      { requiredKeys: [] },
    )
    .map((spec) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'svc', namespace: 'default' },
      ...(Object.keys(spec).length === 0 ? {} : { spec }),
    }));
}
