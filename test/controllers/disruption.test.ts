/**
 * The disruption controller against a real server, and the eviction API on top of the status
 * it writes: minAvailable as a count over bare pods, maxUnavailable over a ReplicaSet's scale,
 * evictions allowed once and then refused with 429 as the budget is spent, and budgets no one
 * can compute (no pods, unmanaged pods with a percentage, a missing controller) reported with
 * kube's conditions and events instead of crashing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pod } from '../../src/api/types/core-v1.js';
import type { ReplicaSet } from '../../src/api/types/apps-v1.js';
import type { PodDisruptionBudget } from '../../src/api/types/policy-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import {
  EVENTS,
  NAMESPACES,
  NODES,
  PODS,
  POD_DISRUPTION_BUDGETS,
  REPLICA_SETS,
  type ResourceClient,
} from '../../src/client/index.js';
import { disruptionController } from '../../src/controllers/disruption/index.js';
import { rfc3339, startInfraEnv, until, type InfraEnv } from './infra-env.js';

const NS = 'pdb';
let env: InfraEnv;
let pods: ResourceClient<Pod>;
let pdbs: ResourceClient<PodDisruptionBudget>;

async function readyPod(name: string, labels: Record<string, string>, owner?: ReplicaSet): Promise<void> {
  const p = await pods.create({
    metadata: {
      name,
      namespace: NS,
      labels,
      ...(owner === undefined
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                name: owner.metadata.name ?? '',
                uid: owner.metadata.uid ?? '',
                controller: true,
              },
            ],
          }),
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx' }] },
  });
  await pods.updateStatus({
    ...p,
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: rfc3339() }],
    },
  });
}

async function status(name: string, done: (s: NonNullable<PodDisruptionBudget['status']>) => boolean) {
  return until(`status of ${name}`, async () => {
    const p = await pdbs.get(name, { namespace: NS });
    return p.status !== undefined && done(p.status) ? p.status : undefined;
  });
}

function evict(name: string) {
  return env.client
    .resource(PODS)
    .createSubresource(
      name,
      'eviction',
      { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } },
      { namespace: NS },
    )
    .then(
      () => 201,
      (err: { code?: number }) => err.code ?? 0,
    );
}

beforeAll(async () => {
  env = await startInfraEnv([disruptionController]);
  pods = env.client.resource<Pod>(PODS);
  pdbs = env.client.resource<PodDisruptionBudget>(POD_DISRUPTION_BUDGETS);
  await env.client.resource(NAMESPACES).create({ metadata: { name: NS } });
  await env.client.resource(NODES).create({ metadata: { name: 'n1' } });
}, 60_000);
afterAll(async () => env?.close());

describe('PodDisruptionBudget status', () => {
  it('minAvailable counts the selected pods; evictions spend the budget, then 429', async () => {
    for (const n of ['web-0', 'web-1', 'web-2']) await readyPod(n, { app: 'web' });
    await pdbs.create({
      metadata: { name: 'web', namespace: NS },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    });
    const s = await status('web', (x) => x.observedGeneration === 1);
    expect(s).toMatchObject({ currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1 });
    expect(s.conditions?.[0]).toMatchObject({
      type: 'DisruptionAllowed',
      status: 'True',
      reason: 'SufficientPods',
      observedGeneration: 1,
    });
    const k = await env.kubectl('-n', NS, 'get', 'pdb', 'web', '-o', 'jsonpath={.status.disruptionsAllowed}');
    expect(k.stdout).toBe('1');

    expect(await evict('web-0')).toBe(201);
    const after = await status('web', (x) => x.currentHealthy === 2);
    expect(after).toMatchObject({ disruptionsAllowed: 0 });
    expect(after.conditions?.[0]).toMatchObject({ status: 'False', reason: 'InsufficientPods' });
    expect(await evict('web-1')).toBe(429);
  });

  it('maxUnavailable counts the scale of the pods’ ReplicaSet', async () => {
    const rs = await env.client.resource<ReplicaSet>(REPLICA_SETS).create({
      metadata: { name: 'api', namespace: NS },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'api' } },
        template: {
          metadata: { labels: { app: 'api' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    for (const n of ['api-0', 'api-1', 'api-2']) await readyPod(n, { app: 'api' }, rs);
    await pdbs.create({
      metadata: { name: 'api', namespace: NS },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'api' } } },
    });
    const s = await status('api', (x) => x.observedGeneration === 1);
    expect(s).toMatchObject({ expectedPods: 4, desiredHealthy: 3, currentHealthy: 3, disruptionsAllowed: 0 });
  });
});

describe('budgets that cannot be computed', () => {
  it('no matching pods: NoPods, nothing allowed', async () => {
    await pdbs.create({
      metadata: { name: 'none', namespace: NS },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'none' } } },
    });
    const s = await status('none', (x) => x.observedGeneration === 1);
    expect(s).toMatchObject({ currentHealthy: 0, expectedPods: 0, disruptionsAllowed: 0 });
    await until('NoPods', async () => {
      const list = await env.client.resource<Event>(EVENTS).list({ namespace: NS });
      return list.items.find((e) => e.reason === 'NoPods' && e.regarding?.name === 'none');
    });
  });

  it('a percentage over unmanaged pods warns UnmanagedPods', async () => {
    await readyPod('solo', { app: 'solo' });
    await pdbs.create({
      metadata: { name: 'solo', namespace: NS },
      spec: { maxUnavailable: '50%', selector: { matchLabels: { app: 'solo' } } },
    });
    await status('solo', (x) => x.observedGeneration === 1);
    await until('UnmanagedPods', async () => {
      const list = await env.client.resource<Event>(EVENTS).list({ namespace: NS });
      return list.items.find((e) => e.reason === 'UnmanagedPods' && e.type === 'Warning');
    });
  });

  it('a pod whose controller is missing: SyncFailed, and the controller keeps working', async () => {
    await readyPod(
      'lost',
      { app: 'lost' },
      { metadata: { name: 'gone-rs', uid: '00000000-0000-0000-0000-000000000001' } },
    );
    await pdbs.create({
      metadata: { name: 'lost', namespace: NS },
      spec: { minAvailable: '50%', selector: { matchLabels: { app: 'lost' } } },
    });
    const s = await status('lost', (x) => x.conditions?.some((c) => c.reason === 'SyncFailed') === true);
    expect(s.disruptionsAllowed).toBe(0);
    expect(s.conditions?.[0]?.message).toBe('found no controllers for pod "lost"');
    // Others still sync.
    await readyPod('web-3', { app: 'web' });
    await status('web', (x) => x.currentHealthy === 3);
  });
});
