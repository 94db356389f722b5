import { describe, expect, it } from 'vitest';
import {
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
  validateObject,
  validateObjectMeta,
} from '../../src/validation/index.js';
import { defaultObject } from '../../src/defaults/index.js';
import {
  clone,
  container,
  createErrors,
  defaulted,
  expectError,
  expectValid,
  updateErrors,
} from './helpers.js';

const pod = (
  spec: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'default', ...meta },
  spec: { containers: [container()], ...spec },
});

describe('metadata', () => {
  it('requires a name and a namespace for namespaced kinds', () => {
    const errs = createErrors('', 'ConfigMap', { metadata: {} });
    expect(expectError(errs, 'metadata.name', 'FieldValueRequired').message).toBe(
      'Required value: name or generateName is required',
    );
    expectError(errs, 'metadata.namespace', 'FieldValueRequired');
  });

  it('forbids a namespace on cluster-scoped kinds', () => {
    const errs = createErrors('', 'Namespace', { metadata: { name: 'a', namespace: 'b' } });
    expect(expectError(errs, 'metadata.namespace', 'FieldValueForbidden').message).toBe(
      'Forbidden: not allowed on this type',
    );
  });

  it('reports label keys and values at the labels path', () => {
    const errs = createErrors('', 'ConfigMap', {
      metadata: { name: 'c', namespace: 'd', labels: { 'bad key': 'ok', good: '-bad-' } },
    });
    const bad = errs.filter((e) => e.field === 'metadata.labels');
    expect(bad).toHaveLength(2);
    expect(bad[0]?.message).toMatch(
      /^Invalid value: "bad key": name part must consist of alphanumeric characters/,
    );
    expect(bad[1]?.message).toMatch(
      /^Invalid value: "-bad-": a valid label must be an empty string or consist of/,
    );
  });

  it('limits annotations to 256 KiB in total', () => {
    const big = 'x'.repeat(256 * 1024);
    const errs = createErrors('', 'ConfigMap', {
      metadata: { name: 'c', namespace: 'd', annotations: { a: big } },
    });
    expect(expectError(errs, 'metadata.annotations', 'FieldValueTooLong').message).toBe(
      'Too long: must have at most 262144 bytes',
    );
    expectValid(
      createErrors('', 'ConfigMap', {
        metadata: { name: 'c', namespace: 'd', annotations: { a: big.slice(1) } },
      }),
    );
  });

  it('rejects unqualified, non-standard finalizers on built-in kinds only', () => {
    const meta = { name: 'c', namespace: 'd', finalizers: ['example.com/x', 'kubernetes', 'custom'] };
    const errs = createErrors('', 'ConfigMap', { metadata: meta });
    expect(expectError(errs, 'metadata.finalizers[2]', 'FieldValueInvalid').message).toContain(
      'neither a standard finalizer name nor is it fully qualified',
    );
    expectValid(validateObjectMeta('example.com', 'Widget', meta));
  });

  it('keeps identity immutable on update and forbids new finalizers while deleting', () => {
    const old = {
      metadata: {
        name: 'c',
        namespace: 'd',
        uid: 'u1',
        deletionTimestamp: '2024-01-01T00:00:00Z',
        finalizers: ['a.io/x'],
      },
    };
    const errs = validateObjectMeta(
      '',
      'ConfigMap',
      { ...old.metadata, uid: 'u2', finalizers: ['a.io/x', 'b.io/y'] },
      old.metadata,
    );
    expect(expectError(errs, 'metadata.uid', 'FieldValueInvalid').message).toBe(
      'Invalid value: "u2": field is immutable',
    );
    expect(expectError(errs, 'metadata.finalizers', 'FieldValueForbidden').message).toContain(
      'found new finalizers ["b.io/y"]',
    );
  });

  it('exports the label, annotation and selector checks for the handler', () => {
    expect(validateLabels({ 'example.com/app': 'web', '/x': 'y' })).toEqual([
      {
        field: 'metadata.labels',
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "/x": prefix part must be non-empty',
      },
    ]);
    expect(validateAnnotations({ 'A.Example.com/Key': 'free text' }, 'spec.template.annotations')).toEqual(
      [],
    );
    expect(
      validateLabelSelector(
        { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['b'] }] },
        'spec.selector',
      ),
    ).toEqual([
      {
        field: 'spec.selector.matchExpressions[0].values',
        reason: 'FieldValueForbidden',
        message: "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      },
    ]);
  });

  it('validates owner references', () => {
    const errs = createErrors('', 'ConfigMap', {
      metadata: {
        name: 'c',
        namespace: 'd',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
          { apiVersion: '', kind: '', name: '', uid: '' },
        ],
      },
    });
    expectError(errs, 'metadata.ownerReferences.apiVersion', 'FieldValueInvalid');
    expectError(errs, 'metadata.ownerReferences.uid', 'FieldValueInvalid');
    expect(errs.some((e) => e.message.includes('Only one reference can have Controller set to true'))).toBe(
      true,
    );
  });
});

describe('Pod', () => {
  it('accepts a defaulted minimal pod', () => {
    expectValid(createErrors('', 'Pod', pod()));
  });

  it('requires containers, container names and images', () => {
    expect(
      expectError(createErrors('', 'Pod', pod({ containers: [] })), 'spec.containers', 'FieldValueRequired')
        .message,
    ).toBe('Required value');
    const errs = createErrors('', 'Pod', pod({ containers: [{ name: '', image: '' }] }));
    expectError(errs, 'spec.containers[0].name', 'FieldValueRequired');
    expectError(errs, 'spec.containers[0].image', 'FieldValueRequired');
  });

  it('requires unique container names across containers and init containers', () => {
    const errs = createErrors(
      '',
      'Pod',
      pod({ containers: [container('a'), container('a')], initContainers: [container('a')] }),
    );
    expect(expectError(errs, 'spec.containers[1].name', 'FieldValueDuplicate').message).toBe(
      'Duplicate value: "a"',
    );
    expectError(errs, 'spec.initContainers[0].name', 'FieldValueDuplicate');
  });

  it('validates container ports', () => {
    const errs = createErrors(
      '',
      'Pod',
      pod({
        containers: [
          {
            ...container(),
            ports: [
              { containerPort: 0 },
              { containerPort: 70000, name: 'http' },
              { containerPort: 81, name: 'http', protocol: 'ICMP' },
              { containerPort: 82, name: 'Bad_Name' },
            ],
          },
        ],
      }),
    );
    expectError(errs, 'spec.containers[0].ports[0].containerPort', 'FieldValueRequired');
    expect(expectError(errs, 'spec.containers[0].ports[1].containerPort', 'FieldValueInvalid').message).toBe(
      'Invalid value: 70000: must be between 1 and 65535, inclusive',
    );
    expectError(errs, 'spec.containers[0].ports[2].name', 'FieldValueDuplicate');
    expect(expectError(errs, 'spec.containers[0].ports[2].protocol', 'FieldValueNotSupported').message).toBe(
      'Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"',
    );
    expect(errs.filter((e) => e.field === 'spec.containers[0].ports[3].name').map((e) => e.message)).toEqual([
      'Invalid value: "Bad_Name": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ]);
  });

  it("rejects unknown enums with kube's supported lists", () => {
    const errs = createErrors(
      '',
      'Pod',
      pod({
        restartPolicy: 'Sometimes',
        dnsPolicy: 'Everywhere',
        containers: [{ ...container(), imagePullPolicy: 'Maybe' }],
      }),
    );
    expect(expectError(errs, 'spec.restartPolicy', 'FieldValueNotSupported').message).toBe(
      'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    );
    expect(expectError(errs, 'spec.dnsPolicy', 'FieldValueNotSupported').message).toBe(
      'Unsupported value: "Everywhere": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    );
    expectError(errs, 'spec.containers[0].imagePullPolicy', 'FieldValueNotSupported');
  });

  it('validates volumes and mounts', () => {
    const errs = createErrors(
      '',
      'Pod',
      pod({
        volumes: [
          { name: 'a', emptyDir: {}, hostPath: { path: '/x' } },
          { name: 'b', configMap: {} },
          { name: 'd', secret: { secretName: 's', defaultMode: 1000 } },
          { name: 'c', emptyDir: {} },
          { name: 'c', emptyDir: {} },
        ],
        containers: [
          {
            ...container(),
            volumeMounts: [
              { name: 'missing', mountPath: '/m' },
              { name: 'c', mountPath: '/m' },
            ],
          },
        ],
      }),
    );
    expect(expectError(errs, 'spec.volumes[0].hostPath', 'FieldValueForbidden').message).toBe(
      'Forbidden: may not specify more than 1 volume type',
    );
    expectError(errs, 'spec.volumes[1].configMap.name', 'FieldValueRequired');
    expect(expectError(errs, 'spec.volumes[2].secret.defaultMode', 'FieldValueInvalid').message).toBe(
      'Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive',
    );
    expectError(errs, 'spec.volumes[4].name', 'FieldValueDuplicate');
    expect(expectError(errs, 'spec.containers[0].volumeMounts[0].name', 'FieldValueNotFound').message).toBe(
      'Not found: "missing"',
    );
    expect(
      expectError(errs, 'spec.containers[0].volumeMounts[1].mountPath', 'FieldValueInvalid').message,
    ).toBe('Invalid value: "/m": must be unique');
  });

  it('validates env sources and resource requirements', () => {
    const errs = createErrors(
      '',
      'Pod',
      pod({
        containers: [
          {
            ...container(),
            env: [
              { name: '' },
              { name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
              { name: 'B', valueFrom: { fieldRef: { fieldPath: 'spec.restartPolicy' } } },
            ],
            resources: {
              limits: { cpu: '1' },
              requests: { cpu: '2', memory: 'lots', 'example.com/gpu': '1' },
            },
          },
        ],
      }),
    );
    expectError(errs, 'spec.containers[0].env[0].name', 'FieldValueRequired');
    expect(expectError(errs, 'spec.containers[0].env[1].valueFrom', 'FieldValueInvalid').message).toBe(
      'Invalid value: "": may not be specified when `value` is not empty',
    );
    expectError(errs, 'spec.containers[0].env[2].valueFrom.fieldRef.fieldPath', 'FieldValueNotSupported');
    expect(expectError(errs, 'spec.containers[0].resources.requests', 'FieldValueInvalid').message).toBe(
      'Invalid value: "2": must be less than or equal to cpu limit of 1',
    );
    expectError(errs, 'spec.containers[0].resources.requests[memory]', 'FieldValueInvalid');
    expect(expectError(errs, 'spec.containers[0].resources.limits', 'FieldValueRequired').message).toBe(
      'Required value: Limit must be set for non overcommitable resources',
    );
  });

  it('validates probes: one handler, success threshold 1 for liveness', () => {
    const errs = createErrors(
      '',
      'Pod',
      pod({
        containers: [
          {
            ...container(),
            livenessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 80 }, successThreshold: 2 },
            readinessProbe: {},
          },
        ],
      }),
    );
    expectError(errs, 'spec.containers[0].livenessProbe.tcpSocket', 'FieldValueForbidden');
    expect(
      expectError(errs, 'spec.containers[0].livenessProbe.successThreshold', 'FieldValueInvalid').message,
    ).toBe('Invalid value: 2: must be 1');
    expect(expectError(errs, 'spec.containers[0].readinessProbe', 'FieldValueRequired').message).toBe(
      'Required value: must specify a handler type',
    );
  });

  it('forbids ephemeral containers on create and probes on plain init containers', () => {
    const errs = createErrors(
      '',
      'Pod',
      pod({
        ephemeralContainers: [{ name: 'debug', image: 'busybox' }],
        initContainers: [{ ...container('init'), livenessProbe: { exec: { command: ['x'] } } }],
      }),
    );
    expectError(errs, 'spec.ephemeralContainers', 'FieldValueForbidden');
    expect(expectError(errs, 'spec.initContainers[0].livenessProbe', 'FieldValueForbidden').message).toBe(
      'Forbidden: may not be set for init containers without restartPolicy=Always',
    );
    expectValid(
      createErrors(
        '',
        'Pod',
        pod({
          initContainers: [
            { ...container('side'), restartPolicy: 'Always', livenessProbe: { exec: { command: ['x'] } } },
          ],
        }),
      ),
    );
  });

  it('allows only image, deadline and toleration changes on update', () => {
    const stored = defaulted('', 'Pod', pod());
    expectValid(
      updateErrors(
        '',
        'Pod',
        {
          ...clone(stored),
          spec: { ...(stored['spec'] as object), containers: [container('app', 'nginx:1.28')] },
        },
        stored,
      ),
    );
    const errs = updateErrors(
      '',
      'Pod',
      { ...clone(stored), spec: { ...(stored['spec'] as object), restartPolicy: 'Never' } },
      stored,
    );
    expect(expectError(errs, 'spec', 'FieldValueForbidden').message).toMatch(
      /^Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`/,
    );
    const more = updateErrors(
      '',
      'Pod',
      {
        ...clone(stored),
        spec: { ...(stored['spec'] as object), containers: [container(), container('b')] },
      },
      stored,
    );
    expect(expectError(more, 'spec.containers', 'FieldValueForbidden').message).toBe(
      'Forbidden: pod updates may not add or remove containers',
    );
  });

  it('checks host ports against container ports under hostNetwork', () => {
    const p = defaulted(
      '',
      'Pod',
      pod({ hostNetwork: true, containers: [{ ...container(), ports: [{ containerPort: 80 }] }] }),
    );
    (p['spec'] as { containers: { ports: { hostPort: number }[] }[] }).containers[0]!.ports[0]!.hostPort = 81;
    expectError(validateObject('', 'Pod', p), 'spec.containers[0].ports[0].hostPort', 'FieldValueInvalid');
  });
  it("checks sysctl names against kube's pattern, and refuses duplicates", () => {
    const p = defaulted(
      '',
      'Pod',
      pod({
        securityContext: {
          sysctls: [
            { name: 'foo-', value: 'bar' },
            { name: 'kernel.shmmax', value: '100000000' },
            { name: 'safe-and-unsafe', value: '1' },
            { name: 'bar..', value: '42' },
            { name: 'net/ipv4/conf/eth0.100/rp_filter', value: '1' },
            { name: 'kernel.shmmax', value: '1' },
          ],
        },
      }),
    );
    const errs = validateObject('', 'Pod', p);
    const pattern =
      'must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$';
    expect(errs.map((e) => [e.field, e.reason, e.message])).toEqual([
      ['spec.securityContext.sysctls[0].name', 'FieldValueInvalid', `Invalid value: "foo-": ${pattern}`],
      ['spec.securityContext.sysctls[3].name', 'FieldValueInvalid', `Invalid value: "bar..": ${pattern}`],
      ['spec.securityContext.sysctls[5].name', 'FieldValueDuplicate', 'Duplicate value: "kernel.shmmax"'],
    ]);
  });
});

describe('Service', () => {
  const svc = (spec: Record<string, unknown>): Record<string, unknown> => ({
    metadata: { name: 'web', namespace: 'default' },
    spec,
  });

  it('accepts a defaulted ClusterIP service before allocation', () => {
    expectValid(createErrors('', 'Service', svc({ selector: { app: 'web' }, ports: [{ port: 80 }] })));
  });

  it('requires ports except for headless and ExternalName services', () => {
    expectError(createErrors('', 'Service', svc({})), 'spec.ports', 'FieldValueRequired');
    expectValid(createErrors('', 'Service', svc({ clusterIP: 'None', selector: { app: 'db' } })));
    expectValid(createErrors('', 'Service', svc({ type: 'ExternalName', externalName: 'db.example.com' })));
  });

  it('names ports when there are several, and rejects duplicates', () => {
    const errs = createErrors('', 'Service', svc({ ports: [{ port: 80 }, { port: 80, name: 'b' }] }));
    expectError(errs, 'spec.ports[0].name', 'FieldValueRequired');
    expectError(errs, 'spec.ports[1]', 'FieldValueDuplicate');
  });

  it('validates ExternalName services and types', () => {
    expectError(
      createErrors('', 'Service', svc({ type: 'ExternalName' })),
      'spec.externalName',
      'FieldValueRequired',
    );
    expect(
      expectError(
        createErrors('', 'Service', svc({ type: 'Bogus', ports: [{ port: 1 }] })),
        'spec.type',
        'FieldValueNotSupported',
      ).message,
    ).toBe(
      'Unsupported value: "Bogus": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    );
    expectError(
      createErrors('', 'Service', svc({ ports: [{ port: 80, nodePort: 30000 }] })),
      'spec.ports[0].nodePort',
      'FieldValueForbidden',
    );
  });

  it('keeps cluster IPs on update', () => {
    const stored = defaulted(
      '',
      'Service',
      svc({
        ports: [{ port: 80 }],
        clusterIP: '10.0.0.10',
        clusterIPs: ['10.0.0.10'],
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
      }),
    );
    const errs = updateErrors(
      '',
      'Service',
      {
        ...clone(stored),
        spec: { ...(stored['spec'] as object), clusterIP: '10.0.0.11', clusterIPs: ['10.0.0.11'] },
      },
      stored,
    );
    expect(expectError(errs, 'spec.clusterIPs[0]', 'FieldValueInvalid').message).toMatch(
      /may not change once set$/,
    );
  });
});

describe('ConfigMap and Secret', () => {
  it('validate keys and the 1 MiB limit', () => {
    const errs = createErrors('', 'ConfigMap', {
      metadata: { name: 'c', namespace: 'd' },
      data: { 'a/b': 'x', big: 'y'.repeat(1024 * 1024) },
    });
    expect(expectError(errs, 'data[a/b]', 'FieldValueInvalid').message).toMatch(
      /^Invalid value: "a\/b": a valid config key must consist of/,
    );
    expect(expectError(errs, '', 'FieldValueTooLong').message).toBe(
      'Too long: must have at most 1048576 bytes',
    );
    const secret = createErrors('', 'Secret', {
      metadata: { name: 's', namespace: 'd' },
      data: { big: Buffer.alloc(1024 * 1024 + 1).toString('base64') },
    });
    expectError(secret, 'data', 'FieldValueTooLong');
  });

  it('requires the keys of typed secrets and rejects bad base64', () => {
    const tls = createErrors('', 'Secret', {
      metadata: { name: 's', namespace: 'd' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': 'eA==' },
    });
    expectError(tls, 'data[tls.key]', 'FieldValueRequired');
    const bad = createErrors('', 'Secret', {
      metadata: { name: 's', namespace: 'd' },
      data: { k: 'not base64!' },
    });
    expect(expectError(bad, 'data[k]', 'FieldValueInvalid').message).toMatch(
      /^Invalid value: "<secret contents redacted>": illegal base64 data/,
    );
    expectValid(
      createErrors('', 'Secret', { metadata: { name: 's', namespace: 'd' }, stringData: { pw: 'x' } }),
    );
  });

  it("keep a Secret's type and immutable data on update", () => {
    const stored = defaulted('', 'Secret', {
      metadata: { name: 's', namespace: 'd' },
      immutable: true,
      data: { a: 'eA==' },
    });
    const errs = updateErrors(
      '',
      'Secret',
      { ...clone(stored), type: 'kubernetes.io/basic-auth', data: { a: 'eQ==', username: 'eA==' } },
      stored,
    );
    expect(expectError(errs, 'type', 'FieldValueInvalid').message).toBe(
      'Invalid value: "kubernetes.io/basic-auth": field is immutable',
    );
    expect(expectError(errs, 'data', 'FieldValueForbidden').message).toBe(
      'Forbidden: field is immutable when `immutable` is set',
    );
  });
});

describe('Namespace and others', () => {
  it('validates namespace names and spec finalizers', () => {
    expectError(
      createErrors('', 'Namespace', { metadata: { name: 'Bad' } }),
      'metadata.name',
      'FieldValueInvalid',
    );
    expectError(
      createErrors('', 'Namespace', { metadata: { name: 'ok' }, spec: { finalizers: ['nope'] } }),
      'spec.finalizers',
      'FieldValueInvalid',
    );
    expectValid(createErrors('', 'Namespace', { metadata: { name: 'ok' } }));
  });

  it('validates claims: access modes and a positive storage request', () => {
    const errs = createErrors('', 'PersistentVolumeClaim', {
      metadata: { name: 'c', namespace: 'd' },
      spec: { resources: { requests: { storage: '0' } } },
    });
    expect(expectError(errs, 'spec.accessModes', 'FieldValueRequired').message).toBe(
      'Required value: at least 1 access mode is required',
    );
    expectError(errs, 'spec.resources[storage]', 'FieldValueInvalid');
  });

  it('validates legacy core events only for namespace agreement', () => {
    const ev = {
      metadata: { name: 'Web.Pod.1', namespace: 'default' },
      involvedObject: { kind: 'Pod', namespace: 'other' },
      reason: 'X',
    };
    const o = clone(ev);
    defaultObject('', 'Event', o);
    expectError(validateObject('', 'Event', o), 'involvedObject.namespace', 'FieldValueInvalid');
    expectValid(validateObject('', 'Event', { ...o, involvedObject: { kind: 'Pod', namespace: 'default' } }));
  });
});
