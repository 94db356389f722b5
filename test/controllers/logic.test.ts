/**
 * The controllers' pure rules, checked against kube's documented arithmetic: label selectors,
 * expectations, slow-start batches, Deployment fenceposts and new-ReplicaSet sizing, template
 * hashes, revision annotations, conditions, and the finalizers a delete leaves.
 */
import { describe, expect, it } from 'vitest';
import type { Deployment, ReplicaSet } from '../../src/api/types/apps-v1.js';
import { labelMatcher, LabelSelectorError } from '../../src/controllers/shared/label-selector.js';
import { Expectations, EXPECTATIONS_TIMEOUT_MS } from '../../src/controllers/shared/expectations.js';
import { slowStartBatch } from '../../src/controllers/shared/batch.js';
import { scaledValue } from '../../src/controllers/shared/int-or-percent.js';
import { fenceposts, maxUnavailable, newRSNewReplicas } from '../../src/controllers/deployment/replicas.js';
import { computeHash, equalIgnoreHash } from '../../src/controllers/deployment/template-hash.js';
import { maxRevision, setNewReplicaSetAnnotations } from '../../src/controllers/deployment/annotations.js';
import { rolloutStatus, setCondition, newCondition } from '../../src/controllers/deployment/status.js';
import { finalizersAfterDelete } from '../../src/resource/gc-finalizers.js';
import type { ResourceType } from '../../src/registry/types.js';

function dep(spec: NonNullable<Deployment['spec']>, extra: Partial<Deployment> = {}): Deployment {
  return { metadata: { name: 'd', namespace: 'ns', generation: 1 }, spec, ...extra };
}

function rs(name: string, replicas: number, available = replicas): ReplicaSet {
  return {
    metadata: { name, uid: name },
    spec: { replicas },
    status: { replicas, availableReplicas: available, readyReplicas: available },
  };
}

describe('label selectors', () => {
  it('matchLabels and matchExpressions are ANDed; absent matches nothing, empty everything', () => {
    const m = labelMatcher({
      matchLabels: { app: 'a' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['web', 'api'] },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(m({ app: 'a', tier: 'web' })).toBe(true);
    expect(m({ app: 'a', tier: 'db' })).toBe(false);
    expect(m({ app: 'a', tier: 'web', legacy: '' })).toBe(false);
    expect(labelMatcher(undefined)({ app: 'a' })).toBe(false);
    expect(labelMatcher({})({})).toBe(true);
    expect(labelMatcher({ matchExpressions: [{ key: 'x', operator: 'NotIn', values: ['1'] }] })({})).toBe(
      true,
    );
  });

  it('malformed requirements are errors', () => {
    expect(() => labelMatcher({ matchExpressions: [{ key: 'x', operator: 'Near', values: [] }] })).toThrow(
      LabelSelectorError,
    );
    expect(() => labelMatcher({ matchExpressions: [{ key: 'x', operator: 'In', values: [] }] })).toThrow(
      LabelSelectorError,
    );
    expect(() =>
      labelMatcher({ matchExpressions: [{ key: 'x', operator: 'Exists', values: ['a'] }] }),
    ).toThrow(LabelSelectorError);
  });
});

describe('expectations', () => {
  it('hold until observed or expired', () => {
    let now = 0;
    const e = new Expectations(() => now);
    expect(e.satisfied('k')).toBe(true);
    e.expectCreations('k', 2);
    expect(e.satisfied('k')).toBe(false);
    e.creationObserved('k');
    expect(e.satisfied('k')).toBe(false);
    e.creationObserved('k');
    expect(e.satisfied('k')).toBe(true);
    e.expectDeletions('k', ['ns/a', 'ns/b']);
    e.deletionObserved('k', 'ns/a');
    e.deletionObserved('k', 'ns/a'); // counted once
    expect(e.satisfied('k')).toBe(false);
    now += EXPECTATIONS_TIMEOUT_MS + 1;
    expect(e.satisfied('k')).toBe(true);
  });
});

describe('slow start', () => {
  it('runs 1, 2, 4, ... and stops after the first failing batch', async () => {
    let calls = 0;
    const ok = await slowStartBatch(10, 1, () => {
      calls++;
      return Promise.resolve();
    });
    expect(ok).toEqual({ successes: 10, error: undefined });
    calls = 0;
    const failing = await slowStartBatch(10, 1, () =>
      ++calls >= 2 ? Promise.reject(new Error('quota')) : Promise.resolve(),
    );
    expect(calls).toBe(3); // batch of 1, then batch of 2 which failed
    expect(failing.successes).toBe(1);
    expect(failing.error).toBeInstanceOf(Error);
  });
});

describe('deployment arithmetic', () => {
  it('percentages round up for surge and down for unavailability; both zero gives one unavailable', () => {
    expect(scaledValue('25%', 10, true)).toBe(3);
    expect(scaledValue('25%', 10, false)).toBe(2);
    expect(fenceposts(dep({ replicas: 10 }))).toEqual({ surge: 3, unavailable: 2 });
    expect(
      fenceposts(dep({ replicas: 3, strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: 0 } } })),
    ).toEqual({ surge: 0, unavailable: 1 });
    expect(maxUnavailable(dep({ replicas: 4, strategy: { type: 'Recreate' } }))).toBe(0);
  });

  it('the new ReplicaSet grows only into the surge budget', () => {
    const d = dep({
      replicas: 4,
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    });
    const newRS = rs('new', 0);
    expect(newRSNewReplicas(d, [rs('old', 4), newRS], newRS)).toBe(1);
    expect(newRSNewReplicas(d, [rs('old', 5), newRS], newRS)).toBe(0);
    const half = rs('new', 2);
    expect(newRSNewReplicas(d, [rs('old', 2), half], half)).toBe(3);
  });
});

describe('template hash and revisions', () => {
  const template = {
    metadata: { labels: { app: 'a' } },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  };

  it('is stable, changes with the template and the collision count, and ignores its own label', () => {
    expect(computeHash(template, undefined)).toBe(computeHash(structuredClone(template), undefined));
    expect(computeHash(template, undefined)).not.toBe(computeHash(template, 1));
    const other = { ...template, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } };
    expect(computeHash(other, undefined)).not.toBe(computeHash(template, undefined));
    const labelled = { ...template, metadata: { labels: { app: 'a', 'pod-template-hash': 'x' } } };
    expect(equalIgnoreHash(labelled, template)).toBe(true);
    expect(equalIgnoreHash(other, template)).toBe(false);
  });

  it('raising a reused ReplicaSet to a new revision records the old one in revision-history', () => {
    const d = dep(
      { replicas: 2 },
      {
        metadata: {
          name: 'd',
          annotations: { team: 'x', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        },
      },
    );
    const r: ReplicaSet = {
      metadata: { name: 'r', annotations: { 'deployment.kubernetes.io/revision': '1' } },
    };
    expect(setNewReplicaSetAnnotations(d, r, 3n, true)).toBe(true);
    expect(r.metadata.annotations).toEqual({
      'deployment.kubernetes.io/revision': '3',
      'deployment.kubernetes.io/revision-history': '1',
      team: 'x',
    });
    expect(setNewReplicaSetAnnotations(d, r, 3n, true)).toBe(false);
  });

  it('reads revisions as int64: the one after a large adopted revision is exact', () => {
    const adopted: ReplicaSet = {
      metadata: { name: 'a', annotations: { 'deployment.kubernetes.io/revision': '3546343826724305832' } },
    };
    const other: ReplicaSet = {
      metadata: { name: 'b', annotations: { 'deployment.kubernetes.io/revision': 'x7' } },
    };
    expect(maxRevision([adopted, other]) + 1n).toBe(3546343826724305833n);
    const d = dep({ replicas: 1 });
    const fresh: ReplicaSet = { metadata: { name: 'n' } };
    setNewReplicaSetAnnotations(d, fresh, maxRevision([adopted]) + 1n, true);
    expect(fresh.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('3546343826724305833');
    // A revision that is not a number is left alone.
    expect(setNewReplicaSetAnnotations(d, other, 2n, true)).toBe(false);
    expect(other.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('x7');
  });
});

describe('conditions', () => {
  it('keep their transition time while the status stays', () => {
    const status = {};
    setCondition(status, newCondition('Available', 'True', 'A', 'm', 1_000));
    setCondition(status, newCondition('Available', 'True', 'B', 'm', 5_000));
    expect(status).toMatchObject({
      conditions: [
        { reason: 'B', lastTransitionTime: '1970-01-01T00:00:01Z', lastUpdateTime: '1970-01-01T00:00:05Z' },
      ],
    });
  });

  it('a rollout without progress past its deadline times out', () => {
    const d = dep(
      { replicas: 1, progressDeadlineSeconds: 10 },
      {
        status: {
          observedGeneration: 1,
          replicas: 1,
          updatedReplicas: 1,
          conditions: [
            {
              type: 'Progressing',
              status: 'True',
              reason: 'NewReplicaSetCreated',
              lastUpdateTime: '1970-01-01T00:00:00Z',
              lastTransitionTime: '1970-01-01T00:00:00Z',
            },
          ],
        },
      },
    );
    const stuck = rs('new', 1, 0);
    const early = rolloutStatus([stuck], stuck, d, 5_000);
    expect(early.conditions?.find((c) => c.type === 'Progressing')?.reason).toBe('NewReplicaSetCreated');
    const late = rolloutStatus([stuck], stuck, d, 11_000);
    expect(late.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'ReplicaSet "new" has timed out progressing.',
    });
  });
});

describe('finalizers a delete leaves', () => {
  const type = (group: string, version: string, plural: string): ResourceType =>
    ({ group, version, plural }) as ResourceType;
  const deploy = type('apps', 'v1', 'deployments');

  it('follow the propagation policy, then the finalizers, then the kind default', () => {
    expect(finalizersAfterDelete(deploy, [], 'Foreground')).toEqual(['foregroundDeletion']);
    expect(finalizersAfterDelete(deploy, [], 'Orphan')).toEqual(['orphan']);
    expect(finalizersAfterDelete(deploy, [], 'Background')).toBeUndefined();
    expect(finalizersAfterDelete(deploy, [], undefined)).toBeUndefined();
    expect(finalizersAfterDelete(deploy, ['x', 'orphan'], 'Foreground')).toEqual(['x', 'foregroundDeletion']);
    expect(finalizersAfterDelete(deploy, ['foregroundDeletion'], undefined)).toBeUndefined();
    expect(finalizersAfterDelete(type('', 'v1', 'replicationcontrollers'), [], undefined)).toEqual([
      'orphan',
    ]);
    expect(finalizersAfterDelete(type('batch', 'v1', 'jobs'), [], undefined)).toEqual(['orphan']);
    expect(finalizersAfterDelete(type('batch', 'v1', 'jobs'), [], 'Background')).toBeUndefined();
  });
});
