/**
 * How schema markers become apply's list, map and struct kinds, on a small synthetic schema
 * (the generated one has no list marked only for strategic merge patch) and on real kinds.
 */
import { describe, expect, it } from 'vitest';
import {
  ObjectTypes,
  fieldSetOf,
  pathToString,
  type ListType,
  type TypeNode,
} from '../../src/apply/index.js';
import { SchemaSet } from '../../src/registry/schema.js';
import type { JsonValue } from '../../src/apply/value.js';
import { DEPLOYMENT, POD, types } from './support.js';

const doc = {
  '//': 'test',
  format: 1,
  messages: {
    't.Root': {
      fields: [
        {
          name: 'byMergeKey',
          number: 1,
          label: 'repeated',
          type: 't.Item',
          patchStrategy: 'merge',
          patchMergeKey: 'id',
        },
        { name: 'mergedScalars', number: 2, label: 'repeated', type: 'string', patchStrategy: 'merge' },
        { name: 'retained', number: 3, label: 'repeated', type: 't.Item', patchStrategy: 'retainKeys' },
        { name: 'plain', number: 4, label: 'repeated', type: 't.Item' },
        {
          name: 'keyed',
          number: 5,
          label: 'repeated',
          type: 't.Item',
          listType: 'map',
          listMapKeys: ['id'],
          patchStrategy: 'merge',
          patchMergeKey: 'other',
        },
        { name: 'atomicMap', number: 6, label: 'map', keyType: 'string', type: 'string', mapType: 'atomic' },
        { name: 'granularRef', number: 7, type: 't.AtomicStruct', structType: 'granular' },
        { name: 'atomicRef', number: 8, type: 't.AtomicStruct' },
        { name: 'words', number: 9, type: 't.Words' },
        { name: 'when', number: 10, type: 'k8s.io.apimachinery.pkg.apis.meta.v1.Time' },
        { name: 'inner', number: 11, type: 't.Item', inline: true },
      ],
    },
    't.Item': {
      fields: [
        { name: 'id', number: 1, type: 'string' },
        { name: 'v', number: 2, type: 'int32' },
      ],
    },
    't.AtomicStruct': { structType: 'atomic', fields: [{ name: 'a', number: 1, type: 'string' }] },
    't.Words': { fields: [{ name: 'items', number: 1, label: 'repeated', type: 'string' }] },
  },
};
const root = new ObjectTypes(SchemaSet.fromDocument(doc)).forMessage('t.Root');
const list = (t: TypeNode | undefined): Pick<ListType, 'relationship' | 'keys'> => {
  if (t?.kind !== 'list') throw new Error('not a list');
  return { relationship: t.relationship, keys: t.keys };
};

describe('markers', () => {
  it('lists: listType wins; else merge+key is a map, merge alone a set, anything else atomic', () => {
    expect(list(root.field('byMergeKey'))).toEqual({ relationship: 'map', keys: ['id'] });
    expect(list(root.field('mergedScalars'))).toEqual({ relationship: 'set', keys: [] });
    expect(list(root.field('retained'))).toEqual({ relationship: 'atomic', keys: [] });
    expect(list(root.field('plain'))).toEqual({ relationship: 'atomic', keys: [] });
    expect(list(root.field('keyed'))).toEqual({ relationship: 'map', keys: ['id'] });
  });

  it('maps, structs, wrappers, wire types and inline fields', () => {
    expect(root.field('atomicMap')).toMatchObject({ kind: 'map', atomic: true });
    expect(root.field('granularRef')).toMatchObject({ kind: 'struct', atomic: false });
    expect(root.field('atomicRef')).toMatchObject({ kind: 'struct', atomic: true });
    expect(root.field('words')).toMatchObject({ kind: 'leaf' });
    expect(root.field('when')).toMatchObject({ kind: 'leaf', scalar: true });
    expect(root.field('v')).toMatchObject({ kind: 'leaf', scalar: true });
    expect(root.field('inner')).toBeUndefined();
    expect(root.field('apiVersion')).toBeUndefined();
  });

  it('kinds declare apiVersion and kind; messages do not', () => {
    expect(DEPLOYMENT.field('kind')).toMatchObject({ kind: 'leaf' });
    expect(types.forMessage('k8s.io.api.apps.v1.Deployment').field('kind')).toBeUndefined();
  });

  it('a field-level structType overrides the message (PersistentVolume claimRef is granular)', () => {
    const pv = types.forKind('k8s.io.api.core.v1.PersistentVolume');
    const value = { spec: { claimRef: { name: 'c', namespace: 'n' } } };
    expect(
      fieldSetOf(value as JsonValue, pv, 'config')
        .paths()
        .map(pathToString),
    ).toEqual(['.spec.claimRef.name', '.spec.claimRef.namespace']);
    const pod = {
      spec: {
        containers: [
          { name: 'c', env: [{ name: 'E', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }] },
        ],
      },
    };
    expect(
      fieldSetOf(pod as JsonValue, POD, 'config')
        .paths()
        .map(pathToString),
    ).toContain('.spec.containers[name="c"].env[name="E"].valueFrom.secretKeyRef');
  });
});
