/**
 * The scheduler against a real in-process Capstan server through the client library: placements,
 * Scheduled and FailedScheduling events, the PodScheduled condition, preemption of a
 * lower-priority pod, WaitForFirstConsumer with a local PV, and a start-up error for an unknown
 * plugin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from '../../src/api/types/core-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import {
  Client,
  EVENTS,
  loadKubeconfig,
  PERSISTENT_VOLUME_CLAIMS,
  PERSISTENT_VOLUMES,
  PODS,
  PRIORITY_CLASSES,
  STORAGE_CLASSES,
  type ClientConfig,
} from '../../src/client/index.js';
import { schedulerConfigFrom, SchedulerConfigError } from '../../src/scheduler/config.js';
import { startScheduler, type RunningScheduler } from '../../src/scheduler/run.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { createReadyNode, node, pod } from './harness.js';

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('scheduler on a real server', () => {
  let server: TestServer;
  let config: ClientConfig;
  let client: Client;
  let running: RunningScheduler;
  const abort = new AbortController();
  const NS = 'default';

  const pods = (): ReturnType<Client['resource']> => client.resource<Pod>(PODS);
  const getPod = (name: string): Promise<Pod> => client.resource<Pod>(PODS).get(name, { namespace: NS });
  const events = async (name: string, reason: string): Promise<Event[]> =>
    (await client.resource<Event>(EVENTS).list({ namespace: NS })).items.filter(
      (e) => e.regarding?.name === name && e.reason === reason,
    );
  const boundNode = (name: string): Promise<string> =>
    waitFor(`${name} bound`, async () => (await getPod(name)).spec?.nodeName || undefined);

  const createNode = (n: Node): Promise<void> => createReadyNode(client, n);

  beforeAll(async () => {
    server = await startTestServer();
    config = { ...loadKubeconfig(server.kubeconfigPath), qps: -1 };
    client = new Client(config);
    running = startScheduler(
      config,
      {
        config: schedulerConfigFrom({
          apiVersion: 'kubescheduler.config.k8s.io/v1',
          kind: 'KubeSchedulerConfiguration',
          leaderElection: { leaderElect: false },
        }),
        log: () => undefined,
      },
      abort.signal,
    );
  });
  afterAll(async () => {
    abort.abort();
    await running?.done;
    await client?.close();
    await server?.close();
  });

  it("places pods where they fit, with a Scheduled event; leaves other schedulers' pods alone", async () => {
    await createNode(node('small', { cpu: '1', memory: '2Gi' }));
    await createNode(node('big', { cpu: '4', memory: '8Gi' }));
    await pods().create(pod('fits-big', { cpu: '2' }));
    expect(await boundNode('fits-big')).toBe('big');
    const ev = await waitFor('Scheduled event', async () => (await events('fits-big', 'Scheduled'))[0]);
    expect(ev.note).toBe('Successfully assigned default/fits-big to big');
    expect(ev.reportingController).toBe('default-scheduler');
    const cond = (await getPod('fits-big')).status?.conditions?.find((c) => c.type === 'PodScheduled');
    expect(cond?.status).toBe('True');
    const other = pod('other');
    other.spec = { ...other.spec, schedulerName: 'someone-else' };
    await pods().create(other);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getPod('other')).spec?.nodeName ?? '').toBe('');
  });

  it("a pod that can never fit: kube's FailedScheduling message and PodScheduled=False Unschedulable", async () => {
    await pods().create(pod('never', { cpu: '64' }));
    const ev = await waitFor('FailedScheduling', async () => (await events('never', 'FailedScheduling'))[0]);
    expect(ev.type).toBe('Warning');
    expect(ev.note).toBe(
      '0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    );
    const cond = await waitFor('condition', async () =>
      (await getPod('never')).status?.conditions?.find(
        (c) => c.type === 'PodScheduled' && c.status === 'False',
      ),
    );
    expect(cond.reason).toBe('Unschedulable');
    expect(cond.message).toBe(ev.note);
    // The scheduler keeps placing other pods.
    await pods().create(pod('after-never', { cpu: '100m' }));
    await boundNode('after-never');
  });

  it('preempts a lower-priority pod: DisruptionTarget, graceful deletion, nominated node, then placement', async () => {
    const pcs = client.resource(PRIORITY_CLASSES);
    await pcs.create({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'low' },
      value: 10,
    } as never);
    await pcs.create({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'high' },
      value: 1000,
    } as never);
    await createNode(node('solo', { cpu: '2', labels: { pool: 'solo' } }));
    const onSolo = (p: Pod, cls: string): Pod => {
      p.spec = { ...p.spec, priorityClassName: cls, nodeSelector: { pool: 'solo' } };
      return p;
    };
    await pods().create(onSolo(pod('victim', { cpu: '1500m' }), 'low'));
    expect(await boundNode('victim')).toBe('solo');
    await pods().create(onSolo(pod('preemptor', { cpu: '1500m' }), 'high'));
    const victim = await waitFor('victim terminating', async () => {
      const v = await getPod('victim');
      return v.metadata.deletionTimestamp ? v : undefined;
    });
    const dt = victim.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    expect(dt).toMatchObject({ status: 'True', reason: 'PreemptionByScheduler' });
    expect(dt?.message).toBe('default-scheduler: preempting to accommodate a higher priority pod');
    const nominated = await waitFor(
      'nominated',
      async () => (await getPod('preemptor')).status?.nominatedNodeName || undefined,
    );
    expect(nominated).toBe('solo');
    const pre = await waitFor('Preempted event', async () => (await events('victim', 'Preempted'))[0]);
    expect(pre.note).toMatch(/^Preempted by pod .+ on node solo$/);
    // No kubelet here: finish the graceful deletion as one would.
    await pods().delete('victim', { namespace: NS, gracePeriodSeconds: 0 });
    expect(await boundNode('preemptor')).toBe('solo');
  });

  it("WaitForFirstConsumer with a local PV: the PV is bound to the claim, the pod lands on the PV's node", async () => {
    await client.resource(STORAGE_CLASSES).create({
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'local' },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    } as never);
    await client.resource<PersistentVolume>(PERSISTENT_VOLUMES).create({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'local-small' },
      spec: {
        capacity: { storage: '5Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'local',
        local: { path: '/mnt/disk' },
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['small'] }] },
            ],
          },
        },
      },
    });
    const pvcs = client.resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
    await pvcs.create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data', namespace: NS },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'local',
        resources: { requests: { storage: '1Gi' } },
      },
    });
    const p = pod('with-volume', { cpu: '100m' });
    p.spec = {
      ...p.spec,
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    };
    await pods().create(p);
    const pv = await waitFor('claimRef', async () => {
      const v = await client.resource<PersistentVolume>(PERSISTENT_VOLUMES).get('local-small');
      return v.spec?.claimRef ? v : undefined;
    });
    expect(pv.spec?.claimRef).toMatchObject({ kind: 'PersistentVolumeClaim', namespace: NS, name: 'data' });
    expect(pv.metadata.annotations?.['pv.kubernetes.io/bound-by-controller']).toBe('yes');
    // The PV controller's half (not running in this test server): bind the claim.
    const claim = await pvcs.get('data', { namespace: NS });
    const bound = await pvcs.update(
      { ...claim, spec: { ...claim.spec, volumeName: 'local-small' } },
      { namespace: NS },
    );
    await pvcs.updateStatus(
      { ...bound, status: { phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '5Gi' } } },
      { namespace: NS },
    );
    expect(await boundNode('with-volume')).toBe('small');
  });

  it("exposes kube's metric names", () => {
    const text = running.scheduler.metrics.render();
    expect(text).toContain(
      'scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"}',
    );
    expect(text).toContain(
      'scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"}',
    );
    expect(text).toMatch(/scheduler_pending_pods\{queue="(unschedulable|backoff)"\} [1-9]/);
    expect(text).toContain(
      'scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le="0.001"}',
    );
    expect(text).toContain('scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"}');
  });

  it('an unknown plugin in a profile is a start-up error naming it', () => {
    const cfg = schedulerConfigFrom({
      apiVersion: 'kubescheduler.config.k8s.io/v1',
      kind: 'KubeSchedulerConfiguration',
      profiles: [{ schedulerName: 'x', plugins: { filter: { enabled: [{ name: 'NoSuchPlugin' }] } } }],
    });
    expect(() => startScheduler(config, { config: cfg }, abort.signal)).toThrow(SchedulerConfigError);
    expect(() => startScheduler(config, { config: cfg }, abort.signal)).toThrow(
      /FilterPlugin "NoSuchPlugin" does not exist/,
    );
  });
});
