/**
 * pods/eviction against PodDisruptionBudgets, through the API: a budget allowing no disruption
 * refuses with 429 and kube's DisruptionBudget cause; one allowing a disruption lets the
 * eviction through and records it; an unprocessed budget (observedGeneration behind) is a 429;
 * two budgets are a 500; a Pending pod is evicted without asking. Before its delete, the pod
 * gets kube's DisruptionTarget condition, and the delete's preconditions are checked against
 * it in kube-apiserver's words. The budgets' status is written here as the disruption
 * controller would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, runKubectl, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let tls: ReturnType<typeof adminTls>;
const NS = 'evict';

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  return adminJson(`${server.url}${path}`, tls, method, body);
}

async function pod(
  name: string,
  labels: Record<string, string>,
  phase: string,
  ready: boolean,
): Promise<void> {
  const created = await api('POST', `/api/v1/namespaces/${NS}/pods`, {
    metadata: { name, labels },
    spec: { containers: [{ name: 'c', image: 'nginx' }], nodeName: 'n1' },
  });
  expect(created.status).toBe(201);
  const status = {
    phase,
    conditions: [
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        lastTransitionTime: new Date().toISOString().slice(0, 19) + 'Z',
      },
    ],
  };
  const put = await api('PUT', `/api/v1/namespaces/${NS}/pods/${name}/status`, { ...created.json, status });
  expect(put.status).toBe(200);
}

async function budget(name: string, app: string, status: Record<string, unknown>): Promise<void> {
  const created = await api('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
    metadata: { name },
    spec: { minAvailable: 1, selector: { matchLabels: { app } } },
  });
  expect(created.status).toBe(201);
  const put = await api('PUT', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/${name}/status`, {
    ...created.json,
    status: { observedGeneration: 1, ...status },
  });
  expect(put.status).toBe(200);
}

function evict(name: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return api('POST', `/api/v1/namespaces/${NS}/pods/${name}/eviction`, {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: NS },
  });
}

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  expect((await api('POST', '/api/v1/namespaces', { metadata: { name: NS } })).status).toBe(201);
  expect((await api('POST', '/api/v1/nodes', { metadata: { name: 'n1' } })).status).toBe(201);
}, 60_000);
afterAll(async () => server?.close());

describe('pods/eviction', () => {
  it('refuses with 429 when the budget allows no disruption, and says why', async () => {
    await pod('guarded', { app: 'guarded' }, 'Running', true);
    await budget('guarded', 'guarded', {
      disruptionsAllowed: 0,
      currentHealthy: 1,
      desiredHealthy: 1,
      expectedPods: 1,
    });
    const res = await evict('guarded');
    expect(res.status).toBe(429);
    expect(res.json['reason']).toBe('TooManyRequests');
    expect(res.json['message']).toBe("Cannot evict pod as it would violate the pod's disruption budget.");
    const details = res.json['details'] as { causes: { reason: string; message: string }[] };
    expect(details.causes[0]).toEqual({
      reason: 'DisruptionBudget',
      message: 'The disruption budget guarded needs 1 healthy pods and has 1 currently',
    });
    expect((await api('GET', `/api/v1/namespaces/${NS}/pods/guarded`)).status).toBe(200);
    // kubectl drain's path: kubectl 1.33 reports the refusal too.
    const k = await runKubectl(
      '1.33',
      ['drain', 'n1', '--pod-selector=app=guarded', '--timeout=3s', '--force'],
      server.kubeconfigPath,
    );
    expect(k.code).not.toBe(0);
    expect(k.stdout + k.stderr).toContain(
      "Cannot evict pod as it would violate the pod's disruption budget.",
    );
  });

  it('evicts when a disruption is allowed, taking it from the budget', async () => {
    await pod('free', { app: 'free' }, 'Running', true);
    await budget('free', 'free', {
      disruptionsAllowed: 1,
      currentHealthy: 2,
      desiredHealthy: 1,
      expectedPods: 2,
    });
    const res = await evict('free');
    expect(res.status).toBe(201);
    expect(res.json['status']).toBe('Success');
    const pdb = await api('GET', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/free`);
    const status = pdb.json['status'] as {
      disruptionsAllowed: number;
      disruptedPods: Record<string, string>;
      conditions: { type: string; status: string; reason: string }[];
    };
    expect(status.disruptionsAllowed).toBe(0);
    expect(Object.keys(status.disruptedPods)).toEqual(['free']);
    expect(status.conditions.find((c) => c.type === 'DisruptionAllowed')).toMatchObject({
      status: 'False',
      reason: 'InsufficientPods',
    });
    // The pod is deleting (graceful: it is bound to a node) or gone.
    const after = await api('GET', `/api/v1/namespaces/${NS}/pods/free`);
    expect(
      after.status === 404 ||
        (after.json['metadata'] as { deletionTimestamp?: string }).deletionTimestamp !== undefined,
    ).toBe(true);
  });

  it('is a 429 while the budget is not processed yet', async () => {
    await pod('fresh', { app: 'fresh' }, 'Running', true);
    const created = await api('POST', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets`, {
      metadata: { name: 'fresh' },
      spec: { minAvailable: 0, selector: { matchLabels: { app: 'fresh' } } },
    });
    expect(created.status).toBe(201);
    const res = await evict('fresh');
    expect(res.status).toBe(429);
    const details = res.json['details'] as { causes: { message: string }[] };
    expect(details.causes[0]?.message).toBe(
      'The disruption budget fresh is still being processed by the server.',
    );
  });

  it('is a 500 when two budgets select the pod', async () => {
    await pod('twice', { app: 'twice' }, 'Running', true);
    await budget('twice-a', 'twice', { disruptionsAllowed: 1 });
    await budget('twice-b', 'twice', { disruptionsAllowed: 1 });
    const res = await evict('twice');
    expect(res.status).toBe(500);
    expect(res.json['message']).toBe(
      'Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
    );
  });

  it('evicts a Pending pod without asking its budget', async () => {
    await pod('pending', { app: 'pending' }, 'Pending', false);
    await budget('pending', 'pending', { disruptionsAllowed: 0 });
    expect((await evict('pending')).status).toBe(201);
  });

  it('marks the pod DisruptionTarget before deleting it, once', async () => {
    await pod('marked', { app: 'marked' }, 'Running', true);
    await budget('marked', 'marked', { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 });
    expect((await evict('marked')).status).toBe(201);
    const first = await api('GET', `/api/v1/namespaces/${NS}/pods/marked`);
    const meta = first.json['metadata'] as { deletionGracePeriodSeconds?: number; resourceVersion: string };
    expect(meta.deletionGracePeriodSeconds).toBe(30);
    const conditions = (first.json['status'] as { conditions: Record<string, unknown>[] }).conditions;
    const target = conditions.filter((c) => c['type'] === 'DisruptionTarget');
    expect(target).toEqual([
      {
        type: 'DisruptionTarget',
        status: 'True',
        reason: 'EvictionByEvictionAPI',
        message: 'Eviction API: evicting',
        lastTransitionTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) as unknown,
      },
    ]);
    // A second eviction of the deleting pod writes nothing: the condition is already there.
    expect((await evict('marked')).status).toBe(201);
    const second = await api('GET', `/api/v1/namespaces/${NS}/pods/marked`);
    expect((second.json['metadata'] as { resourceVersion: string }).resourceVersion).toBe(
      meta.resourceVersion,
    );
  });

  it("checks the delete's preconditions against the pod in kube's words, then deletes", async () => {
    await pod('pre', { app: 'pre' }, 'Pending', false);
    const current = await api('GET', `/api/v1/namespaces/${NS}/pods/pre`);
    const { uid, resourceVersion } = current.json['metadata'] as { uid: string; resourceVersion: string };
    const withPreconditions = (preconditions: Record<string, string>) =>
      api('POST', `/api/v1/namespaces/${NS}/pods/pre/eviction`, {
        apiVersion: 'policy/v1',
        kind: 'Eviction',
        metadata: { name: 'pre' },
        deleteOptions: { preconditions },
      });
    const stale = await withPreconditions({ resourceVersion: '1' });
    expect(stale.status).toBe(409);
    expect(stale.json['message']).toBe(
      `Operation cannot be fulfilled on Pod "pre": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${resourceVersion}). The object might have been modified`,
    );
    expect(stale.json['details']).toEqual({ name: 'pre', kind: 'Pod' });
    const other = await withPreconditions({ uid: 'x' });
    expect(other.status).toBe(409);
    expect(other.json['message']).toBe(
      `Operation cannot be fulfilled on Pod "pre": the UID in the precondition (x) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    );
    // The version the condition is written at becomes the delete's precondition.
    expect((await withPreconditions({ uid, resourceVersion })).status).toBe(201);
    // Bound to a node, the pod now waits out its grace period.
    const after = await api('GET', `/api/v1/namespaces/${NS}/pods/pre`);
    expect(
      (after.json['metadata'] as { deletionGracePeriodSeconds?: number }).deletionGracePeriodSeconds,
    ).toBe(30);
  });

  it('answers 404 for a missing pod and 400 for a mismatched name', async () => {
    expect((await evict('nope')).status).toBe(404);
    await pod('named', { app: 'named' }, 'Running', true);
    const res = await api('POST', `/api/v1/namespaces/${NS}/pods/named/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'other' },
    });
    expect(res.status).toBe(400);
  });
});
