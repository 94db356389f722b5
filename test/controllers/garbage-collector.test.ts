/**
 * The garbage collector in a real server, driven by stock kubectl 1.33: foreground (the owner
 * stays, with deletionTimestamp and the foregroundDeletion finalizer, until its dependents are
 * gone), background and orphan deletion of a Deployment; a dangling owner reference; an owner in
 * another namespace (OwnerRefInvalidNamespace); custom resources; ReplicationControllers.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deployment, ReplicaSet } from '../../src/api/types/apps-v1.js';
import type { ConfigMap, Pod, ReplicationController } from '../../src/api/types/core-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import type { OwnerReference } from '../../src/api/types/meta-v1.js';
import { items, startControllerEnv, waitFor, type ControllerEnv } from './support.js';

const NS = 'gc-test';
const OTHER = 'gc-other';
let env: ControllerEnv;

beforeAll(async () => {
  env = await startControllerEnv(['*'], NS);
  expect(
    (
      await env.send('POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: OTHER },
      })
    ).status,
  ).toBe(201);
});
afterAll(async () => {
  await env?.close();
});

const apps = `/apis/apps/v1/namespaces/${NS}`;
const core = `/api/v1/namespaces/${NS}`;

async function deployReady(name: string): Promise<void> {
  const c = await env.kubectl('create', 'deployment', name, '--image=nginx', '--replicas=2');
  expect(c.code, c.stderr).toBe(0);
  const r = await env.kubectl('rollout', 'status', `deployment/${name}`, '--timeout=60s');
  expect(r.code, r.stderr).toBe(0);
}

async function owned(name: string): Promise<{ rss: ReplicaSet[]; pods: Pod[] }> {
  const rss = items<ReplicaSet>(await env.get(`${apps}/replicasets?labelSelector=app%3D${name}`));
  const pods = items<Pod>(await env.get(`${core}/pods?labelSelector=app%3D${name}`));
  return { rss, pods };
}

async function configMap(
  name: string,
  namespace: string,
  ownerReferences?: OwnerReference[],
): Promise<ConfigMap> {
  const r = await env.send<ConfigMap>('POST', `/api/v1/namespaces/${namespace}/configmaps`, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, ...(ownerReferences === undefined ? {} : { ownerReferences }) },
  });
  expect(r.status).toBe(201);
  return r.json;
}

function gone(path: string): () => Promise<true | undefined> {
  return async () => ((await env.get(path)).status === 404 ? true : undefined);
}

describe('garbage collector', () => {
  it('foreground: the Deployment waits, being deleted, until its ReplicaSet and pods are gone', async () => {
    await deployReady('fg');
    const del = await env.kubectl('delete', 'deployment', 'fg', '--cascade=foreground', '--wait=false');
    expect(del.code, del.stderr).toBe(0);
    const d = await env.get<Deployment>(`${apps}/deployments/fg`);
    expect(d.status).toBe(200);
    expect(d.json?.metadata?.deletionTimestamp).toBeDefined();
    expect(d.json?.metadata?.finalizers).toContain('foregroundDeletion');
    // Whenever the Deployment is seen gone, its dependents must already be gone.
    let violated = false;
    await waitFor('the Deployment gone', async () => {
      const dependents = await owned('fg');
      const present = (await env.get(`${apps}/deployments/fg`)).status === 200;
      const after = await owned('fg');
      if (!present && (dependents.rss.length > 0 || after.rss.length > 0)) violated = true;
      return present ? undefined : true;
    });
    expect(violated).toBe(false);
    const left = await owned('fg');
    expect(left.rss).toHaveLength(0);
    expect(left.pods.filter((p) => !p?.metadata?.deletionTimestamp)).toHaveLength(0);
  });

  it('background: the Deployment goes at once, its ReplicaSet and pods after', async () => {
    await deployReady('bg');
    const del = await env.kubectl('delete', 'deployment', 'bg', '--cascade=background', '--wait=false');
    expect(del.code, del.stderr).toBe(0);
    expect((await env.get(`${apps}/deployments/bg`)).status).toBe(404);
    await waitFor('dependents gone', async () => {
      const { rss, pods } = await owned('bg');
      return rss.length === 0 && pods.length === 0 ? true : undefined;
    });
  });

  it('orphan: the ReplicaSet and pods stay, without the owner reference', async () => {
    await deployReady('orph');
    const del = await env.kubectl('delete', 'deployment', 'orph', '--cascade=orphan');
    expect(del.code, del.stderr).toBe(0);
    await waitFor('the Deployment gone', gone(`${apps}/deployments/orph`));
    const { rss, pods } = await owned('orph');
    expect(rss).toHaveLength(1);
    expect(rss[0]?.metadata?.ownerReferences).toBeUndefined();
    expect(pods).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 500));
    expect((await owned('orph')).pods.filter((p) => !p?.metadata?.deletionTimestamp)).toHaveLength(2);
  });

  it('a dependent whose owner UID does not exist is deleted; one with a live owner stays', async () => {
    const owner = await configMap('owner', NS);
    await configMap('kept', NS, [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid ?? '' },
    ]);
    await configMap('dangling', NS, [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: randomUUID() },
    ]);
    await waitFor('the dangling dependent deleted', gone(`${core}/configmaps/dangling`));
    expect((await env.get(`${core}/configmaps/kept`)).status).toBe(200);
    // With the owner deleted (background), the other dependent goes too.
    expect((await env.send('DELETE', `${core}/configmaps/owner`)).status).toBe(200);
    await waitFor('the orphaned dependent deleted', gone(`${core}/configmaps/kept`));
  });

  it('an owner in another namespace counts as absent, with OwnerRefInvalidNamespace', async () => {
    const owner = await configMap('far-owner', OTHER);
    await configMap('cross', NS, [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'far-owner', uid: owner.metadata.uid ?? '' },
    ]);
    await waitFor('the cross-namespace dependent deleted', gone(`${core}/configmaps/cross`));
    const events = await waitFor('the OwnerRefInvalidNamespace event', async () => {
      const evs = items<Event>(await env.get(`/apis/events.k8s.io/v1/namespaces/${NS}/events`)).filter(
        (e) => e?.reason === 'OwnerRefInvalidNamespace' && e?.regarding?.name === 'cross',
      );
      return evs.length > 0 ? evs : undefined;
    });
    expect(events[0]?.type).toBe('Warning');
    expect((await env.get(`/api/v1/namespaces/${OTHER}/configmaps/far-owner`)).status).toBe(200);
  });

  it('custom resources are owners and dependents too', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    expect(
      (await env.send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status,
    ).toBe(201);
    const widgets = `/apis/example.com/v1/namespaces/${NS}/widgets`;
    const parent = await waitFor('the CRD served', async () => {
      const r = await env.send<ConfigMap>('POST', widgets, {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'parent' },
      });
      return r.status === 201 ? r.json : undefined;
    });
    await configMap('widget-child', NS, [
      {
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        name: 'parent',
        uid: parent.metadata.uid ?? '',
        blockOwnerDeletion: true,
      },
    ]);
    const child = await env.send('POST', widgets, {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: {
        name: 'child',
        ownerReferences: [
          {
            apiVersion: 'example.com/v1',
            kind: 'Widget',
            name: 'parent',
            uid: parent.metadata.uid ?? '',
            blockOwnerDeletion: true,
          },
        ],
      },
    });
    expect(child.status).toBe(201);
    const del = await env.send('DELETE', `${widgets}/parent?propagationPolicy=Foreground`);
    expect(del.status).toBe(200);
    await waitFor('the custom resource owner gone', gone(`${widgets}/parent`), 60_000);
    expect((await env.get(`${widgets}/child`)).status).toBe(404);
    expect((await env.get(`${core}/configmaps/widget-child`)).status).toBe(404);
  });

  it('ReplicationControllers keep their pods and delete them with kubectl delete', async () => {
    const rc = {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'rc1', namespace: NS },
      spec: {
        replicas: 2,
        selector: { app: 'rc1' },
        template: {
          metadata: { labels: { app: 'rc1' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    };
    expect((await env.send('POST', `${core}/replicationcontrollers`, rc)).status).toBe(201);
    const ready = await waitFor('2 ready replicas', async () => {
      const r = (await env.get<ReplicationController>(`${core}/replicationcontrollers/rc1`)).json;
      return r?.status?.readyReplicas === 2 && r?.status?.availableReplicas === 2 ? r : undefined;
    });
    expect(ready?.status).toMatchObject({ replicas: 2, fullyLabeledReplicas: 2 });
    const pods = items<Pod>(await env.get(`${core}/pods?labelSelector=app%3Drc1`));
    expect(pods[0]?.metadata?.ownerReferences?.[0]).toMatchObject({
      apiVersion: 'v1',
      kind: 'ReplicationController',
      name: 'rc1',
      controller: true,
      blockOwnerDeletion: true,
    });
    // A pod deleted by hand is replaced.
    expect(
      (await env.send('DELETE', `${core}/pods/${pods[0]?.metadata?.name}?gracePeriodSeconds=0`)).status,
    ).toBe(200);
    await waitFor('a replacement pod', async () => {
      const now = items<Pod>(await env.get(`${core}/pods?labelSelector=app%3Drc1`)).filter(
        (p) => !p?.metadata?.deletionTimestamp,
      );
      return now.length === 2 && !now.some((p) => p?.metadata?.name === pods[0]?.metadata?.name)
        ? true
        : undefined;
    });
    const del = await env.kubectl('delete', 'rc', 'rc1');
    expect(del.code, del.stderr).toBe(0);
    await waitFor('the pods deleted', async () =>
      items<Pod>(await env.get(`${core}/pods?labelSelector=app%3Drc1`)).length === 0 ? true : undefined,
    );
  });
});
