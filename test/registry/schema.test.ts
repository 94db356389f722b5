/**
 * Wire facts checked against upstream Kubernetes (`generated.proto` / `types.go` of
 * k8s.io/api core/v1 and k8s.io/apimachinery), read through the runtime loader, plus the
 * loader's lookups and failure codes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  SchemaError,
  elementType,
  isList,
  isMap,
  isScalarType,
  loadSchemas,
  specialWireType,
  type FieldSchema,
} from '../../src/registry/schema.js';

const CORE = 'k8s.io.api.core.v1.';
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';
const schemas = loadSchemas();

function f(message: string, jsonName: string): FieldSchema {
  const field = schemas.field(message, jsonName);
  if (field === undefined) throw new Error(`${message}.${jsonName} missing`);
  return field;
}

describe('wire facts (upstream field numbers, types, markers)', () => {
  it('ObjectMeta', () => {
    const om = `${META}ObjectMeta`;
    expect(f(om, 'name').number).toBe(1);
    expect(f(om, 'generateName').number).toBe(2);
    expect(f(om, 'namespace').number).toBe(3);
    expect(f(om, 'uid').number).toBe(5);
    expect(f(om, 'resourceVersion').number).toBe(6);
    expect(f(om, 'creationTimestamp')).toMatchObject({ number: 8, type: `${META}Time` });
    expect(f(om, 'labels')).toMatchObject({ number: 11, label: 'map', keyType: 'string', type: 'string' });
    expect(f(om, 'ownerReferences')).toMatchObject({
      number: 13,
      label: 'repeated',
      listType: 'map',
      listMapKeys: ['uid'],
      patchMergeKey: 'uid',
      patchStrategy: 'merge',
    });
    expect(f(om, 'finalizers')).toMatchObject({ number: 14, listType: 'set', patchStrategy: 'merge' });
    expect(f(om, 'managedFields')).toMatchObject({ number: 17, listType: 'atomic' });
    expect(schemas.message(`${META}OwnerReference`)?.structType).toBe('atomic');
  });

  it('ListMeta, Status, WatchEvent', () => {
    expect(f(`${META}ListMeta`, 'resourceVersion').number).toBe(2);
    expect(f(`${META}ListMeta`, 'continue').number).toBe(3);
    expect(f(`${META}ListMeta`, 'remainingItemCount')).toMatchObject({ number: 4, type: 'int64' });
    expect(f(`${META}Status`, 'details')).toMatchObject({ number: 5, type: `${META}StatusDetails` });
    expect(f(`${META}Status`, 'code')).toMatchObject({ number: 6, type: 'int32' });
    expect(f(`${META}WatchEvent`, 'object')).toMatchObject({
      number: 2,
      type: 'k8s.io.apimachinery.pkg.runtime.RawExtension',
    });
  });

  it('Pod, PodSpec, Container', () => {
    expect(f(`${CORE}Pod`, 'metadata')).toMatchObject({ number: 1, type: `${META}ObjectMeta` });
    expect(f(`${CORE}Pod`, 'spec')).toMatchObject({ number: 2, type: `${CORE}PodSpec` });
    expect(f(`${CORE}Pod`, 'status')).toMatchObject({ number: 3, type: `${CORE}PodStatus` });
    expect(f(`${CORE}PodSpec`, 'containers')).toMatchObject({
      number: 2,
      type: `${CORE}Container`,
      listType: 'map',
      listMapKeys: ['name'],
      patchMergeKey: 'name',
      patchStrategy: 'merge',
    });
    expect(f(`${CORE}PodSpec`, 'volumes')).toMatchObject({ number: 1, patchStrategy: 'merge,retainKeys' });
    expect(f(`${CORE}PodSpec`, 'nodeSelector')).toMatchObject({ number: 7, mapType: 'atomic' });
    expect(f(`${CORE}PodSpec`, 'ephemeralContainers').number).toBe(34);
    expect(f(`${CORE}Container`, 'ports')).toMatchObject({
      number: 6,
      listMapKeys: ['containerPort', 'protocol'],
      patchMergeKey: 'containerPort',
    });
    expect(f(`${CORE}Container`, 'name')).toMatchObject({ number: 1, omitEmpty: false });
    expect(f(`${CORE}Container`, 'image')).toMatchObject({ number: 2, omitEmpty: true, optional: true });
    expect(f(`${CORE}ContainerPort`, 'containerPort')).toMatchObject({ number: 3, omitEmpty: false });
    expect(f(`${CORE}HTTPGetAction`, 'port').type).toBe('k8s.io.apimachinery.pkg.util.intstr.IntOrString');
  });

  it('other core kinds', () => {
    expect(f(`${CORE}Secret`, 'data')).toMatchObject({ number: 2, label: 'map', type: 'bytes' });
    expect(f(`${CORE}Secret`, 'type').number).toBe(3);
    expect(f(`${CORE}ConfigMap`, 'binaryData')).toMatchObject({ number: 3, type: 'bytes' });
    expect(f(`${CORE}ServiceSpec`, 'ports')).toMatchObject({
      listMapKeys: ['port', 'protocol'],
      patchMergeKey: 'port',
    });
    expect(f(`${CORE}ServicePort`, 'targetPort').number).toBe(4);
    expect(f(`${CORE}NodeStatus`, 'capacity')).toMatchObject({
      label: 'map',
      type: 'k8s.io.apimachinery.pkg.api.resource.Quantity',
    });
    expect(f(`${CORE}Event`, 'eventTime').type).toBe(`${META}MicroTime`);
    expect(f(`${CORE}DaemonEndpoint`, 'Port').number).toBe(1);
    expect(schemas.message(`${META}LabelSelector`)?.structType).toBe('atomic');
  });

  it('apimachinery special messages', () => {
    expect(f('k8s.io.apimachinery.pkg.runtime.Unknown', 'raw')).toMatchObject({ number: 2, type: 'bytes' });
    expect(f('k8s.io.apimachinery.pkg.runtime.RawExtension', 'raw')).toMatchObject({
      number: 1,
      type: 'bytes',
    });
    const ios = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString';
    expect(f(ios, 'type')).toMatchObject({ number: 1, type: 'int64' });
    expect(f(ios, 'intVal')).toMatchObject({ number: 2, type: 'int32' });
    expect(f(ios, 'strVal')).toMatchObject({ number: 3, type: 'string' });
    expect(f('k8s.io.apimachinery.pkg.api.resource.Quantity', 'string')).toMatchObject({
      number: 1,
      type: 'string',
    });
    expect(f(`${META}Time`, 'seconds')).toMatchObject({ number: 1, type: 'int64' });
    expect(f(`${META}Time`, 'nanos')).toMatchObject({ number: 2, type: 'int32' });
    expect(f(`${META}FieldsV1`, 'Raw')).toMatchObject({ number: 1, type: 'bytes' });
  });
});

describe('inline fields', () => {
  it('flatten into the parent JSON in upstream order, without the inline field itself', () => {
    const keys = [...schemas.jsonView(`${CORE}Probe`).keys()];
    expect(keys.slice(0, 5)).toEqual(['exec', 'httpGet', 'tcpSocket', 'grpc', 'initialDelaySeconds']);
    expect(keys).not.toContain('handler');
  });

  it('report the chain of inline fields to the value', () => {
    const ref = schemas.jsonField(`${CORE}Probe`, 'httpGet');
    expect(ref?.via.map((v) => v.name)).toEqual(['handler']);
    expect(ref?.field).toMatchObject({ number: 2, type: `${CORE}HTTPGetAction` });
    expect(schemas.jsonField(`${CORE}Probe`, 'periodSeconds')?.via).toEqual([]);
  });

  it('cover Volume, PersistentVolumeSpec, EphemeralContainer and LocalObjectReference embeddings', () => {
    expect(schemas.jsonField(`${CORE}Volume`, 'configMap')?.via.map((v) => v.name)).toEqual(['volumeSource']);
    expect(schemas.jsonField(`${CORE}PersistentVolumeSpec`, 'hostPath')?.via.map((v) => v.name)).toEqual([
      'persistentVolumeSource',
    ]);
    expect(schemas.jsonField(`${CORE}EphemeralContainer`, 'image')?.via.map((v) => v.name)).toEqual([
      'ephemeralContainerCommon',
    ]);
    expect(f(`${CORE}EphemeralContainer`, 'targetContainerName').number).toBe(2);
    expect(schemas.jsonField(`${CORE}SecretKeySelector`, 'name')?.via.map((v) => v.name)).toEqual([
      'localObjectReference',
    ]);
  });
});

describe('lookups', () => {
  it('find fields by number and element messages', () => {
    expect(schemas.fieldByNumber(`${CORE}Pod`, 2)?.jsonName).toBe('spec');
    expect(schemas.fieldByNumber(`${CORE}Pod`, 99)).toBeUndefined();
    const containers = f(`${CORE}PodSpec`, 'containers');
    expect(isList(containers)).toBe(true);
    expect(isMap(containers)).toBe(false);
    expect(elementType(containers)).toBe(`${CORE}Container`);
    expect(schemas.elementMessage(containers)?.name).toBe(`${CORE}Container`);
    expect(schemas.elementMessage(f(`${META}ObjectMeta`, 'labels'))).toBeUndefined();
    expect(isMap(f(`${META}ObjectMeta`, 'labels'))).toBe(true);
  });

  it('classify special wire types', () => {
    expect(specialWireType(`${META}Time`)).toBe('time');
    expect(specialWireType(`${META}MicroTime`)).toBe('microTime');
    expect(specialWireType(`${META}Duration`)).toBe('duration');
    expect(specialWireType('k8s.io.apimachinery.pkg.util.intstr.IntOrString')).toBe('intOrString');
    expect(specialWireType('k8s.io.apimachinery.pkg.api.resource.Quantity')).toBe('quantity');
    expect(specialWireType('k8s.io.apimachinery.pkg.runtime.RawExtension')).toBe('rawJSON');
    expect(specialWireType(`${META}FieldsV1`)).toBe('rawJSON');
    expect(specialWireType(`${META}Verbs`)).toBe('stringList');
    expect(specialWireType(`${CORE}Pod`)).toBeUndefined();
    expect(specialWireType('string')).toBeUndefined();
  });

  it('answer undefined for unknown names and throw typed errors where a name must exist', () => {
    expect(schemas.message('k8s.io.api.core.v1.Nope')).toBeUndefined();
    expect(schemas.message('constructor')).toBeUndefined();
    expect(schemas.field(`${CORE}Pod`, 'nope')).toBeUndefined();
    expect(() => schemas.requireMessage('k8s.io.api.core.v1.Nope')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_MESSAGE' }),
    );
    expect(() => schemas.field('k8s.io.api.core.v1.Nope', 'x')).toThrow(SchemaError);
  });

  it('reference only messages that exist, with unique numbers per message', () => {
    for (const name of schemas.messageNames()) {
      const m = schemas.requireMessage(name);
      expect(new Set(m.fields.map((x) => x.number)).size).toBe(m.fields.length);
      for (const field of m.fields) {
        if (!isScalarType(field.type))
          expect(schemas.message(field.type), `${name}.${field.name}`).toBeDefined();
      }
    }
    expect(schemas.size).toBeGreaterThan(250);
  });
});

describe('loadSchemas failures', () => {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('SCHEMA_NOT_FOUND for a missing file', () => {
    expect(() => loadSchemas(join(dir, 'missing.json'))).toThrow(
      expect.objectContaining({ code: 'SCHEMA_NOT_FOUND' }),
    );
  });

  it('SCHEMA_INVALID for bad JSON and for another format version', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"format":');
    expect(() => loadSchemas(bad)).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
    const old = join(dir, 'old.json');
    writeFileSync(old, JSON.stringify({ '//': '', format: 0, messages: {} }));
    expect(() => loadSchemas(old)).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
  });
});
