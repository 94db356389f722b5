/**
 * Adoption and release (the shared `claimByPatch`/`claimPods`) through the real controllers, as
 * their own service accounts under RBAC: a ReplicaSet adopts a matching orphan pod instead of
 * creating one and releases it when its labels stop matching; a Deployment adopts a matching
 * orphan ReplicaSet; a Job with a manual selector adopts a matching orphan pod. Each adopted
 * object carries kube's controller reference (`controller` and `blockOwnerDeletion` true).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { items, startControllerEnv, waitFor, type ControllerEnv, type Json } from './support.js';

const NS = 'claims';
let env: ControllerEnv;

interface Meta {
  metadata: {
    name: string;
    uid: string;
    labels?: Record<string, string>;
    ownerReferences?: {
      kind: string;
      name: string;
      uid: string;
      controller?: boolean;
      blockOwnerDeletion?: boolean;
    }[];
  };
}

const container = { name: 'c', image: 'busybox' };

function pod(name: string, labels: Record<string, string>): Json {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers: [container] } };
}

async function get<T = Meta>(path: string): Promise<T> {
  const r = await env.get<T>(path);
  expect(r.status, path).toBe(200);
  return r.json;
}

async function create(path: string, body: Json): Promise<Meta> {
  const r = await env.send<Meta>('POST', path, body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}

function controllerRef(o: Meta): Meta['metadata']['ownerReferences'] {
  return o.metadata.ownerReferences?.filter((r) => r.controller === true);
}

beforeAll(async () => {
  env = await startControllerEnv(['replicaset', 'deployment', 'job'], NS);
}, 60_000);
afterAll(async () => env?.close());

describe('claiming', () => {
  it('a ReplicaSet adopts a matching orphan pod, then releases it when it stops matching', async () => {
    await create(`/api/v1/namespaces/${NS}/pods`, pod('orphan', { app: 'adopt' }));
    const rs = await create(`/apis/apps/v1/namespaces/${NS}/replicasets`, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'adopter' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'adopt' } },
        template: { metadata: { labels: { app: 'adopt' } }, spec: { containers: [container] } },
      },
    });
    const adopted = await waitFor('the adoption', async () => {
      const p = await get(`/api/v1/namespaces/${NS}/pods/orphan`);
      return (controllerRef(p) ?? []).length > 0 ? p : undefined;
    });
    expect(controllerRef(adopted)).toEqual([
      expect.objectContaining({
        kind: 'ReplicaSet',
        name: 'adopter',
        uid: rs.metadata.uid,
        blockOwnerDeletion: true,
      }),
    ]);
    await waitFor('the status', async () => {
      const r = await get<{ status?: { replicas?: number } }>(
        `/apis/apps/v1/namespaces/${NS}/replicasets/adopter`,
      );
      return r.status?.replicas === 1 ? true : undefined;
    });
    const pods = items<Meta>(await env.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dadopt`));
    expect(pods.map((p) => p.metadata.name)).toEqual(['orphan']);

    const relabel = await env.send(
      'PATCH',
      `/api/v1/namespaces/${NS}/pods/orphan`,
      { metadata: { labels: { app: 'elsewhere' } } },
      'application/merge-patch+json',
    );
    expect(relabel.status).toBe(200);
    const released = await waitFor('the release', async () => {
      const p = await get(`/api/v1/namespaces/${NS}/pods/orphan`);
      return (p.metadata.ownerReferences ?? []).length === 0 ? p : undefined;
    });
    expect(released.metadata.labels).toEqual({ app: 'elsewhere' });
    await waitFor('a replacement pod', async () => {
      const list = items<Meta>(await env.get(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dadopt`));
      return list.length === 1 && list[0]?.metadata.name !== 'orphan' ? true : undefined;
    });
  });

  it('a Deployment adopts a matching orphan ReplicaSet', async () => {
    await create(`/apis/apps/v1/namespaces/${NS}/replicasets`, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'lonely', labels: { app: 'web' } },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [container] } },
      },
    });
    const d = await create(`/apis/apps/v1/namespaces/${NS}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ ...container, image: 'nginx' }] },
        },
      },
    });
    const rs = await waitFor('the adoption', async () => {
      const r = await get(`/apis/apps/v1/namespaces/${NS}/replicasets/lonely`);
      return (controllerRef(r) ?? []).length > 0 ? r : undefined;
    });
    expect(controllerRef(rs)).toEqual([
      expect.objectContaining({
        kind: 'Deployment',
        name: 'web',
        uid: d.metadata.uid,
        blockOwnerDeletion: true,
      }),
    ]);
  });

  it('a Job with a manual selector adopts a matching orphan pod', async () => {
    await create(`/api/v1/namespaces/${NS}/pods`, pod('job-orphan', { batch: 'mine' }));
    const job = await create(`/apis/batch/v1/namespaces/${NS}/jobs`, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'manual' },
      spec: {
        manualSelector: true,
        parallelism: 1,
        completions: 1,
        selector: { matchLabels: { batch: 'mine' } },
        template: {
          metadata: { labels: { batch: 'mine' } },
          spec: { containers: [container], restartPolicy: 'Never' },
        },
      },
    });
    const p = await waitFor('the adoption', async () => {
      const got = await get(`/api/v1/namespaces/${NS}/pods/job-orphan`);
      return (controllerRef(got) ?? []).length > 0 ? got : undefined;
    });
    expect(controllerRef(p)).toEqual([
      expect.objectContaining({
        kind: 'Job',
        name: 'manual',
        uid: job.metadata.uid,
        blockOwnerDeletion: true,
      }),
    ]);
  });
});
