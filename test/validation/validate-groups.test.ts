import { describe, expect, it } from 'vitest';
import { validateObject } from '../../src/validation/index.js';
import { prepareForCreate, prepareForUpdate } from '../../src/defaults/prepare.js';
import { clone, createErrors, defaulted, expectError, expectValid, updateErrors } from './helpers.js';
import type { FieldError } from '../../src/validation/field-error.js';

const ns = { name: 'x', namespace: 'default' };

describe('networking', () => {
  const ingress = (paths: unknown[]): Record<string, unknown> => ({
    metadata: ns,
    spec: { rules: [{ host: 'shop.example.com', http: { paths } }] },
  });
  const backend = { service: { name: 'web', port: { number: 80 } } };

  it('Ingress: pathType is required and must be known', () => {
    expectValid(
      createErrors('networking.k8s.io', 'Ingress', ingress([{ path: '/', pathType: 'Prefix', backend }])),
    );
    expect(
      expectError(
        createErrors('networking.k8s.io', 'Ingress', ingress([{ path: '/', backend }])),
        'spec.rules[0].http.paths[0].pathType',
        'FieldValueRequired',
      ).message,
    ).toBe('Required value: pathType must be specified');
    expect(
      expectError(
        createErrors('networking.k8s.io', 'Ingress', ingress([{ path: '/', pathType: 'Glob', backend }])),
        'spec.rules[0].http.paths[0].pathType',
        'FieldValueNotSupported',
      ).message,
    ).toBe('Unsupported value: "Glob": supported values: "Exact", "ImplementationSpecific", "Prefix"');
  });

  it('Ingress: paths, hosts and backends', () => {
    const errs = createErrors('networking.k8s.io', 'Ingress', {
      metadata: ns,
      spec: {
        rules: [
          {
            host: '10.0.0.1',
            http: {
              paths: [{ path: 'api', pathType: 'Exact', backend: { service: { name: 'web', port: {} } } }],
            },
          },
          { host: 'ok.example.com', http: { paths: [] } },
        ],
      },
    });
    expectError(errs, 'spec.rules[0].host', 'FieldValueInvalid');
    expect(expectError(errs, 'spec.rules[0].http.paths[0].path', 'FieldValueInvalid').message).toBe(
      'Invalid value: "api": must be an absolute path',
    );
    expect(expectError(errs, 'spec.rules[0].http.paths[0].backend', 'FieldValueRequired').message).toBe(
      'Required value: port name or number is required',
    );
    expectError(errs, 'spec.rules[1].http.paths', 'FieldValueRequired');
    expect(
      expectError(
        createErrors('networking.k8s.io', 'Ingress', { metadata: ns, spec: {} }),
        'spec',
        'FieldValueInvalid',
      ).message,
    ).toContain('either `defaultBackend` or `rules` must be specified');
  });

  it('NetworkPolicy and IngressClass', () => {
    expectValid(
      createErrors('networking.k8s.io', 'NetworkPolicy', {
        metadata: ns,
        spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' } }] }] },
      }),
    );
    expectError(
      createErrors('networking.k8s.io', 'NetworkPolicy', {
        metadata: ns,
        spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0' } }] }] },
      }),
      'spec.ingress[0].from[0].ipBlock.cidr',
      'FieldValueInvalid',
    );
    expectValid(
      createErrors('networking.k8s.io', 'IngressClass', {
        metadata: { name: 'nginx' },
        spec: { controller: 'k8s.io/ingress-nginx' },
      }),
    );
    expectError(
      createErrors('networking.k8s.io', 'IngressClass', {
        metadata: { name: 'nginx' },
        spec: { controller: 'nginx' },
      }),
      'spec.controller',
      'FieldValueInvalid',
    );
  });
});

describe('policy, rbac, coordination', () => {
  it('PodDisruptionBudget: minAvailable and maxUnavailable are exclusive', () => {
    expectValid(
      createErrors('policy', 'PodDisruptionBudget', {
        metadata: ns,
        spec: { minAvailable: '50%', selector: {} },
      }),
    );
    const errs = createErrors('policy', 'PodDisruptionBudget', {
      metadata: ns,
      spec: { minAvailable: 1, maxUnavailable: 1 },
    });
    expect(expectError(errs, 'spec', 'FieldValueInvalid').message).toMatch(
      /minAvailable and maxUnavailable cannot be both set$/,
    );
    expectError(
      createErrors('policy', 'PodDisruptionBudget', { metadata: ns, spec: { maxUnavailable: '120%' } }),
      'spec.maxUnavailable',
      'FieldValueInvalid',
    );
  });

  it('Role: verbs, API groups and resources required; no URLs', () => {
    const errs = createErrors('rbac.authorization.k8s.io', 'Role', {
      metadata: ns,
      rules: [{ resources: ['pods'] }, { verbs: ['get'], nonResourceURLs: ['/healthz'] }],
    });
    expect(expectError(errs, 'rules[0].verbs', 'FieldValueRequired').message).toBe(
      'Required value: verbs must contain at least one value',
    );
    expectError(errs, 'rules[0].apiGroups', 'FieldValueRequired');
    expectError(errs, 'rules[1].nonResourceURLs', 'FieldValueInvalid');
    expectValid(
      createErrors('rbac.authorization.k8s.io', 'ClusterRole', {
        metadata: { name: 'system:probe' },
        rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      }),
    );
  });

  it('RoleBinding: roleRef required and immutable', () => {
    const rb = {
      metadata: ns,
      roleRef: { kind: 'Role', name: 'reader' },
      subjects: [{ kind: 'User', name: 'jane' }],
    };
    expectValid(createErrors('rbac.authorization.k8s.io', 'RoleBinding', rb));
    const none = createErrors('rbac.authorization.k8s.io', 'RoleBinding', { metadata: ns });
    expectError(none, 'roleRef.name', 'FieldValueRequired');
    expectError(none, 'roleRef.kind', 'FieldValueNotSupported');
    const stored = defaulted('rbac.authorization.k8s.io', 'RoleBinding', rb);
    const changed = {
      ...clone(stored),
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'writer' },
    };
    expect(
      expectError(
        updateErrors('rbac.authorization.k8s.io', 'RoleBinding', changed, stored),
        'roleRef',
        'FieldValueInvalid',
      ).message,
    ).toMatch(/cannot change roleRef$/);
    const crb = createErrors('rbac.authorization.k8s.io', 'ClusterRoleBinding', {
      metadata: { name: 'b' },
      roleRef: { kind: 'Role', name: 'r' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa' }],
    });
    expectError(crb, 'roleRef.kind', 'FieldValueNotSupported');
    expectError(crb, 'subjects[0].namespace', 'FieldValueRequired');
  });

  it('Lease: positive duration', () => {
    expectValid(
      createErrors('coordination.k8s.io', 'Lease', {
        metadata: ns,
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15 },
      }),
    );
    expectError(
      createErrors('coordination.k8s.io', 'Lease', { metadata: ns, spec: { leaseDurationSeconds: 0 } }),
      'spec.leaseDurationSeconds',
      'FieldValueInvalid',
    );
  });
});

describe('apiextensions, certificates, admission', () => {
  const crd = (spec: Record<string, unknown> = {}): Record<string, unknown> => ({
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
      ...spec,
    },
  });

  it('CustomResourceDefinition: scope, schema and one storage version required', () => {
    expectValid(createErrors('apiextensions.k8s.io', 'CustomResourceDefinition', crd()));
    expectError(
      createErrors('apiextensions.k8s.io', 'CustomResourceDefinition', crd({ scope: undefined })),
      'spec.scope',
      'FieldValueRequired',
    );
    expect(
      expectError(
        createErrors(
          'apiextensions.k8s.io',
          'CustomResourceDefinition',
          crd({ versions: [{ name: 'v1', served: true, storage: true }] }),
        ),
        'spec.versions[0].schema.openAPIV3Schema',
        'FieldValueRequired',
      ).message,
    ).toBe('Required value: schemas are required');
    const two = crd({
      versions: [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
      ],
    });
    expect(
      expectError(
        createErrors('apiextensions.k8s.io', 'CustomResourceDefinition', two),
        'spec.versions',
        'FieldValueInvalid',
      ).message,
    ).toMatch(/must have exactly one version marked as storage version$/);
    expectError(
      createErrors('apiextensions.k8s.io', 'CustomResourceDefinition', {
        ...crd(),
        metadata: { name: 'wrong' },
      }),
      'metadata.name',
      'FieldValueInvalid',
    );
  });

  it('CustomResourceDefinition: status records the storage version on create', () => {
    const o = defaulted('apiextensions.k8s.io', 'CustomResourceDefinition', crd());
    prepareForCreate('apiextensions.k8s.io', 'CustomResourceDefinition', o);
    expect(o['status']).toEqual({ acceptedNames: { kind: '', plural: '' }, storedVersions: ['v1'] });
  });

  it('CertificateSigningRequest: signerName and usages required', () => {
    const pem = Buffer.from(
      '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n',
    ).toString('base64');
    expectValid(
      createErrors('certificates.k8s.io', 'CertificateSigningRequest', {
        metadata: { name: 'Any Name' },
        spec: { request: pem, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
      }),
    );
    const errs = createErrors('certificates.k8s.io', 'CertificateSigningRequest', {
      metadata: { name: 'c' },
      spec: { request: pem, usages: ['flying'] },
    });
    expectError(errs, 'spec.signerName', 'FieldValueRequired');
    expectError(errs, 'spec.usages[0]', 'FieldValueNotSupported');
    expectError(
      createErrors('certificates.k8s.io', 'CertificateSigningRequest', {
        metadata: { name: 'c' },
        spec: { request: pem, signerName: 'a.io/b' },
      }),
      'spec.usages',
      'FieldValueRequired',
    );
  });

  it('CertificateSigningRequest: a request that is no PEM CSR shows its bytes as Go does', () => {
    // kube-apiserver v1.33.13's messages for these three requests.
    const message = (request: unknown): string | undefined => {
      const spec = { signerName: 'example.com/x', usages: ['digital signature'] };
      const errs = createErrors('certificates.k8s.io', 'CertificateSigningRequest', {
        metadata: { name: 'c' },
        spec: request === undefined ? spec : { ...spec, request },
      });
      return expectError(errs, 'spec.request', 'FieldValueInvalid').message;
    };
    const detail = ': PEM block type must be CERTIFICATE REQUEST';
    expect(message(Buffer.from('hello\n').toString('base64'))).toBe(
      `Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f, 0xa}${detail}`,
    );
    expect(message('')).toBe(`Invalid value: []byte{}${detail}`);
    expect(message(undefined)).toBe(`Invalid value: []byte(nil)${detail}`);
  });

  it('flowcontrol: levels and schemas the server could not run are refused with kube’s messages', () => {
    const level = (spec: unknown, name = 'l'): ReturnType<typeof createErrors> =>
      createErrors('flowcontrol.apiserver.k8s.io', 'PriorityLevelConfiguration', {
        metadata: { name },
        spec,
      });
    const limited = (limitResponse: unknown, extra: Record<string, unknown> = {}): unknown => ({
      type: 'Limited',
      limited: { limitResponse, ...extra },
    });
    expectValid(level(limited({ type: 'Queue', queuing: {} })));
    expectValid(level({ type: 'Exempt', exempt: {} }, 'exempt'));
    const message = (errs: ReturnType<typeof createErrors>, field: string, reason: FieldError['reason']) =>
      expectError(errs, field, reason).message;
    // kube-apiserver v1.33.13's answers.
    expect(message(level({ type: 'Foo' }), 'spec.type', 'FieldValueNotSupported')).toBe(
      'Unsupported value: "Foo": supported values: "Exempt", "Limited"',
    );
    expect(message(level({ type: 'Limited' }), 'spec.limited', 'FieldValueRequired')).toBe(
      'Required value: must not be empty when type is Limited',
    );
    expect(
      message(level(limited({ type: 'Bar' })), 'spec.limited.limitResponse.type', 'FieldValueNotSupported'),
    ).toBe('Unsupported value: "Bar": supported values: "Queue", "Reject"');
    expect(
      message(level(limited({ type: 'Queue' })), 'spec.limited.limitResponse.queuing', 'FieldValueRequired'),
    ).toBe('Required value: must not be empty if limited.limitResponse.type is Limited');
    expect(
      message(
        level(limited({ type: 'Reject', queuing: { queues: 4 } })),
        'spec.limited.limitResponse.queuing',
        'FieldValueForbidden',
      ),
    ).toBe('Forbidden: must be nil if limited.limitResponse.type is not Limited');
    expect(
      message(
        level(limited({ type: 'Queue', queuing: { queues: 4, handSize: 5 } })),
        'spec.limited.limitResponse.queuing.handSize',
        'FieldValueInvalid',
      ),
    ).toBe('Invalid value: 5: should not be greater than queues (4)');
    const bounds = level(limited({ type: 'Reject' }, { lendablePercent: 101, nominalConcurrencyShares: -1 }));
    expect(message(bounds, 'spec.limited.nominalConcurrencyShares', 'FieldValueInvalid')).toBe(
      'Invalid value: -1: must be a non-negative integer',
    );
    expect(message(bounds, 'spec.limited.lendablePercent', 'FieldValueInvalid')).toBe(
      'Invalid value: 101: must be between 0 and 100, inclusive',
    );
    const schema = createErrors('flowcontrol.apiserver.k8s.io', 'FlowSchema', {
      metadata: { name: 'f' },
      spec: { priorityLevelConfiguration: { name: '' } },
    });
    expect(message(schema, 'spec.priorityLevelConfiguration.name', 'FieldValueRequired')).toBe(
      'Required value: must reference a priority level',
    );
  });

  it('webhooks: sideEffects and admissionReviewVersions required in v1', () => {
    const hook = {
      name: 'check.example.com',
      clientConfig: { url: 'https://hooks.example.com/check' },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
    };
    const errs = createErrors('admissionregistration.k8s.io', 'ValidatingWebhookConfiguration', {
      metadata: { name: 'c' },
      webhooks: [hook],
    });
    expect(expectError(errs, 'webhooks[0].sideEffects', 'FieldValueRequired').message).toBe(
      'Required value: must specify one of None, NoneOnDryRun',
    );
    expectError(errs, 'webhooks[0].admissionReviewVersions', 'FieldValueRequired');
    expectValid(
      createErrors('admissionregistration.k8s.io', 'MutatingWebhookConfiguration', {
        metadata: { name: 'c' },
        webhooks: [{ ...hook, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
      }),
    );
    const bad = createErrors('admissionregistration.k8s.io', 'ValidatingWebhookConfiguration', {
      metadata: { name: 'c' },
      webhooks: [
        {
          ...hook,
          name: 'short',
          sideEffects: 'Some',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 31,
          clientConfig: { url: 'http://x' },
        },
      ],
    });
    expectError(bad, 'webhooks[0].name', 'FieldValueInvalid');
    expectError(bad, 'webhooks[0].sideEffects', 'FieldValueNotSupported');
    expectError(bad, 'webhooks[0].timeoutSeconds', 'FieldValueInvalid');
    expectError(bad, 'webhooks[0].clientConfig.url', 'FieldValueInvalid');
  });
});

describe('events.k8s.io Event', () => {
  const event = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    metadata: { name: 'web.1', namespace: 'default' },
    eventTime: '2024-05-01T10:00:00.000000Z',
    type: 'Normal',
    reason: 'Started',
    action: 'Start',
    reportingController: 'example.com/controller',
    reportingInstance: 'controller-1',
    regarding: { kind: 'Pod', name: 'web', namespace: 'default' },
    ...extra,
  });

  it('requires the reporting fields and forbids deprecated ones on create', () => {
    expectValid(createErrors('events.k8s.io', 'Event', event()));
    const errs = createErrors(
      'events.k8s.io',
      'Event',
      event({
        reportingController: '',
        action: '',
        deprecatedCount: 3,
        deprecatedSource: { component: 'kubelet' },
      }),
    );
    expectError(errs, 'reportingController', 'FieldValueRequired');
    expectError(errs, 'action', 'FieldValueRequired');
    expect(expectError(errs, 'count', 'FieldValueInvalid').message).toBe(
      'Invalid value: "": needs to be unset',
    );
    expectError(errs, 'source', 'FieldValueInvalid');
    const noTime = createErrors('events.k8s.io', 'Event', event({ eventTime: undefined }));
    expectError(noTime, 'eventTime', 'FieldValueRequired');
  });

  it('keeps the event immutable except its series', () => {
    const stored = defaulted('events.k8s.io', 'Event', event());
    expectError(
      updateErrors('events.k8s.io', 'Event', { ...clone(stored), reason: 'Other' }, stored),
      'reason',
      'FieldValueInvalid',
    );
    expectValid(
      updateErrors(
        'events.k8s.io',
        'Event',
        { ...clone(stored), series: { count: 2, lastObservedTime: '2024-05-01T10:01:00.000000Z' } },
        stored,
      ),
    );
  });
});

describe('infrastructure kinds', () => {
  it('PriorityClass: reserved names, user maximum, immutable value', () => {
    expectValid(
      createErrors('scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'high' }, value: 1000 }),
    );
    expectError(
      createErrors('scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'high' }, value: 2000000000 }),
      'value',
      'FieldValueForbidden',
    );
    expectError(
      createErrors('scheduling.k8s.io', 'PriorityClass', { metadata: { name: 'system-mine' }, value: 1 }),
      'metadata.name',
      'FieldValueForbidden',
    );
    const stored = defaulted('scheduling.k8s.io', 'PriorityClass', {
      metadata: { name: 'high' },
      value: 1000,
    });
    expectError(
      updateErrors('scheduling.k8s.io', 'PriorityClass', { ...clone(stored), value: 5 }, stored),
      'value',
      'FieldValueForbidden',
    );
  });

  it('StorageClass, RuntimeClass, EndpointSlice, HPA', () => {
    expectValid(
      createErrors('storage.k8s.io', 'StorageClass', {
        metadata: { name: 'fast' },
        provisioner: 'kubernetes.io/no-provisioner',
      }),
    );
    expectError(
      createErrors('storage.k8s.io', 'StorageClass', { metadata: { name: 'fast' } }),
      'provisioner',
      'FieldValueRequired',
    );
    expectValid(
      createErrors('node.k8s.io', 'RuntimeClass', { metadata: { name: 'gvisor' }, handler: 'runsc' }),
    );
    expectError(
      createErrors('node.k8s.io', 'RuntimeClass', { metadata: { name: 'gvisor' }, handler: 'Run SC' }),
      'handler',
      'FieldValueInvalid',
    );
    expectValid(
      createErrors('discovery.k8s.io', 'EndpointSlice', {
        metadata: ns,
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.1'] }],
        ports: [{ port: 80 }],
      }),
    );
    expectError(
      createErrors('discovery.k8s.io', 'EndpointSlice', { metadata: ns, addressType: 'IPv5' }),
      'addressType',
      'FieldValueNotSupported',
    );
    const hpa = {
      apiVersion: 'autoscaling/v2',
      metadata: ns,
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 },
    };
    expectValid(createErrors('autoscaling', 'HorizontalPodAutoscaler', hpa));
    expectError(
      createErrors('autoscaling', 'HorizontalPodAutoscaler', {
        ...hpa,
        spec: { ...hpa.spec, minReplicas: 6 },
      }),
      'spec.maxReplicas',
      'FieldValueInvalid',
    );
  });
});

describe('Service IP preparation', () => {
  const svc = (spec: Record<string, unknown>): Record<string, unknown> =>
    defaulted('', 'Service', { metadata: ns, spec });

  it('defaults SingleStack and the cluster family, and syncs clusterIPs', () => {
    const s = svc({ ports: [{ port: 80 }], clusterIP: '10.96.0.10' });
    expect(prepareForCreate('', 'Service', s)).toEqual([]);
    expect(s['spec']).toMatchObject({
      ipFamilyPolicy: 'SingleStack',
      ipFamilies: ['IPv4'],
      clusterIPs: ['10.96.0.10'],
    });
    expectValid(validateObject('', 'Service', s));
  });

  it('gives headless services without a selector both families; ExternalName none', () => {
    const h = svc({ clusterIP: 'None' });
    prepareForCreate('', 'Service', h);
    expect(h['spec']).toMatchObject({
      ipFamilyPolicy: 'RequireDualStack',
      ipFamilies: ['IPv4', 'IPv6'],
      clusterIPs: ['None'],
    });
    const e = svc({ type: 'ExternalName', externalName: 'db.example.com' });
    prepareForCreate('', 'Service', e);
    expect(e['spec']).not.toHaveProperty('ipFamilies');
  });

  it('rejects dual-stack requirements on a single-stack cluster', () => {
    const s = svc({ ports: [{ port: 80 }], ipFamilyPolicy: 'RequireDualStack' });
    expectError(prepareForCreate('', 'Service', s), 'spec.ipFamilyPolicy', 'FieldValueInvalid');
    const dual = svc({ ports: [{ port: 80 }], ipFamilyPolicy: 'RequireDualStack' });
    expect(prepareForCreate('', 'Service', dual, { serviceIPFamilies: ['IPv4', 'IPv6'] })).toEqual([]);
    expect((dual['spec'] as { ipFamilies: unknown }).ipFamilies).toEqual(['IPv4', 'IPv6']);
  });

  it('keeps allocated values when a replacement omits them', () => {
    const stored = svc({ type: 'NodePort', ports: [{ name: 'http', port: 80 }] });
    Object.assign(stored['spec'] as object, {
      clusterIP: '10.96.0.20',
      clusterIPs: ['10.96.0.20'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
    });
    (stored['spec'] as { ports: Record<string, unknown>[] }).ports[0]!['nodePort'] = 30080;
    const replacement = svc({ type: 'NodePort', ports: [{ name: 'http', port: 80 }] });
    expect(prepareForUpdate('', 'Service', replacement, stored)).toEqual([]);
    expect(replacement['spec']).toMatchObject({
      clusterIP: '10.96.0.20',
      clusterIPs: ['10.96.0.20'],
      ipFamilyPolicy: 'SingleStack',
      ports: [{ nodePort: 30080 }],
    });
    expectValid(validateObject('', 'Service', replacement, stored));
  });

  it('Namespace gets the kubernetes finalizer on create and keeps it on update', () => {
    const n = defaulted('', 'Namespace', { metadata: { name: 'shop' } });
    prepareForCreate('', 'Namespace', n);
    expect(n['spec']).toEqual({ finalizers: ['kubernetes'] });
    const next = { metadata: { name: 'shop' }, spec: { finalizers: [] } };
    prepareForUpdate('', 'Namespace', next, n);
    expect(next.spec).toEqual({ finalizers: ['kubernetes'] });
  });

  it('Pod status: Pending with its QoS class', () => {
    const classes: [Record<string, unknown>, string][] = [
      [{}, 'BestEffort'],
      [{ requests: { cpu: '100m' } }, 'Burstable'],
      [{ limits: { cpu: '1', memory: '1Gi' } }, 'Guaranteed'],
    ];
    for (const [resources, qos] of classes) {
      const p = defaulted('', 'Pod', {
        metadata: ns,
        spec: { containers: [{ name: 'a', image: 'x', resources }] },
      });
      prepareForCreate('', 'Pod', p);
      expect(p['status']).toEqual({ phase: 'Pending', qosClass: qos });
    }
  });
});
