/**
 * The deployment and replicaset controllers in a real server, driven by stock kubectl 1.33, with
 * a fake kubelet making pods Running and Ready: create, scale, rollout status, a rolling update
 * within maxSurge/maxUnavailable, rollout undo, pause and resume, Recreate, the progress
 * deadline, and pods the API refuses (ReplicaFailure).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakePod } from '../support/fake-kubelet.js';
import type { Deployment, ReplicaSet } from '../../src/api/types/apps-v1.js';
import type { Pod } from '../../src/api/types/core-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import { items, startControllerEnv, waitFor, type ControllerEnv } from './support.js';

const NS = 'deploy-test';
let env: ControllerEnv;
/** When the fake kubelet first saw each pod (pods turn Ready 300 ms later; `never` ones never). */
const firstSeen = new Map<string, number>();

function ready(pod: FakePod): boolean {
  if (pod.metadata.labels?.ready === 'never') return false;
  const seen = firstSeen.get(pod.metadata.uid) ?? Date.now();
  firstSeen.set(pod.metadata.uid, seen);
  return Date.now() - seen >= 300;
}

beforeAll(async () => {
  env = await startControllerEnv(['*'], NS, ready);
});
afterAll(async () => {
  await env?.close();
});

const apps = `/apis/apps/v1/namespaces/${NS}`;
const core = `/api/v1/namespaces/${NS}`;

async function deployment(name: string): Promise<Deployment> {
  const r = await env.get<Deployment>(`${apps}/deployments/${name}`);
  expect(r.status).toBe(200);
  return r.json;
}

async function replicaSetsOf(name: string): Promise<ReplicaSet[]> {
  const d = await deployment(name);
  const all = items<ReplicaSet>(await env.get(`${apps}/replicasets`));
  return all.filter((rs) => rs?.metadata?.ownerReferences?.some((r) => r?.uid === d?.metadata?.uid));
}

async function podsWith(selector: string): Promise<Pod[]> {
  return items<Pod>(await env.get(`${core}/pods?labelSelector=${encodeURIComponent(selector)}`));
}

interface Cond {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

function condition(obj: { status?: { conditions?: Cond[] } }, type: string): Cond | undefined {
  return (obj?.status?.conditions ?? []).find((c) => c?.type === type);
}

async function rolloutStatus(name: string): Promise<void> {
  const r = await env.kubectl('rollout', 'status', `deployment/${name}`, '--timeout=60s');
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toContain(`deployment "${name}" successfully rolled out`);
}

describe('deployment controller', () => {
  it('kubectl create deployment makes a ReplicaSet and pods, and rollout status finishes', async () => {
    const created = await env.kubectl('create', 'deployment', 'web', '--image=nginx:1.25', '--replicas=2');
    expect(created.code, created.stderr).toBe(0);
    await rolloutStatus('web');
    const d = await deployment('web');
    const rss = await replicaSetsOf('web');
    expect(rss).toHaveLength(1);
    const rs = rss[0] as ReplicaSet;
    const hash = rs?.metadata?.labels?.['pod-template-hash'];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs?.metadata?.name).toBe(`web-${hash}`);
    expect(rs?.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    expect(rs?.metadata?.annotations?.['deployment.kubernetes.io/desired-replicas']).toBe('2');
    expect(rs?.metadata?.annotations?.['deployment.kubernetes.io/max-replicas']).toBe('3');
    expect(rs?.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        uid: d?.metadata?.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(rs?.spec?.selector?.matchLabels).toEqual({ app: 'web', 'pod-template-hash': hash });
    expect(d?.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('1');
    expect(d?.status).toMatchObject({
      replicas: 2,
      updatedReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    });
    expect(condition(d, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    expect(condition(d, 'Progressing')).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable' });
    const pods = await podsWith('app=web');
    expect(pods).toHaveLength(2);
    for (const p of pods) {
      expect(p?.metadata?.generateName).toBe(`web-${hash}-`);
      expect(p?.metadata?.labels?.['pod-template-hash']).toBe(hash);
      expect(p?.metadata?.ownerReferences).toEqual([
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: rs?.metadata?.name,
          uid: rs?.metadata?.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    const rsNow = (await env.get<ReplicaSet>(`${apps}/replicasets/${rs?.metadata?.name}`)).json;
    expect(rsNow?.status).toMatchObject({
      replicas: 2,
      fullyLabeledReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
    });
    expect(rsNow?.status?.observedGeneration).toBe(rsNow?.metadata?.generation);
    const events = items<Event>(await env.get(`/apis/events.k8s.io/v1/namespaces/${NS}/events`));
    expect(events.some((e) => e?.reason === 'ScalingReplicaSet' && e?.regarding?.name === 'web')).toBe(true);
    expect(events.some((e) => e?.reason === 'SuccessfulCreate' && e?.regarding?.kind === 'ReplicaSet')).toBe(
      true,
    );
  });

  it('kubectl scale grows and shrinks the ReplicaSet', async () => {
    expect((await env.kubectl('scale', 'deployment/web', '--replicas=4')).code).toBe(0);
    await rolloutStatus('web');
    await waitFor('4 pods', async () =>
      (await podsWith('app=web')).filter((p) => !p?.metadata?.deletionTimestamp).length === 4
        ? true
        : undefined,
    );
    expect((await env.kubectl('scale', 'deployment/web', '--replicas=1')).code).toBe(0);
    await waitFor('1 pod left', async () => ((await podsWith('app=web')).length === 1 ? true : undefined));
    await rolloutStatus('web');
    expect((await deployment('web'))?.status).toMatchObject({ replicas: 1, availableReplicas: 1 });
  });

  it('an image change rolls out within maxSurge and maxUnavailable, and rollout undo goes back', async () => {
    const body = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'roll', namespace: NS },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'roll' } },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: {
          metadata: { labels: { app: 'roll' } },
          spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
        },
      },
    };
    expect((await env.send('POST', `${apps}/deployments`, body)).status).toBe(201);
    await rolloutStatus('roll');

    let maxPods = 0;
    let minReady = Number.POSITIVE_INFINITY;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const live = (await podsWith('app=roll')).filter((p) => !p?.metadata?.deletionTimestamp);
        maxPods = Math.max(maxPods, live.length);
        const readyCount = live.filter((p) =>
          (p?.status?.conditions ?? []).some((c) => c?.type === 'Ready' && c?.status === 'True'),
        ).length;
        minReady = Math.min(minReady, readyCount);
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    expect((await env.kubectl('set', 'image', 'deployment/roll', 'c=nginx:1.26')).code).toBe(0);
    await rolloutStatus('roll');
    sampling = false;
    await sampler;
    expect(maxPods).toBe(5); // surged by exactly maxSurge
    expect(minReady).toBe(4); // never below replicas - maxUnavailable

    const rss = await replicaSetsOf('roll');
    expect(rss).toHaveLength(2);
    const byRevision = new Map(
      rss.map((rs) => [rs?.metadata?.annotations?.['deployment.kubernetes.io/revision'], rs]),
    );
    expect(byRevision.get('1')?.spec?.replicas).toBe(0);
    expect(byRevision.get('2')?.spec?.replicas).toBe(4);
    expect(byRevision.get('2')?.spec?.template?.spec?.containers?.[0]?.image).toBe('nginx:1.26');

    const history = await env.kubectl('rollout', 'history', 'deployment/roll');
    expect(history.code, history.stderr).toBe(0);
    expect(history.stdout).toMatch(/^1\s/m);
    expect(history.stdout).toMatch(/^2\s/m);

    const undo = await env.kubectl('rollout', 'undo', 'deployment/roll');
    expect(undo.code, undo.stderr).toBe(0);
    await rolloutStatus('roll');
    const d = await deployment('roll');
    expect(d?.spec?.template?.spec?.containers?.[0]?.image).toBe('nginx:1.25');
    expect(d?.metadata?.annotations?.['deployment.kubernetes.io/revision']).toBe('3');
    const after = await replicaSetsOf('roll');
    expect(after).toHaveLength(2); // the revision-1 ReplicaSet came back as revision 3
    const reused = after.find(
      (rs) => rs?.metadata?.annotations?.['deployment.kubernetes.io/revision'] === '3',
    ) as ReplicaSet;
    expect(reused?.metadata?.annotations?.['deployment.kubernetes.io/revision-history']).toBe('1');
    expect(reused?.spec?.replicas).toBe(4);
  });

  it('a paused deployment does not roll out until resumed', async () => {
    expect((await env.kubectl('rollout', 'pause', 'deployment/roll')).code).toBe(0);
    await waitFor('DeploymentPaused', async () =>
      condition(await deployment('roll'), 'Progressing')?.reason === 'DeploymentPaused' ? true : undefined,
    );
    expect((await env.kubectl('set', 'image', 'deployment/roll', 'c=nginx:1.27')).code).toBe(0);
    await waitFor('observed', async () => {
      const d = await deployment('roll');
      return d?.status?.observedGeneration === d?.metadata?.generation ? true : undefined;
    });
    await new Promise((r) => setTimeout(r, 500));
    expect(await replicaSetsOf('roll')).toHaveLength(2); // no new ReplicaSet while paused
    expect((await env.kubectl('rollout', 'resume', 'deployment/roll')).code).toBe(0);
    await rolloutStatus('roll');
    const rss = await replicaSetsOf('roll');
    expect(rss).toHaveLength(3);
    expect(
      rss.find((rs) => rs?.metadata?.annotations?.['deployment.kubernetes.io/revision'] === '4')?.spec?.[
        'replicas'
      ],
    ).toBe(4);
    expect(condition(await deployment('roll'), 'Progressing')).toMatchObject({
      reason: 'NewReplicaSetAvailable',
    });
  });

  it('revisionHistoryLimit deletes the oldest empty ReplicaSets', async () => {
    expect(
      (
        await env.send(
          'PATCH',
          `${apps}/deployments/roll`,
          { spec: { revisionHistoryLimit: 1 } },
          'application/merge-patch+json',
        )
      ).status,
    ).toBe(200);
    await waitFor('old ReplicaSets cleaned up', async () =>
      (await replicaSetsOf('roll')).length === 2 ? true : undefined,
    );
  });

  it('Recreate stops every old pod before new ones start', async () => {
    const body = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'recreate', namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'recreate' } },
        strategy: { type: 'Recreate' },
        template: {
          metadata: { labels: { app: 'recreate' } },
          spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
        },
      },
    };
    expect((await env.send('POST', `${apps}/deployments`, body)).status).toBe(201);
    await rolloutStatus('recreate');
    let mixed = false;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const hashes = new Set(
          (await podsWith('app=recreate')).map((p) => p?.metadata?.labels?.['pod-template-hash']),
        );
        if (hashes.size > 1) mixed = true;
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    expect((await env.kubectl('set', 'image', 'deployment/recreate', 'c=nginx:1.26')).code).toBe(0);
    await rolloutStatus('recreate');
    sampling = false;
    await sampler;
    expect(mixed).toBe(false);
    expect(await podsWith('app=recreate')).toHaveLength(2);
  });

  it('a rollout that makes no progress exceeds its deadline', async () => {
    const body = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'stuck', namespace: NS },
      spec: {
        replicas: 1,
        progressDeadlineSeconds: 2,
        selector: { matchLabels: { app: 'stuck' } },
        template: {
          metadata: { labels: { app: 'stuck', ready: 'never' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    };
    expect((await env.send('POST', `${apps}/deployments`, body)).status).toBe(201);
    await waitFor('ProgressDeadlineExceeded', async () => {
      const c = condition(await deployment('stuck'), 'Progressing');
      return c?.reason === 'ProgressDeadlineExceeded' && c?.status === 'False' ? true : undefined;
    });
    const r = await env.kubectl('rollout', 'status', 'deployment/stuck', '--timeout=20s');
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('exceeded its progress deadline');
    expect(condition(await deployment('stuck'), 'Available')).toMatchObject({
      status: 'False',
      reason: 'MinimumReplicasUnavailable',
    });
  });

  it('pods the API refuses give ReplicaFailure and FailedCreate, and recover', async () => {
    const body = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'nosa', namespace: NS },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'nosa' } },
        template: {
          metadata: { labels: { app: 'nosa' } },
          spec: { serviceAccountName: 'missing', containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    };
    expect((await env.send('POST', `${apps}/deployments`, body)).status).toBe(201);
    const failed = await waitFor('ReplicaFailure on the Deployment', async () => {
      const c = condition(await deployment('nosa'), 'ReplicaFailure');
      return c?.status === 'True' ? c : undefined;
    });
    expect(failed?.reason).toBe('FailedCreate');
    const rs = (await replicaSetsOf('nosa'))[0] as ReplicaSet;
    expect(condition(rs, 'ReplicaFailure')).toMatchObject({ status: 'True', reason: 'FailedCreate' });
    const events = items<Event>(await env.get(`/apis/events.k8s.io/v1/namespaces/${NS}/events`));
    const ev = events.find((e) => e?.reason === 'FailedCreate' && e?.regarding?.name === rs?.metadata?.name);
    expect(ev?.type).toBe('Warning');
    expect(ev?.note).toMatch(/^Error creating: /);

    expect(
      (
        await env.send('POST', `${core}/serviceaccounts`, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name: 'missing' },
        })
      ).status,
    ).toBe(201);
    await rolloutStatus('nosa');
    await waitFor('ReplicaFailure gone', async () =>
      condition(await deployment('nosa'), 'ReplicaFailure') === undefined ? true : undefined,
    );
  });

  it('an empty selector is refused by the API, and the controllers keep working', async () => {
    const bad = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'bad', namespace: NS },
      spec: {
        selector: {},
        template: {
          metadata: { labels: { app: 'bad' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    };
    const r = await env.send('POST', `${apps}/deployments`, bad);
    expect(r.status).toBe(422);
    expect((await env.kubectl('scale', 'deployment/web', '--replicas=2')).code).toBe(0);
    await rolloutStatus('web');
  });
});
