/**
 * Workload controllers at rest write nothing: a suspended Job (`active` 0), a StatefulSet whose
 * pods are not ready (`readyReplicas` 0) and a DaemonSet on a cluster without nodes (every count
 * 0) keep one resourceVersion once their status is written. Go's JSON omits those zero counts,
 * so a controller that compared its computed status with the stored one as it is would write it
 * again on every sync, each write waking it for the next (kube's e2e "Job should manage the
 * lifecycle of a job" found the Job's: every update conflicted).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';

let server: TestServer;
let tls: AdminTls;

const template = {
  metadata: { labels: { app: 'rest' } },
  spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
};

async function create(path: string, body: unknown): Promise<void> {
  const r = await adminJson(`${server.url}${path}`, tls, 'POST', body);
  expect(r.status).toBe(201);
}

/** The parts of a workload object the checks read. */
interface Workload {
  metadata: { resourceVersion: string };
  status?: {
    conditions?: { type: string }[];
    replicas?: number;
    readyReplicas?: number;
    observedGeneration?: number;
  };
}

async function get(path: string): Promise<Workload> {
  const r = await adminJson(`${server.url}${path}`, tls);
  expect(r.status).toBe(200);
  return r.json as unknown as Workload;
}

/** The object's resourceVersion once `written` holds, and again `ms` later. */
async function versionsAtRest(path: string, written: (o: Workload) => boolean, ms = 1500) {
  await expect.poll(async () => written(await get(path)), { timeout: 20_000 }).toBe(true);
  const before = (await get(path)).metadata.resourceVersion;
  await new Promise((r) => setTimeout(r, ms));
  const after = (await get(path)).metadata.resourceVersion;
  return { before, after };
}

beforeAll(async () => {
  server = await startTestServer({
    controllers: ['job-controller', 'statefulset-controller', 'daemonset-controller'],
  });
  tls = adminTls(server.kubeconfigPath);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe('controllers at rest', () => {
  it('leave a suspended Job alone once it shows Suspended', async () => {
    await create('/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'rest' },
      spec: { suspend: true, template: { spec: { ...template.spec, restartPolicy: 'Never' } } },
    });
    const v = await versionsAtRest('/apis/batch/v1/namespaces/default/jobs/rest', (o) =>
      (o.status?.conditions ?? []).some((c) => c.type === 'Suspended'),
    );
    expect(v.after).toBe(v.before);
  });

  it('leave a StatefulSet with no ready pod alone once its status is written', async () => {
    await create('/apis/apps/v1/namespaces/default/statefulsets', {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'rest' },
      spec: { replicas: 1, serviceName: 'rest', selector: { matchLabels: { app: 'rest' } }, template },
    });
    const path = '/apis/apps/v1/namespaces/default/statefulsets/rest';
    const v = await versionsAtRest(path, (o) => o.status?.replicas === 1);
    expect((await get(path)).status?.readyReplicas).toBeUndefined();
    expect(v.after).toBe(v.before);
  });

  it('leave a DaemonSet with no node alone once its status is written', async () => {
    await create('/apis/apps/v1/namespaces/default/daemonsets', {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'rest' },
      spec: { selector: { matchLabels: { app: 'rest' } }, template },
    });
    const v = await versionsAtRest(
      '/apis/apps/v1/namespaces/default/daemonsets/rest',
      (o) => o.status?.observedGeneration === 1,
    );
    expect(v.after).toBe(v.before);
  });
});
