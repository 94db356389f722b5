/**
 * Merging configurations into live objects (list-maps by key, sets unioned, atomics replaced,
 * SMD's item order) and pruning what an applier stopped applying.
 */
import { describe, expect, it } from 'vitest';
import {
  FieldSet,
  apply,
  fieldElement as f,
  fieldSetOf,
  keyElement as k,
  merge,
} from '../../src/apply/index.js';
import type { JsonMap, JsonValue } from '../../src/apply/value.js';
import { DEPLOYMENT, POD, container, deployment, podSpec } from './support.js';

const j = (v: unknown): JsonValue => v as JsonValue;
const names = (d: unknown): string[] =>
  (
    (d as { spec: { template: { spec: { containers: { name: string }[] } } } }).spec.template.spec
      .containers ?? []
  ).map((c) => c.name);
const withContainers = (...ns: string[]): JsonMap =>
  j(deployment(podSpec(ns.map((n) => container(n, `${n}:1`))))) as JsonMap;

describe('merge', () => {
  it('merges list-map items by key and keeps live-only fields of shared items', () => {
    const live = deployment(
      podSpec([{ ...container('a', 'a:1'), imagePullPolicy: 'Always' }, container('b', 'b:1')]),
    );
    const config = deployment(podSpec([container('a', 'a:2', [[80]])]));
    const out = merge(j(live), j(config), DEPLOYMENT) as JsonMap;
    expect((out as { spec: { template: { spec: unknown } } }).spec.template.spec).toEqual({
      containers: [
        { name: 'a', image: 'a:2', imagePullPolicy: 'Always', ports: [{ containerPort: 80 }] },
        container('b', 'b:1'),
      ],
    });
  });

  it.each([
    [
      ['a', 'b', 'c'],
      ['c', 'b'],
      ['a', 'c', 'b'],
    ],
    [['a', 'b'], ['c'], ['a', 'b', 'c']],
    [
      ['a', 'b'],
      ['c', 'a'],
      ['c', 'a', 'b'],
    ],
    // SMD places live-only items before configuration items that come later than shared ones.
    [
      ['a', 'b', 'c'],
      ['b', 'x', 'a'],
      ['b', 'c', 'x', 'a'],
    ],
    [[], ['a', 'b'], ['a', 'b']],
  ])('orders items of live %j and config %j as %j', (live, config, expected) => {
    expect(names(merge(j(withContainers(...live)), j(withContainers(...config)), DEPLOYMENT))).toEqual(
      expected,
    );
  });

  it('unions sets and replaces atomic lists, maps and structs', () => {
    const live = {
      metadata: { finalizers: ['a', 'b'] },
      spec: {
        selector: { matchLabels: { app: 'x' }, matchExpressions: [{ key: 'k', operator: 'Exists' }] },
        template: {
          spec: { nodeSelector: { a: '1', b: '2' }, containers: [{ name: 'c', args: ['1', '2'] }] },
        },
      },
    };
    const config = {
      metadata: { finalizers: ['c', 'a'] },
      spec: {
        selector: { matchLabels: { app: 'y' } },
        template: { spec: { nodeSelector: { c: '3' }, containers: [{ name: 'c', args: ['3'] }] } },
      },
    };
    expect(merge(j(live), j(config), DEPLOYMENT)).toEqual({
      metadata: { finalizers: ['c', 'a', 'b'] },
      spec: {
        selector: { matchLabels: { app: 'y' } },
        template: { spec: { nodeSelector: { c: '3' }, containers: [{ name: 'c', args: ['3'] }] } },
      },
    });
  });

  it('merges granular maps entry by entry and drops fields set to null', () => {
    const live = { metadata: { labels: { a: '1', b: '2' } }, spec: { replicas: 3, paused: true } };
    const config = { metadata: { labels: { b: '3', c: '4' } }, spec: { replicas: null } };
    expect(merge(j(live), j(config), DEPLOYMENT)).toEqual({
      metadata: { labels: { a: '1', b: '3', c: '4' } },
      spec: { paused: true },
    });
  });

  it('replaces every live duplicate of a key with the applied item, keeps untouched duplicates', () => {
    const env = (...pairs: [string, string][]): JsonValue =>
      j({ spec: { containers: [{ name: 'c', env: pairs.map(([name, value]) => ({ name, value })) }] } });
    const live = env(['A', '1'], ['B', '2'], ['A', '3']);
    expect(merge(live, env(['A', '9']), POD)).toEqual(env(['A', '9'], ['B', '2']));
    expect(merge(live, env(['C', '9']), POD)).toEqual(env(['A', '1'], ['B', '2'], ['A', '3'], ['C', '9']));
  });

  it('stores what Go would: no empty omitempty lists or maps, empty structs kept', () => {
    const live = { spec: { template: { spec: { containers: [{ name: 'c' }] } } } };
    const config = {
      metadata: { finalizers: [], labels: {} },
      spec: {
        template: {
          spec: {
            containers: [{ name: 'c', env: [], ports: [] }],
            volumes: [
              { name: 'v', emptyDir: { sizeLimit: null } },
              { name: 'w', emptyDir: {} },
            ],
          },
        },
      },
    };
    expect(merge(j(live), j(config), DEPLOYMENT)).toEqual({
      metadata: {},
      spec: {
        template: {
          spec: {
            containers: [{ name: 'c' }],
            volumes: [
              { name: 'v', emptyDir: {} },
              { name: 'w', emptyDir: {} },
            ],
          },
        },
      },
    });
    // `containers` has no omitempty upstream: an empty list is kept.
    expect(merge(j({}), j({ spec: { template: { spec: { containers: [] } } } }), DEPLOYMENT)).toEqual({
      spec: { template: { spec: { containers: [] } } },
    });
  });

  it('shares nothing with its inputs', () => {
    const live = deployment(podSpec([container('a', 'a:1')]));
    const out = merge(j(live), j(deployment({})), DEPLOYMENT) as { spec: { template: unknown } };
    expect(out.spec.template).not.toBe((live.spec as { template: unknown }).template);
    expect(out).toEqual(live);
  });
});

describe('apply with removal', () => {
  const cs = [f('spec'), f('template'), f('spec'), f('containers')];

  it('removes what the applier applied before and no longer applies, when nobody else owns it', () => {
    const before = deployment(
      { replicas: 2, ...podSpec([container('a', 'a:1'), container('b', 'b:1')]) },
      { labels: { x: '1' } },
    );
    const live = j({ ...before, status: { replicas: 2 } }) as JsonMap;
    const previous = fieldSetOf(j(before), DEPLOYMENT, 'config');
    const config = j(deployment(podSpec([container('a', 'a:1')]))) as JsonMap;
    const out = apply(live, config, DEPLOYMENT, { previous, others: FieldSet.EMPTY });
    expect(out).toEqual({
      ...deployment(podSpec([container('a', 'a:1')])),
      metadata: { name: 'web', namespace: 'default' },
      status: { replicas: 2 },
    });
  });

  it('keeps what another manager owns, and what the applier never owned', () => {
    const before = deployment({ replicas: 2, ...podSpec([container('a', 'a:1'), container('b', 'b:1')]) });
    const live = j({ ...before, spec: { ...(before['spec'] as object), paused: true } }) as JsonMap;
    const previous = fieldSetOf(j(before), DEPLOYMENT, 'config');
    const others = FieldSet.fromPaths([[f('spec'), f('replicas')]]);
    const out = apply(live, j(deployment(podSpec([container('a', 'a:1')]))) as JsonMap, DEPLOYMENT, {
      previous,
      others,
    });
    expect(out).toEqual(deployment({ replicas: 2, paused: true, ...podSpec([container('a', 'a:1')]) }));
  });

  it('removes a dropped item whole, even a field of it another manager owns (SMD: items are not named fields)', () => {
    const before = deployment(podSpec([container('a', 'a:1'), container('b', 'b:1')]));
    const previous = fieldSetOf(j(before), DEPLOYMENT, 'config');
    const others = FieldSet.fromPaths([[...cs, k({ name: 'b' }), f('image')]]);
    const out = apply(
      j(before) as JsonMap,
      j(deployment(podSpec([container('a', 'a:1')]))) as JsonMap,
      DEPLOYMENT,
      { previous, others },
    );
    expect(names(out)).toEqual(['a']);
  });

  it('without removal information only merges', () => {
    const live = withContainers('a', 'b');
    expect(names(apply(live, withContainers('a'), DEPLOYMENT))).toEqual(['a', 'b']);
  });
});
