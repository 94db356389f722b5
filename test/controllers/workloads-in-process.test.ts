/**
 * The workload controllers as `capstan server` runs them: in its in-process controller manager,
 * each as its own service account (`--use-service-account-credentials`) under
 * `--authorization-mode=Node,RBAC`, so kube's bootstrap roles (`system:controller:job-controller`,
 * ...) are all they have. A Job completes, a StatefulSet and a DaemonSet roll out (kubectl 1.33).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DaemonSet, StatefulSet } from '../../src/api/types/apps-v1.js';
import type { PodTemplateSpec } from '../../src/api/types/core-v1.js';
import type { Job } from '../../src/api/types/batch-v1.js';
import { Client, DAEMON_SETS, JOBS, STATEFUL_SETS, loadKubeconfig } from '../../src/client/index.js';
import { FakeKubelet } from '../support/pod-phases.js';
import { kubectlOutput, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;
let kubelet: FakeKubelet;

beforeAll(async () => {
  server = await startTestServer({
    controllers: ['job', 'statefulset', 'daemonset', 'cronjob', 'ttl-after-finished'],
    args: ['--authorization-mode=Node,RBAC'],
  });
  client = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1, burst: 0 });
  kubelet = new FakeKubelet(client, {
    namespace: 'default',
    outcome: (pod) =>
      pod.metadata.labels?.['batch.kubernetes.io/job-name'] === undefined
        ? { phase: 'Running' }
        : { phase: 'Succeeded' },
  });
  await kubelet.start();
});

afterAll(async () => {
  await kubelet?.stop();
  await client?.close();
  await server?.close();
});

const kubectl = (...args: string[]): Promise<string> =>
  kubectlOutput('1.33', args, server.kubeconfigPath, 90_000);
const template = (app: string): PodTemplateSpec => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'c', image: 'busybox' }] },
});

describe('workload controllers in capstan server (service accounts, RBAC)', () => {
  it('completes a Job', async () => {
    await client.resource<Job>(JOBS).create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {
        completions: 2,
        template: {
          metadata: {},
          spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
        },
      },
    });
    expect(await kubectl('wait', '--for=condition=complete', 'job/hello', '--timeout=60s')).toContain(
      'condition met',
    );
  });

  it('rolls out a StatefulSet and a DaemonSet', async () => {
    await client.resource<StatefulSet>(STATEFUL_SETS).create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: 'default' },
      spec: {
        serviceName: 'db',
        replicas: 2,
        selector: { matchLabels: { app: 'db' } },
        template: template('db'),
      },
    });
    await client.resource<DaemonSet>(DAEMON_SETS).create({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: 'default' },
      spec: { selector: { matchLabels: { app: 'agent' } }, template: template('agent') },
    });
    expect(await kubectl('rollout', 'status', 'statefulset/db', '--timeout=60s')).toContain(
      'roll out complete',
    );
    expect(await kubectl('rollout', 'status', 'daemonset/agent', '--timeout=60s')).toContain(
      'successfully rolled out',
    );
    const ds = await client.resource<DaemonSet>(DAEMON_SETS).get('agent', { namespace: 'default' });
    expect(ds.status?.desiredNumberScheduled).toBe(1);
  });
});
