/**
 * Properties of random write sequences by a few managers on Deployments, ConfigMaps and
 * Services, checked after every write against a small model:
 *
 * - owned: every field of a tracked object is owned by an entry of a manager that set it;
 * - applied: an applier's entry holds exactly what it last applied, minus what later writes by
 *   others changed or removed (taken by force, by an update, or pruned);
 * - idempotent: applying the configuration just applied again changes nothing (object, entries, times);
 * - merge agrees with strategic merge patch on list-map and set merges.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ApplyConflictError,
  FieldSet,
  compare,
  ensureNamedFieldsAreMembers,
  fieldElement as f,
  fieldSetOf,
  merge,
  pathToString,
  type StructType,
  type TypeNode,
} from '../../src/apply/index.js';
import { compareStrings, isJsonMap, type JsonMap, type JsonValue } from '../../src/apply/value.js';
import { applyStrategicMergePatch } from '../../src/resource/patch/strategic-merge.js';
import { patchSchemaFrom } from '../../src/resource/patch/schema-adapter.js';
import { loadSchemas } from '../../src/registry/schema.js';
import { configMapManifest, deploymentManifest, serviceManifest } from './arbitraries.js';
import { Cluster } from './cluster.js';
import { CONFIGMAP, DEPLOYMENT, SERVICE } from './support.js';

const STRIPPED = FieldSet.fromPaths([
  [f('apiVersion')],
  [f('kind')],
  [f('metadata'), f('name')],
  [f('metadata'), f('namespace')],
]);

type Op =
  | {
      readonly kind: 'apply';
      readonly manager: string;
      readonly config: Record<string, unknown>;
      readonly force: boolean;
    }
  | {
      readonly kind: 'update';
      readonly manager: string;
      readonly body: Record<string, unknown>;
      readonly sendManaged: boolean;
    };

function ops(manifest: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Op[]> {
  const apply = fc.record({
    kind: fc.constant('apply' as const),
    manager: fc.constantFrom('a', 'b', 'c'),
    config: manifest,
    force: fc.boolean(),
  });
  const update = fc.record({
    kind: fc.constant('update' as const),
    manager: fc.constantFrom('u', 'v', 'a'),
    body: manifest,
    sendManaged: fc.boolean(),
  });
  return fc.array(fc.oneof({ arbitrary: apply, weight: 3 }, { arbitrary: update, weight: 1 }), {
    minLength: 1,
    maxLength: 8,
  });
}

function content(obj: JsonMap | undefined): JsonMap | undefined {
  if (obj === undefined) return undefined;
  const { managedFields: _m, ...meta } = obj['metadata'] as JsonMap;
  return { ...obj, metadata: meta };
}

const key = (manager: string, operation: string): string => `${manager}|${operation}`;

/** Runs `sequence`, checking the model after every successful write. */
function check(type: StructType, apiVersion: string, kind: string, sequence: Op[]): void {
  const c = new Cluster(type, apiVersion, kind);
  const applied = new Map<string, FieldSet>();
  const everSet = new Map<string, FieldSet>();
  const addEver = (k: string, s: FieldSet): void => {
    everSet.set(k, (everSet.get(k) ?? FieldSet.EMPTY).union(s));
  };
  for (const op of sequence) {
    const before = content(c.object);
    const entriesBefore = c.managedFields;
    try {
      if (op.kind === 'apply') c.apply(op.manager, op.config, op.force);
      else {
        const body = structuredClone(op.body);
        if (op.sendManaged && entriesBefore.length > 0)
          (body['metadata'] as JsonMap)['managedFields'] = structuredClone(
            entriesBefore,
          ) as unknown as JsonValue;
        c.update(op.manager, body);
      }
    } catch (err) {
      // Only an unforced apply may fail, and it changes nothing.
      if (!(err instanceof ApplyConflictError) || op.kind !== 'apply' || op.force) throw err;
      expect(content(c.object)).toEqual(before);
      expect(c.managedFields).toEqual(entriesBefore);
      continue;
    }
    const after = content(c.object) as JsonMap;
    const ch = compare(before, after, type);
    const changed = ch.modified.union(ch.added).union(ch.removed);
    for (const [m, set] of applied) {
      if (op.kind === 'apply' && op.manager === m) continue;
      applied.set(m, set.difference(changed));
    }
    if (op.kind === 'apply') {
      const set = fieldSetOf(op.config as JsonValue, type, 'config').difference(STRIPPED);
      applied.set(op.manager, set);
      addEver(key(op.manager, 'Apply'), set);
    } else {
      addEver(key(op.manager, 'Update'), ch.modified.union(ch.added));
    }

    // applied: each applier's entry is the model.
    for (const [m, model] of applied) {
      const entry = c.entry(m, 'Apply');
      const actual = entry === undefined ? FieldSet.EMPTY : FieldSet.fromFieldsV1(entry.fieldsV1);
      expect(actual.toString(), `entry of ${m}`).toBe(model.toString());
    }

    // owned: every field of a tracked object has an owner that set it.
    if (c.managedFields.length > 0) {
      const fields = fieldSetOf(after, type, 'live').difference(STRIPPED);
      for (const p of fields.paths()) {
        const owners = c.managedFields.filter((e) => FieldSet.fromFieldsV1(e.fieldsV1).has(p));
        const legit = owners.some(
          (e) =>
            e.manager === 'before-first-apply' ||
            (everSet.get(key(e.manager ?? '', e.operation))?.has(p) ?? false),
        );
        expect(legit, `owner of ${pathToString(p)} among ${owners.map((e) => e.manager).join(',')}`).toBe(
          true,
        );
      }
    }

    // idempotent: applying the same configuration again is a no-op. (An apply that leaves the
    // object with no entries at all leaves it untracked, and the next apply first gives its
    // fields to before-first-apply, as kube does.)
    if (op.kind === 'apply' && c.managedFields.length > 0) {
      const snapshot = structuredClone(c.object);
      const again = c.apply(op.manager, op.config);
      expect(again.changed).toBe(false);
      expect(again.object).toEqual(snapshot);
    }
  }
}

const RUNS = { numRuns: 100 };

describe('random write sequences', () => {
  it('Deployment', () => {
    fc.assert(
      fc.property(ops(deploymentManifest()), (seq) => check(DEPLOYMENT, 'apps/v1', 'Deployment', seq)),
      RUNS,
    );
  });
  it('ConfigMap', () => {
    fc.assert(
      fc.property(ops(configMapManifest), (seq) => check(CONFIGMAP, 'v1', 'ConfigMap', seq)),
      RUNS,
    );
  });
  it('Service', () => {
    fc.assert(
      fc.property(ops(serviceManifest()), (seq) => check(SERVICE, 'v1', 'Service', seq)),
      RUNS,
    );
  });
});

/** The value with list-map and set items sorted by key: SMP and SMD order new items differently. */
function normalized(v: JsonValue | undefined, t: TypeNode): JsonValue | undefined {
  if (v === undefined || v === null) return v;
  if (t.kind === 'list' && Array.isArray(v)) {
    if (t.relationship === 'atomic') return v;
    const items = v.map((item) => normalized(item, t.element) as JsonValue);
    const id = (item: JsonValue): string =>
      t.relationship === 'set'
        ? JSON.stringify(item)
        : t.keys.map((k) => JSON.stringify((item as JsonMap)[k] ?? t.keyDefaults.get(k))).join('/');
    return items.sort((x, y) => compareStrings(id(x), id(y)));
  }
  if ((t.kind === 'struct' || t.kind === 'map') && isJsonMap(v)) {
    const out: JsonMap = {};
    for (const k of Object.keys(v).sort(compareStrings)) {
      const ct = t.kind === 'struct' ? t.field(k) : t.element;
      const nv = normalized(v[k], ct ?? { kind: 'leaf', scalar: false }) as JsonValue;
      // Apply stores JSON as Go would: no empty omitempty lists and maps, no emptied structs.
      const empty = (Array.isArray(nv) && nv.length === 0) || (isJsonMap(nv) && Object.keys(nv).length === 0);
      if (t.kind === 'struct' && empty && ct?.kind !== 'leaf' && t.omitsEmpty(k)) continue;
      out[k] = nv;
    }
    return out;
  }
  return v;
}

describe('named-field closure', () => {
  it('in one walk equals ensureNamedFieldsAreMembers of the walk', () => {
    fc.assert(
      fc.property(fc.oneof(deploymentManifest(), serviceManifest()), (m) => {
        const type = m['kind'] === 'Service' ? SERVICE : DEPLOYMENT;
        const once = fieldSetOf(m as JsonValue, type, 'live', true);
        expect(once.toString()).toBe(
          ensureNamedFieldsAreMembers(fieldSetOf(m as JsonValue, type, 'live'), type).toString(),
        );
      }),
      { numRuns: 200 },
    );
  });
});

describe('merge agrees with strategic merge patch', () => {
  const schema = patchSchemaFrom(loadSchemas());
  it.each([
    ['Deployment', DEPLOYMENT, 'k8s.io.api.apps.v1.Deployment', deploymentManifest({ atomics: false })],
    ['Service', SERVICE, 'k8s.io.api.core.v1.Service', serviceManifest({ atomics: false })],
  ])('on %s list-maps and sets', (_name, type, message, manifest) => {
    fc.assert(
      fc.property(manifest, manifest, (live, config) => {
        const applied = merge(live as JsonValue, config as JsonValue, type);
        const patched = applyStrategicMergePatch(structuredClone(live), config, message, schema) as JsonValue;
        expect(normalized(applied, type)).toEqual(normalized(patched, type));
      }),
      { numRuns: 300 },
    );
  });
});
