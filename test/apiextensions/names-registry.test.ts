/**
 * The pure parts of CRD serving: kube's naming rules (accepted names, conflicts, the conditions
 * they give), kube's version priority, and the layered registry (built-ins win, custom types
 * come and go, groups and versions in discovery order, a generation per change).
 */
import { describe, expect, it } from 'vitest';
import { computeNames, readDefinition, type Definition } from '../../src/apiextensions/index.js';
import { compareKubeVersions, LayeredRegistry } from '../../src/registry/layered.js';
import { loadRegistry } from '../../src/registry/registry.js';
import { servedTypes } from '../../src/apiextensions/definition.js';

function crd(
  name: string,
  group: string,
  names: Record<string, unknown>,
  accepted?: Record<string, unknown>,
  versions = ['v1'],
): Definition {
  return readDefinition({
    metadata: { name },
    spec: {
      group,
      scope: 'Namespaced',
      names,
      versions: versions.map((v, i) => ({ name: v, served: true, storage: i === 0 })),
    },
    ...(accepted === undefined ? {} : { status: { acceptedNames: accepted } }),
  });
}

describe('accepted names', () => {
  it('takes free names and defaults singular and listKind', () => {
    const def = crd('foos.a.io', 'a.io', { plural: 'foos', kind: 'Foo', shortNames: ['f'] });
    const out = computeNames(def, [def]);
    expect(out.acceptedNames).toEqual({
      plural: 'foos',
      singular: 'foo',
      shortNames: ['f'],
      kind: 'Foo',
      listKind: 'FooList',
      categories: [],
    });
    expect(out.namesAccepted).toMatchObject({ status: 'True', reason: 'NoConflicts' });
    expect(out.established).toMatchObject({ status: 'False', reason: 'Installing' });
  });

  it('keeps names another CRD of the group holds and reports the conflict', () => {
    const owner = crd(
      'foos.a.io',
      'a.io',
      { plural: 'foos', kind: 'Foo' },
      {
        plural: 'foos',
        singular: 'foo',
        shortNames: ['f'],
        kind: 'Foo',
        listKind: 'FooList',
      },
    );
    const other = crd('bars.a.io', 'a.io', { plural: 'bars', kind: 'Bar', shortNames: ['f'] });
    const out = computeNames(other, [owner, other]);
    expect(out.namesAccepted).toMatchObject({
      status: 'False',
      reason: 'ShortNamesConflict',
      message: '"f" is already in use',
    });
    expect(out.acceptedNames.plural).toBe('bars');
    expect(out.acceptedNames.shortNames).toEqual([]);
    expect(out.established).toMatchObject({ status: 'False', reason: 'NotAccepted' });
    // Another group's names never conflict.
    const elsewhere = crd('bars.b.io', 'b.io', { plural: 'bars', kind: 'Bar', shortNames: ['f'] });
    expect(computeNames(elsewhere, [owner, elsewhere]).namesAccepted.status).toBe('True');
  });
});

describe('kube version priority', () => {
  it('orders GA, beta, alpha, then other versions', () => {
    const sorted = ['v1alpha1', 'foo', 'v2beta1', 'v1', 'v11alpha2', 'v2', 'v1beta2', 'bar'].sort(
      compareKubeVersions,
    );
    expect(sorted).toEqual(['v2', 'v1', 'v2beta1', 'v1beta2', 'v11alpha2', 'v1alpha1', 'bar', 'foo']);
  });
});

describe('the layered registry', () => {
  it('adds and removes custom types, keeps built-ins first, bumps its generation', () => {
    const registry = new LayeredRegistry(loadRegistry());
    const before = registry.all().length;
    const def = crd(
      'foos.a.io',
      'a.io',
      { plural: 'foos', kind: 'Foo' },
      { plural: 'foos', singular: 'foo', kind: 'Foo', listKind: 'FooList' },
      ['v1beta1', 'v1'],
    );
    registry.setCustom(def.name, servedTypes(def));
    expect(registry.generation).toBe(1);
    expect(registry.byResource('a.io', 'v1', 'foos')?.storageResource).toBe('a.io/foos');
    expect(registry.byKind('a.io', 'v1beta1', 'Foo')?.plural).toBe('foos');
    expect(registry.group('a.io')).toEqual({
      name: 'a.io',
      versions: ['v1', 'v1beta1'],
      preferredVersion: 'v1',
    });
    expect(registry.groups().at(-1)?.name).toBe('a.io');
    expect(registry.all()).toHaveLength(before + 2);
    // A custom type can never shadow a built-in one.
    registry.setCustom('evil', [
      { ...servedTypes(def)[0]!, group: 'apps', version: 'v1', plural: 'deployments' },
    ]);
    expect(registry.byResource('apps', 'v1', 'deployments')?.messageType).toBe(
      'k8s.io.api.apps.v1.Deployment',
    );
    registry.removeCustom('evil');
    expect(registry.removeCustom(def.name)).toBe(true);
    expect(registry.byResource('a.io', 'v1', 'foos')).toBeUndefined();
    expect(registry.group('a.io')).toBeUndefined();
    expect(registry.all()).toHaveLength(before);
    expect(registry.generation).toBe(4);
  });
});
