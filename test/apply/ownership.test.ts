/**
 * The ownership transitions of the interface spec ("States and transitions"), each for plain
 * fields, list-map items (containers by name, ports by containerPort+protocol) and map entries
 * (labels), with kube's conflict error shape.
 */
import { describe, expect, it } from 'vitest';
import { APPLY_ERROR_STATUS, ApplyConflictError, FieldSet } from '../../src/apply/index.js';
import { Cluster } from './cluster.js';
import { DEPLOYMENT, container, deployment, podSpec } from './support.js';

const spec = (replicas: number, containers = [container('app', 'app:1', [[80]])]) => ({
  replicas,
  ...podSpec(containers),
});

function conflictOf(f: () => unknown): ApplyConflictError {
  try {
    f();
  } catch (err) {
    if (err instanceof ApplyConflictError) return err;
    throw err;
  }
  throw new Error('expected a conflict');
}

function owned(c: Cluster, manager: string): string[] {
  const e = c.entry(manager);
  return e === undefined ? [] : FieldSet.fromFieldsV1(e.fieldsV1).leaves().toString().split('\n');
}

function fresh(): Cluster {
  const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
  c.apply('a', deployment(spec(1), { labels: { team: 'x' } }));
  return c;
}

const replicas = (c: Cluster): unknown => (c.object?.['spec'] as { replicas?: number }).replicas;

describe('Apply by B with a different value, no force', () => {
  it("fails with kube's conflict status and leaves the object unchanged", () => {
    const c = fresh();
    const before = structuredClone(c.object);
    const err = conflictOf(() => c.apply('b', deployment({ replicas: 2 })));
    expect(err.code).toBe('APPLY_CONFLICT');
    expect(APPLY_ERROR_STATUS[err.code]).toEqual({ reason: 'Conflict', code: 409 });
    expect(err.message).toBe('Apply failed with 1 conflict: conflict with "a": .spec.replicas');
    expect(err.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.spec.replicas' },
    ]);
    expect(c.object).toEqual(before);
  });

  it('names Update managers with their version, and lists several conflicts per manager', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
    c.update('kubectl-client-side-apply', deployment(spec(1), { labels: { team: 'x' } }));
    const err = conflictOf(() =>
      c.apply(
        'b',
        deployment(
          { replicas: 3, ...podSpec([container('app', 'app:2', [[80]])]) },
          { labels: { team: 'y' } },
        ),
      ),
    );
    const who = '"kubectl-client-side-apply" using apps/v1';
    expect(err.message).toBe(
      `Apply failed with 3 conflicts: conflicts with ${who}:\n- .metadata.labels.team\n- .spec.replicas\n- .spec.template.spec.containers[name="app"].image`,
    );
    expect(err.causes.map((x) => [x.message, x.field])).toEqual([
      [`conflict with ${who}`, '.metadata.labels.team'],
      [`conflict with ${who}`, '.spec.replicas'],
      [`conflict with ${who}`, '.spec.template.spec.containers[name="app"].image'],
    ]);
    expect(err.conflicts[0]).toMatchObject({
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      apiVersion: 'apps/v1',
    });
  });

  it.each([
    [
      'a container',
      deployment(podSpec([container('app', 'app:2', [[80]])])),
      '.spec.template.spec.containers[name="app"].image',
    ],
    [
      'a port',
      deployment(podSpec([{ name: 'app', ports: [{ containerPort: 80, protocol: 'TCP', name: 'http' }] }])),
      '.spec.template.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"].name',
    ],
    ['a label', deployment({}, { labels: { team: 'y' } }), '.metadata.labels.team'],
  ])('conflicts on %s', (_what, config, field) => {
    const c = fresh();
    if (field.endsWith('.name'))
      c.apply(
        'a',
        deployment(podSpec([{ ...container('app', 'app:1'), ports: [{ containerPort: 80, name: 'web' }] }])),
      );
    expect(conflictOf(() => c.apply('b', config)).causes.map((x) => x.field)).toEqual([field]);
  });
});

describe('Apply by B with force=true', () => {
  it("takes the field: owned by B only, removed from A's entry", () => {
    const c = fresh();
    c.apply('b', deployment({ replicas: 2 }), true);
    expect(replicas(c)).toBe(2);
    expect(owned(c, 'b')).toEqual(['.spec.replicas']);
    expect(owned(c, 'a')).not.toContain('.spec.replicas');
    expect(owned(c, 'a')).toContain('.metadata.labels.team');
  });

  it('drops an entry left with nothing', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
    c.apply('a', deployment({ replicas: 1 }));
    c.apply('b', deployment({ replicas: 2 }), true);
    expect(c.managedFields.map((e) => e.manager)).toEqual(['b']);
  });
});

describe('Apply by B with the same value', () => {
  it('shares the field; a later change by either sharer conflicts with the other', () => {
    const c = fresh();
    c.apply('b', deployment({ replicas: 1 }));
    expect(owned(c, 'a')).toContain('.spec.replicas');
    expect(owned(c, 'b')).toEqual(['.spec.replicas']);
    expect(conflictOf(() => c.apply('a', deployment(spec(5), { labels: { team: 'x' } }))).causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "b"', field: '.spec.replicas' },
    ]);
    expect(conflictOf(() => c.apply('b', deployment({ replicas: 7 }))).causes.map((x) => x.message)).toEqual([
      'conflict with "a"',
    ]);
  });

  it('shares list-map items and map entries too', () => {
    const c = fresh();
    c.apply('b', deployment(podSpec([container('app', 'app:1', [[80]])]), { labels: { team: 'x' } }));
    const item = '.spec.template.spec.containers[name="app"]';
    expect(owned(c, 'b')).toEqual(
      expect.arrayContaining([
        '.metadata.labels.team',
        `${item}.image`,
        `${item}.ports[containerPort=80,protocol="TCP"].containerPort`,
      ]),
    );
    expect(owned(c, 'a')).toEqual(expect.arrayContaining(['.metadata.labels.team', `${item}.image`]));
  });
});

describe('Update (POST, PUT, non-apply PATCH) by B', () => {
  it('takes the fields it changes without conflict', () => {
    const c = fresh();
    const next = structuredClone(c.object) as {
      spec: { replicas: number };
      metadata: { labels: Record<string, string> };
    };
    next.spec.replicas = 4;
    next.metadata.labels['team'] = 'z';
    c.update('kube-controller-manager', next);
    expect(replicas(c)).toBe(4);
    expect(c.entry('kube-controller-manager')).toMatchObject({
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: '2024-05-01T12:00:02Z',
    });
    expect(owned(c, 'kube-controller-manager')).toEqual(['.metadata.labels.team', '.spec.replicas']);
    expect(owned(c, 'a')).not.toContain('.spec.replicas');
    // A now conflicts with the updater when it re-applies its old value.
    expect(
      conflictOf(() => c.apply('a', deployment(spec(1), { labels: { team: 'x' } }))).causes[0]?.message,
    ).toBe('conflict with "kube-controller-manager" using apps/v1');
  });

  it('records an Update entry on create with the maps that appeared marked "."', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
    c.update('kubectl-create', deployment({ replicas: 1 }, { labels: { app: 'web' } }));
    expect(c.managedFields).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: '2024-05-01T12:00:01Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': { '.': {}, 'f:replicas': {} },
        },
      },
    ]);
  });

  it('keeps the entry and its time when a write changes nothing', () => {
    const c = new Cluster(DEPLOYMENT, 'apps/v1', 'Deployment');
    c.update('u', deployment({ replicas: 1 }));
    const before = c.managedFields;
    c.update('u', structuredClone(c.object) as Record<string, unknown>);
    expect(c.managedFields).toEqual(before);
  });
});

describe('A applies without a field it alone owns', () => {
  it.each([
    [
      'a plain field',
      deployment(podSpec([container('app', 'app:1', [[80]])]), { labels: { team: 'x' } }),
      (c: Cluster) => replicas(c) === undefined,
    ],
    [
      'a container',
      deployment({ replicas: 1, ...podSpec([container('other', 'o:1')]) }, { labels: { team: 'x' } }),
      (c: Cluster) => JSON.stringify(c.object).includes('"app:1"') === false,
    ],
    [
      'a port',
      deployment(spec(1, [container('app', 'app:1')]), { labels: { team: 'x' } }),
      (c: Cluster) => JSON.stringify(c.object).includes('containerPort') === false,
    ],
    [
      'a label',
      deployment(spec(1)),
      (c: Cluster) => (c.object?.['metadata'] as { labels?: unknown }).labels === undefined,
    ],
  ])('deletes %s (defaulting may reset it later)', (_what, config, gone) => {
    const c = fresh();
    c.apply('a', config);
    expect(gone(c)).toBe(true);
  });

  it.each([
    [
      'a plain field',
      deployment({ replicas: 1 }),
      deployment(podSpec([container('app', 'app:1', [[80]])]), { labels: { team: 'x' } }),
      (c: Cluster) => replicas(c) === 1,
    ],
    [
      'a container',
      deployment(podSpec([container('app', 'app:1')])),
      deployment({ replicas: 1, ...podSpec([container('other', 'o:1')]) }, { labels: { team: 'x' } }),
      (c: Cluster) => JSON.stringify(c.object).includes('"app:1"'),
    ],
    [
      'a label',
      deployment({}, { labels: { team: 'x' } }),
      deployment(spec(1)),
      (c: Cluster) => JSON.stringify(c.object).includes('"team"'),
    ],
  ])('keeps %s another manager also owns', (_what, shared, config, kept) => {
    const c = fresh();
    c.apply('b', shared);
    c.apply('a', config);
    expect(kept(c)).toBe(true);
  });

  it("keeps a field that an updater changed since (it is no longer only A's)", () => {
    const c = fresh();
    const next = structuredClone(c.object) as { spec: { replicas: number } };
    next.spec.replicas = 3;
    c.update('hpa', next);
    c.apply('a', deployment(podSpec([container('app', 'app:1', [[80]])]), { labels: { team: 'x' } }));
    expect(replicas(c)).toBe(3);
  });
});

describe('re-applying the same configuration', () => {
  it('changes nothing: same object, same entries and times', () => {
    const c = fresh();
    const before = structuredClone(c.object);
    const result = c.apply('a', deployment(spec(1), { labels: { team: 'x' } }));
    expect(result.changed).toBe(false);
    expect(result.object).toEqual(before);
  });
});
