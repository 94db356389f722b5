/**
 * The managedFields lifecycle around the ownership core: entry encoding and order, manager
 * identities, client-sent and invalid entries, untracked objects, before-first-apply,
 * subresources, ignored (reset) fields, the Update-entry cap, and apply's request errors.
 */
import { describe, expect, it } from 'vitest';
import {
  APPLY_ERROR_STATUS,
  ApplyError,
  FieldSet,
  MAX_UPDATE_MANAGERS,
  applyOperation,
  decodeManagedFields,
  defaultManagerName,
  encodeManagedFields,
  fieldElement as f,
  formatTime,
  managerIdentifier,
  managerOrUserAgent,
  updateOperation,
  type ManagedFieldsEntry,
} from '../../src/apply/index.js';
import type { JsonMap } from '../../src/apply/value.js';
import { Cluster } from './cluster.js';
import { CONFIGMAP, DEPLOYMENT, container, deployment, podSpec } from './support.js';

const cm = (
  data: Record<string, string>,
  metadata: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'default', ...metadata },
  data,
});
const NOW = new Date('2024-05-01T12:00:00.750Z');

function applyError(run: () => unknown): ApplyError {
  try {
    run();
  } catch (err) {
    if (err instanceof ApplyError) return err;
    throw err;
  }
  throw new Error('expected an ApplyError');
}

describe('entries', () => {
  it('identify managers as kube does (Apply without version, Update with it)', () => {
    expect(managerIdentifier({ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1' })).toBe(
      '{"manager":"kubectl","operation":"Apply"}',
    );
    expect(
      managerIdentifier({ manager: 'k<', operation: 'Update', apiVersion: 'apps/v1', subresource: 'status' }),
    ).toBe('{"manager":"k\\u003c","operation":"Update","apiVersion":"apps/v1","subresource":"status"}');
  });

  it('encode sorted by operation, time, manager, with seconds-precision UTC times', () => {
    const state = decodeManagedFields([
      {
        manager: 'z',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2024-01-01T00:00:05+01:00',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
      {
        manager: 'b',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2023-12-31T23:00:01.9Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:b': {} } },
      },
      {
        manager: 'y',
        operation: 'Apply',
        apiVersion: 'v1',
        time: '2030-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:c': {} } },
      },
      {
        manager: 'a',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2023-12-31T23:00:01Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:d': {} } },
      },
    ]);
    const out = encodeManagedFields(state);
    expect(out.map((e) => [e.manager, e.time])).toEqual([
      ['y', '2030-01-01T00:00:00Z'],
      ['a', '2023-12-31T23:00:01Z'],
      ['b', '2023-12-31T23:00:01Z'],
      ['z', '2023-12-31T23:00:05Z'],
    ]);
    expect(Object.keys(out[0] as object)).toEqual([
      'manager',
      'operation',
      'apiVersion',
      'time',
      'fieldsType',
      'fieldsV1',
    ]);
  });

  it('format times as metav1.Time does, in every year', () => {
    for (const iso of [
      '2024-02-29T23:59:59.999Z',
      '1000-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.000Z',
      '0999-12-31T23:59:59.000Z',
      '+010000-01-01T00:00:00.000Z',
      '-000001-06-15T12:30:45.500Z',
    ]) {
      expect(formatTime(new Date(iso))).toBe(iso.replace(/\.\d{3}Z$/, 'Z'));
    }
  });

  it('encode decoded entries with their manager and subresource, and no empty ones', () => {
    const status = {
      operation: 'Update',
      apiVersion: 'v1',
      time: '2024-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:phase': {} } },
      subresource: 'status',
    };
    const applied = {
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'v1',
      time: '2024-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': { 'f:a': {} } },
      subresource: '',
    };
    const { subresource: _empty, ...appliedWithoutSubresource } = applied;
    // Apply sorts first; the manager-less entry has no manager key, the empty subresource none.
    expect(encodeManagedFields(decodeManagedFields([status, applied]))).toEqual([
      appliedWithoutSubresource,
      status,
    ]);
  });

  it.each([
    [{ manager: 'x', operation: 'Patch', apiVersion: 'v1', fieldsType: 'FieldsV1' }],
    [{ manager: 'x', operation: 'Apply', fieldsType: 'FieldsV1' }],
    [{ manager: 'x', operation: 'Apply', apiVersion: 'v1' }],
    [{ manager: 'x', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV2' }],
    [
      {
        manager: 'x',
        operation: 'Apply',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'k:nope': {} },
      },
    ],
    [{ manager: 'x', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', time: 'yesterday' }],
  ])('reject malformed entry %j', (entry) => {
    expect(() => decodeManagedFields([entry])).toThrow();
  });
});

describe('default manager name', () => {
  it.each([
    ['kubectl/v1.30.0 (linux/amd64) kubernetes/7c48c2b', 'kubectl'],
    ['Go-http-client/1.1', 'Go-http-client'],
    ['no-slash', 'no-slash'],
    ['tab\there/1', 'tabhere'],
    [undefined, ''],
    ['é'.repeat(100), 'é'.repeat(64)],
  ])('from User-Agent %j is %j', (ua, name) => {
    expect(defaultManagerName(ua)).toBe(name);
  });

  it('prefers the fieldManager parameter', () => {
    expect(managerOrUserAgent('kubectl-edit', 'kubectl/v1.30')).toBe('kubectl-edit');
    expect(managerOrUserAgent('', 'kubectl/v1.30')).toBe('kubectl');
  });
});

describe('update operations', () => {
  it('leave an existing untracked object untracked', () => {
    const { object, managedFields } = updateOperation({
      type: CONFIGMAP,
      oldObject: cm({ a: '1' }) as JsonMap,
      newObject: cm({ a: '2' }) as JsonMap,
      manager: 'x',
      apiVersion: 'v1',
      now: NOW,
    });
    expect(managedFields).toEqual([]);
    expect((object['metadata'] as Record<string, unknown>)['managedFields']).toBeUndefined();
  });

  it('take valid client-sent entries, reset on [] and [{}], ignore invalid ones', () => {
    const c = new Cluster(CONFIGMAP, 'v1', 'ConfigMap');
    c.update('creator', cm({ a: '1' }));
    const edited: ManagedFieldsEntry[] = [
      {
        manager: 'someone',
        operation: 'Update',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
    ];
    c.update('writer', cm({ a: '1' }, { managedFields: edited }));
    expect(c.managedFields.map((e) => e.manager)).toEqual(['someone']);
    c.update('writer', cm({ a: '1' }, { managedFields: [{ manager: 'bad', operation: 'Nope' }] }));
    expect(c.managedFields.map((e) => e.manager)).toEqual(['someone']);
    c.update('writer', cm({ a: '1' }, { managedFields: [{}] }));
    expect(c.managedFields).toEqual([]);
    c.update('creator', cm({ a: '1' }, { managedFields: [] }));
    expect(c.managedFields).toEqual([]);
  });

  it('on a subresource record it and ignore client-sent entries', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
    c.update('creator', deployment({ replicas: 1 }));
    const next = { ...structuredClone(c.object), status: { replicas: 1 } } as Record<string, unknown>;
    (next['metadata'] as Record<string, unknown>)['managedFields'] = [];
    c.update('kube-controller-manager', next, 'status');
    expect(c.entry('kube-controller-manager')).toMatchObject({
      subresource: 'status',
      fieldsV1: { 'f:status': { '.': {}, 'f:replicas': {} } },
    });
    expect(c.entry('creator')).toBeDefined();
  });

  it('fold the oldest Update entries beyond the cap into ancient-changes', () => {
    const c = new Cluster(CONFIGMAP, 'v1', 'ConfigMap');
    for (let i = 0; i <= MAX_UPDATE_MANAGERS + 1; i++) {
      c.update(`m${i}`, cm(Object.fromEntries(Array.from({ length: i + 1 }, (_, n) => [`k${n}`, 'v']))));
    }
    const names = c.managedFields.map((e) => e.manager);
    expect(names).toHaveLength(MAX_UPDATE_MANAGERS);
    expect(names).toContain('ancient-changes');
    expect(names).not.toContain('m0');
    expect(names).not.toContain('m1');
    expect(names).not.toContain('m2');
    // m0 created data (and data.k0); m1, m2 added k1, k2: all kept, now under ancient-changes.
    expect(FieldSet.fromFieldsV1(c.entry('ancient-changes')?.fieldsV1).toString()).toBe(
      '.data\n.data.k0\n.data.k1\n.data.k2',
    );
  });
});

describe('apply operations', () => {
  it('give existing fields of an untracked object to before-first-apply', () => {
    const live = cm({ a: '1' }) as JsonMap;
    const err = (() => {
      try {
        applyOperation({
          type: CONFIGMAP,
          live,
          config: cm({ a: '2' }) as JsonMap,
          kind: 'ConfigMap',
          manager: 'x',
          force: false,
          apiVersion: 'v1',
          now: NOW,
        });
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(err?.message).toBe(
      'Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a',
    );
    const ok = applyOperation({
      type: CONFIGMAP,
      live,
      config: cm({ b: '2' }) as JsonMap,
      kind: 'ConfigMap',
      manager: 'x',
      force: false,
      apiVersion: 'v1',
      now: NOW,
    });
    expect(ok.managedFields.map((e) => [e.manager, e.operation, e.time])).toEqual([
      ['x', 'Apply', '2024-05-01T12:00:00Z'],
      ['before-first-apply', 'Update', '2024-05-01T12:00:00Z'],
    ]);
  });

  it('do not let anyone own ignored fields (status on the main resource)', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment', FieldSet.fromPaths([[f('status')]]));
    c.apply('x', { ...deployment({ replicas: 1 }), status: { replicas: 9 } });
    expect(c.entry('x')?.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
  });

  it('record the subresource on the Apply entry', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
    c.apply('ctl', { ...deployment({}), status: { replicas: 2 } }, false, 'status');
    expect(c.entry('ctl')).toMatchObject({ operation: 'Apply', subresource: 'status' });
  });

  it.each([
    [
      'a wrong kind',
      { ...cm({}), kind: 'Secret' },
      'INVALID_OBJECT_TYPE',
      'invalid object type: /v1, Kind=Secret',
    ],
    [
      'a wrong version',
      { ...cm({}), apiVersion: 'v2' },
      'INVALID_OBJECT_TYPE',
      'invalid object type: /v2, Kind=ConfigMap',
    ],
    [
      'managedFields',
      cm({}, { managedFields: [] }),
      'MANAGED_FIELDS_IN_CONFIG',
      'metadata.managedFields must be nil',
    ],
    [
      'an undeclared field',
      { ...cm({}), datum: {} },
      'INVALID_CONFIG',
      'failed to create typed patch object (default/c; /v1, Kind=ConfigMap): .datum: field not declared in schema',
    ],
  ])('refuse %s', (_what, config, code, message) => {
    const err = applyError(() =>
      applyOperation({
        type: CONFIGMAP,
        live: undefined,
        config: config as JsonMap,
        kind: 'ConfigMap',
        manager: 'x',
        force: false,
        apiVersion: 'v1',
        now: NOW,
      }),
    );
    expect(err.code).toBe(code);
    expect(err.message).toBe(message);
    expect(APPLY_ERROR_STATUS[err.code].code).toBe(400);
  });

  it('refuse undecodable stored entries (500)', () => {
    const live = cm({ a: '1' }, { managedFields: [{ manager: 'x', operation: 'Apply' }] }) as JsonMap;
    const err = applyError(() =>
      applyOperation({
        type: CONFIGMAP,
        live,
        config: cm({ a: '1' }) as JsonMap,
        kind: 'ConfigMap',
        manager: 'x',
        force: false,
        apiVersion: 'v1',
        now: NOW,
      }),
    );
    expect(err.code).toBe('INVALID_MANAGED_FIELDS');
    expect(APPLY_ERROR_STATUS[err.code]).toEqual({ reason: 'InternalError', code: 500 });
  });

  it('create objects, with the entry timed', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
    const r = c.apply('x', deployment(podSpec([container('a', 'a:1')])));
    expect(r.changed).toBe(true);
    expect(r.managedFields).toHaveLength(1);
    expect(r.managedFields[0]).toMatchObject({
      manager: 'x',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      time: '2024-05-01T12:00:01Z',
    });
    expect(r.object['spec']).toEqual(podSpec([container('a', 'a:1')]));
  });
});
