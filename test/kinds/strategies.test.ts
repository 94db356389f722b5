import { describe, expect, it } from 'vitest';
import { KindStrategies, NAMESPACE_FINALIZER, type KindStrategy } from '../../src/kinds/index.js';
import { KindsFileError, parseKindsYaml } from '../../src/registry/kinds-source.js';
import { loadRegistry } from '../../src/registry/registry.js';
import type { KubeObject } from '../../src/api/object.js';

const registry = loadRegistry();
const strategies = KindStrategies.fromRegistry(registry);
const of = (group: string, kind: string): KindStrategy => strategies.of({ group, kind });

describe('kind strategies of the built-in kinds', () => {
  it('every served kind has one', () => {
    for (const type of registry.all()) expect(strategies.has(type)).toBe(true);
  });

  it('take their data flags from proto/kinds.yaml', () => {
    expect(of('apps', 'Deployment')).toMatchObject({ tracksGeneration: true, createOnUpdate: false });
    expect(of('', 'Service')).toMatchObject({
      createOnUpdate: true,
      returnDeletedObject: true,
      nameRule: 'dns1035',
      tracksGeneration: false,
    });
    expect(of('', 'Node').keepStatusOnCreate).toBe(true);
    expect(of('', 'ConfigMap')).toMatchObject({
      tracksGeneration: false,
      createOnUpdate: false,
      keepStatusOnCreate: false,
      returnDeletedObject: false,
      nameRule: 'subdomain',
      eventTTL: false,
    });
    expect(of('', 'Event').eventTTL).toBe(true);
    expect(of('events.k8s.io', 'Event').eventTTL).toBe(true);
    expect(of('rbac.authorization.k8s.io', 'Role').nameRule).toBe('path');
    expect(of('authorization.k8s.io', 'SubjectAccessReview').nameRule).toBe('virtual');
  });

  it('reset status on the main resource and spec (plus extras) on status', () => {
    const paths = (s: KindStrategy, sub: string | undefined): string | undefined =>
      s.resetFields(sub)?.toString();
    expect(of('', 'ConfigMap').resetFields(undefined)).toBeUndefined();
    const deploy = of('apps', 'Deployment');
    expect(paths(deploy, undefined)).toContain('status');
    expect(paths(deploy, 'status')).toContain('labels');
    expect(deploy.resetFields('scale')).toBeUndefined();
    expect(paths(of('apps', 'ReplicaSet'), 'status')).not.toContain('labels');
  });

  it('run the per-kind code: pod grace period, namespace finalizers, defaulting, validation, table', () => {
    const pod = (spec: object, status: object = {}): KubeObject => ({
      metadata: { name: 'p' },
      spec,
      status,
    });
    expect(of('', 'Pod').gracePeriodSeconds(pod({}), 10)).toBe(0);
    expect(of('', 'Pod').gracePeriodSeconds(pod({ nodeName: 'n' }), undefined)).toBe(30);
    expect(of('', 'ConfigMap').gracePeriodSeconds(pod({ nodeName: 'n' }), 10)).toBe(0);
    const ns = (finalizers: string[]): KubeObject => ({ metadata: { name: 'n' }, spec: { finalizers } });
    expect(of('', 'Namespace').canDeleteOnUpdate(ns([NAMESPACE_FINALIZER]))).toBe(false);
    expect(of('', 'Namespace').canDeleteOnUpdate(ns([]))).toBe(true);
    const svc: KubeObject = {
      metadata: { name: 'Bad_Name', namespace: 'default' },
      spec: { ports: [{ port: 80 }] },
    };
    of('', 'Service').default(svc);
    expect((svc['spec'] as { type?: string }).type).toBe('ClusterIP');
    expect(
      of('', 'Service')
        .validate(svc, undefined)
        .map((e) => e.field),
    ).toContain('metadata.name');
    expect(of('apps', 'Deployment').table.columns.map((c) => c.name)).toContain('Ready');
  });

  it('kinds can be added and removed at run time', () => {
    const own = new KindStrategies();
    const ref = { group: 'example.com', kind: 'Widget' };
    expect(own.has(ref)).toBe(false);
    expect(() => own.of(ref)).toThrow(/no strategy for kind example.com\/Widget/);
    own.set(ref, of('', 'ConfigMap'));
    expect(own.of(ref)).toBe(of('', 'ConfigMap'));
    expect(own.delete(ref)).toBe(true);
    expect(own.has(ref)).toBe(false);
  });
});

describe('kinds.yaml behaviour flags', () => {
  const doc = (extra: string): string =>
    `groups:\n  - { name: '', versions: [v1] }\nkinds:\n  - { group: '', version: v1, kind: Thing, plural: things, singular: thing, namespaced: true, verbs: [get], storageResource: things, messageType: a.b.Thing${extra} }\n`;

  it('default when omitted and are read when given', () => {
    expect(parseKindsYaml(doc('')).kinds[0]).toMatchObject({
      tracksGeneration: false,
      createOnUpdate: false,
      keepStatusOnCreate: false,
      returnDeletedObject: false,
      nameRule: 'subdomain',
      eventTTL: false,
    });
    expect(
      parseKindsYaml(doc(', tracksGeneration: true, nameRule: label, eventTTL: true')).kinds[0],
    ).toMatchObject({
      tracksGeneration: true,
      nameRule: 'label',
      eventTTL: true,
    });
  });

  it('are validated', () => {
    expect(() => parseKindsYaml(doc(', nameRule: dns'))).toThrow(KindsFileError);
    expect(() => parseKindsYaml(doc(', nameRule: dns'))).toThrow(/kinds\[0\]\.nameRule: must be one of/);
    expect(() => parseKindsYaml(doc(', createOnUpdate: yes please'))).toThrow(
      /createOnUpdate: must be true or false/,
    );
  });
});
