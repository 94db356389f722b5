/**
 * Walking values with their schema: which fields a value sets (list-maps, sets, atomic lists,
 * maps and structs, inline fields, special wire types, key defaults), shape errors, compare,
 * removal, and named-field closure.
 */
import { describe, expect, it } from 'vitest';
import {
  FieldSet,
  TypedValueError,
  compare,
  ensureNamedFieldsAreMembers,
  fieldElement as f,
  fieldSetOf,
  keyElement as k,
  pathToString,
  removeItems,
} from '../../src/apply/index.js';
import type { JsonValue } from '../../src/apply/value.js';
import { CONFIGMAP, DEPLOYMENT, POD, SERVICE, container, deployment, podSpec, types } from './support.js';

const rendered = (s: FieldSet): string[] => s.paths().map(pathToString);
const j = (v: unknown): JsonValue => v as JsonValue;
const META = FieldSet.fromPaths([
  [f('apiVersion')],
  [f('kind')],
  [f('metadata'), f('name')],
  [f('metadata'), f('namespace')],
]);

describe('fieldSetOf', () => {
  it('gives the FieldsV1 kube records for `kubectl apply --server-side` of a Deployment', () => {
    const config = deployment(
      { replicas: 3, ...podSpec([container('nginx', 'nginx:1.14.2', [[80]])]) },
      { labels: { app: 'nginx' } },
    );
    const set = fieldSetOf(j(config), DEPLOYMENT, 'config').difference(META);
    expect(JSON.stringify(set.toFieldsV1())).toBe(
      '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":' +
        '{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{},' +
        '"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}}}',
    );
  });

  it('owns sets item by item, atomic lists, maps and structs as a whole, granular map entries', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', finalizers: ['b.example/f', 'a.example/f'], annotations: { note: 'x' } },
      spec: {
        nodeSelector: { disk: 'ssd' },
        tolerations: [{ key: 'k', operator: 'Exists' }],
        containers: [
          {
            name: 'c',
            args: ['--a', '--b'],
            resources: { limits: { cpu: '500m', memory: 1024 } },
            livenessProbe: { exec: { command: ['true'] }, periodSeconds: 5 },
            env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'cm', key: 'a' } } }],
          },
        ],
      },
    };
    const c = '.spec.containers[name="c"]';
    expect(rendered(fieldSetOf(j(pod), POD, 'config').difference(META))).toEqual([
      '.metadata.annotations.note',
      '.metadata.finalizers[="a.example/f"]',
      '.metadata.finalizers[="b.example/f"]',
      '.spec.nodeSelector',
      '.spec.tolerations',
      '.spec.containers[name="c"]',
      `${c}.args`,
      `${c}.name`,
      `${c}.env[name="A"]`,
      `${c}.env[name="A"].name`,
      // ConfigMapKeySelector is an atomic struct: owned whole.
      `${c}.env[name="A"].valueFrom.configMapKeyRef`,
      // Probe's handler is inline: `exec` is a field of the probe itself.
      `${c}.livenessProbe.periodSeconds`,
      `${c}.livenessProbe.exec.command`,
      `${c}.resources.limits.cpu`,
      `${c}.resources.limits.memory`,
    ]);
  });

  it('keys list-map items by all key fields, with the protocol default', () => {
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP', targetPort: 'dns' }] },
    };
    expect(rendered(fieldSetOf(j(svc), SERVICE, 'config').difference(META))).toEqual([
      // SMD's order: keys compare field by field, numbers numerically.
      '.spec.ports[port=53,protocol="UDP"]',
      '.spec.ports[port=80,protocol="TCP"]',
      '.spec.ports[port=53,protocol="UDP"].port',
      '.spec.ports[port=53,protocol="UDP"].protocol',
      '.spec.ports[port=53,protocol="UDP"].targetPort',
      '.spec.ports[port=80,protocol="TCP"].port',
    ]);
  });

  it('sets nothing for empty granular values; atomic ones are owned even when empty', () => {
    const cfg = deployment(
      { strategy: {}, template: { spec: { containers: [] } }, selector: {} },
      { labels: {} },
    );
    expect(rendered(fieldSetOf(j(cfg), DEPLOYMENT, 'config').difference(META))).toEqual(['.spec.selector']);
  });

  it('owns ConfigMap data entries and binaryData entries', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c' },
      data: { a: '1', 'b.txt': '2' },
      binaryData: { z: 'AA==' },
    };
    expect(rendered(fieldSetOf(j(cm), CONFIGMAP, 'config').difference(META))).toEqual([
      '.binaryData.z',
      '.data.a',
      '.data.b.txt',
    ]);
  });

  it.each([
    ['an undeclared field', { spec: { replicaz: 1 } }, '.spec.replicaz: field not declared in schema'],
    [
      'a map where a number belongs',
      { spec: { replicas: { a: 1 } } },
      '.spec.replicas: expected numeric (int or float), got map[string]interface {}',
    ],
    [
      'a number where a string belongs',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 5 }] } } } },
      '.spec.template.spec.containers[name="c"].image: expected string, got &value.valueUnstructured{Value:5}',
    ],
    [
      'a boolean where a number belongs',
      { spec: { replicas: true } },
      '.spec.replicas: expected numeric (int or float), got bool',
    ],
    [
      'a list where a number belongs',
      { spec: { replicas: [1] } },
      '.spec.replicas: expected numeric (int or float), got []interface {}',
    ],
    [
      'a string where a boolean belongs',
      { spec: { paused: 'yes' } },
      '.spec.paused: expected boolean, got &{yes}',
    ],
    [
      'a scalar where a list belongs',
      { spec: { template: { spec: { containers: 'x' } } } },
      '.spec.template.spec.containers: expected list, got string',
    ],
    [
      'an item without its key',
      { spec: { template: { spec: { containers: [{ image: 'x' }] } } } },
      '.spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name" (and doesn\'t have default value)',
    ],
    [
      'a duplicate key',
      { spec: { template: { spec: { containers: [{ name: 'a' }, { name: 'a' }] } } } },
      '.spec.template.spec.containers: duplicate entries for key [name="a"]',
    ],
    [
      'a map in a set',
      { metadata: { finalizers: [{ a: 1 }] } },
      ".metadata.finalizers: element 0: associative list without keys has an element that's a map type",
    ],
  ])('rejects %s in a configuration', (_what, cfg, message) => {
    const err = (() => {
      try {
        fieldSetOf(j(cfg), DEPLOYMENT, 'config');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(TypedValueError);
    expect((err as TypedValueError).message).toBe(message);
  });

  it('takes stored objects as they are: duplicates are owned as one item, unknown fields as leaves', () => {
    const live = {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'a', image: '1' },
              { name: 'a', image: '2' },
            ],
          },
        },
      },
      x: 1,
    };
    expect(rendered(fieldSetOf(j(live), DEPLOYMENT, 'live'))).toEqual([
      '.x',
      '.spec.template.spec.containers[name="a"]',
    ]);
  });
});

describe('compare', () => {
  it('reports added, modified and removed fields; containers only appear or disappear', () => {
    const old = deployment({ replicas: 1, ...podSpec([container('a', 'a:1'), container('b', 'b:1')]) });
    const next = deployment(
      { replicas: 2, ...podSpec([container('a', 'a:2', [[80]]), container('c', 'c:1')]) },
      { labels: { x: 'y' } },
    );
    const c = compare(j(old), j(next), DEPLOYMENT);
    const cs = '.spec.template.spec.containers';
    expect(rendered(c.modified)).toEqual(['.spec.replicas', `${cs}[name="a"].image`]);
    expect(rendered(c.added)).toEqual([
      '.metadata.labels',
      '.metadata.labels.x',
      `${cs}[name="c"]`,
      `${cs}[name="a"].ports`,
      `${cs}[name="a"].ports[containerPort=80,protocol="TCP"]`,
      `${cs}[name="a"].ports[containerPort=80,protocol="TCP"].containerPort`,
      `${cs}[name="c"].image`,
      `${cs}[name="c"].name`,
    ]);
    expect(rendered(c.removed)).toEqual([`${cs}[name="b"]`, `${cs}[name="b"].image`, `${cs}[name="b"].name`]);
  });

  it('sees no change between equal values', () => {
    const d = deployment({ replicas: 1, ...podSpec([container('a', 'a:1', [[80, 'TCP']])]) });
    const c = compare(j(d), j(structuredClone(d)), DEPLOYMENT);
    expect([c.added.isEmpty(), c.modified.isEmpty(), c.removed.isEmpty()]).toEqual([true, true, true]);
  });
});

describe('removeItems and named fields', () => {
  it('removes fields, map entries and items with what is below them; emptied containers go away', () => {
    const d = deployment(
      { replicas: 1, ...podSpec([container('a', 'a:1'), container('b', 'b:1')]) },
      { labels: { x: '1' } },
    );
    const cs = [f('spec'), f('template'), f('spec'), f('containers')];
    const out = removeItems(
      j(d),
      FieldSet.fromPaths([
        [f('spec'), f('replicas')],
        [...cs, k({ name: 'b' })],
        [f('metadata'), f('labels'), f('x')],
      ]),
      DEPLOYMENT,
    );
    expect(out).toEqual(deployment(podSpec([container('a', 'a:1')])));
  });

  it('adds struct fields above members, not map entries or items', () => {
    const s = FieldSet.fromPaths([
      [f('spec'), f('strategy'), f('type')],
      [f('metadata'), f('labels'), f('a')],
      [f('spec'), f('template'), f('spec'), f('containers'), k({ name: 'a' }), f('image')],
    ]);
    expect(rendered(ensureNamedFieldsAreMembers(s, DEPLOYMENT))).toEqual([
      '.metadata',
      '.spec',
      '.metadata.labels',
      '.metadata.labels.a',
      '.spec.strategy',
      '.spec.template',
      '.spec.strategy.type',
      '.spec.template.spec',
      '.spec.template.spec.containers',
      '.spec.template.spec.containers[name="a"].image',
    ]);
  });

  it('resolves recursive messages lazily', () => {
    const crd = types.forMessage('k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps');
    const value = {
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'string' } } } },
    };
    expect(rendered(fieldSetOf(j(value), crd, 'config'))).toEqual([
      '.type',
      '.properties.a',
      '.properties.a.type',
      '.properties.a.properties.b',
      '.properties.a.properties.b.type',
    ]);
  });
});
