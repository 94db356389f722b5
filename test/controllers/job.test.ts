/**
 * The job and ttl-after-finished controllers on a real server with the fake kubelet: stock
 * kubectl 1.33 waits for `condition=complete` / `condition=failed`, status and pods as kube's,
 * Indexed jobs, and a Job whose pods the server refuses gets kube's FailedCreate event while the
 * controller goes on serving other Jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/api/types/batch-v1.js';
import type { Pod } from '../../src/api/types/core-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import { EVENTS, JOBS, PODS, isNotFound } from '../../src/client/index.js';
import { jobController } from '../../src/controllers/job/index.js';
import { JOB_COMPLETION_INDEX, JOB_TRACKING_FINALIZER } from '../../src/controllers/job/pods.js';
import { ttlAfterFinishedController } from '../../src/controllers/ttl-after-finished/index.js';
import { kubectlOutput, runKubectl } from '../support/server.js';
import { eventually, startWorkloadCluster, type WorkloadCluster } from '../support/workload-cluster.js';

let c: WorkloadCluster;

beforeAll(async () => {
  c = await startWorkloadCluster([jobController, ttlAfterFinishedController], {
    nodes: ['node-1', 'node-2'],
    // Pods say what becomes of them through an env var: EXIT=0 succeeds, EXIT=n fails with n.
    outcome: (pod: Pod) => {
      const exit = pod.spec?.containers?.[0]?.env?.find((e) => e.name === 'EXIT')?.value;
      if (exit === undefined) return { phase: 'Running' };
      return exit === '0' ? { phase: 'Succeeded' } : { phase: 'Failed', exitCode: Number(exit) };
    },
  });
});

afterAll(async () => {
  await c?.close();
});

function job(name: string, spec: Job['spec'], exit = '0'): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: 'default' },
    spec: {
      template: {
        metadata: {},
        spec: {
          restartPolicy: 'Never',
          containers: [{ name: 'main', image: 'busybox', env: [{ name: 'EXIT', value: exit }] }],
        },
      },
      ...spec,
    },
  };
}

async function eventsOf(name: string): Promise<string[]> {
  const list = await c.client.resource<Event>(EVENTS).list({ namespace: 'default' });
  return (list.items ?? [])
    .filter((e) => e.regarding?.name === name)
    .map((e) => `${e.type ?? ''} ${e.reason ?? ''} ${e.note ?? ''}`);
}

describe('job controller', () => {
  it('runs a Job to Complete; kubectl wait --for=condition=complete returns', async () => {
    await c.client.resource<Job>(JOBS).create(job('pi', { completions: 3, parallelism: 2 }));
    const out = await kubectlOutput(
      '1.33',
      ['wait', '--for=condition=complete', 'job/pi', '--timeout=60s'],
      c.server.kubeconfigPath,
      90_000,
    );
    expect(out).toContain('job.batch/pi condition met');
    const done = await eventually('final counts', async () => {
      const j = await c.client.resource<Job>(JOBS).get('pi', { namespace: 'default' });
      return j.status?.succeeded === 3 ? j : undefined;
    });
    expect(done.status?.active ?? 0).toBe(0);
    expect(done.status?.ready ?? 0).toBe(0);
    expect(done.status?.uncountedTerminatedPods).toEqual({});
    expect(done.status?.completionTime).toBeDefined();
    expect((done.status?.conditions ?? []).map((x) => `${x.type}:${x.reason ?? ''}`)).toEqual([
      'SuccessCriteriaMet:CompletionsReached',
      'Complete:CompletionsReached',
    ]);
    const pods = await c.client
      .resource<Pod>(PODS)
      .list({ namespace: 'default', labelSelector: 'batch.kubernetes.io/job-name=pi' });
    expect(pods.items?.length).toBe(3);
    for (const p of pods.items ?? []) {
      expect(p.metadata.finalizers ?? []).not.toContain(JOB_TRACKING_FINALIZER);
      const ref = p.metadata.ownerReferences?.[0];
      expect(ref).toMatchObject({ kind: 'Job', name: 'pi', controller: true, blockOwnerDeletion: true });
    }
    const events = await eventually('Completed event', async () => {
      const e = await eventsOf('pi');
      return e.some((x) => x.startsWith('Normal Completed')) ? e : undefined;
    });
    expect(events.filter((e) => e.startsWith('Normal SuccessfulCreate Created pod: pi-')).length).toBe(3);
  });

  it('fails a Job past backoffLimit with BackoffLimitExceeded', async () => {
    await c.client.resource<Job>(JOBS).create(job('boom', { backoffLimit: 0 }, '3'));
    const out = await kubectlOutput(
      '1.33',
      ['wait', '--for=condition=failed', 'job/boom', '--timeout=60s'],
      c.server.kubeconfigPath,
      90_000,
    );
    expect(out).toContain('condition met');
    const j = await c.client.resource<Job>(JOBS).get('boom', { namespace: 'default' });
    expect(j.status?.failed).toBe(1);
    expect((j.status?.conditions ?? []).map((x) => `${x.type}:${x.reason ?? ''}`)).toEqual([
      'FailureTarget:BackoffLimitExceeded',
      'Failed:BackoffLimitExceeded',
    ]);
    expect(await eventsOf('boom')).toContain(
      'Warning BackoffLimitExceeded Job has reached the specified backoff limit',
    );
  });

  it('runs an Indexed Job with one pod per index', async () => {
    await c.client
      .resource<Job>(JOBS)
      .create(job('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }));
    await kubectlOutput(
      '1.33',
      ['wait', '--for=condition=complete', 'job/idx', '--timeout=60s'],
      c.server.kubeconfigPath,
      90_000,
    );
    const j = await eventually('completedIndexes', async () => {
      const x = await c.client.resource<Job>(JOBS).get('idx', { namespace: 'default' });
      return x.status?.completedIndexes === '0-2' ? x : undefined;
    });
    expect(j.status?.succeeded).toBe(3);
    const pods = await c.client
      .resource<Pod>(PODS)
      .list({ namespace: 'default', labelSelector: 'batch.kubernetes.io/job-name=idx' });
    const byIndex = new Map((pods.items ?? []).map((p) => [p.metadata.labels?.[JOB_COMPLETION_INDEX], p]));
    expect([...byIndex.keys()].sort()).toEqual(['0', '1', '2']);
    expect(byIndex.get('2')?.spec?.hostname).toBe('idx-2');
    expect(byIndex.get('2')?.metadata.annotations?.[JOB_COMPLETION_INDEX]).toBe('2');
  });

  it('reports pods the server refuses (FailedCreate) and keeps serving other Jobs', async () => {
    const bad = job('bad', {});
    const spec = bad.spec?.template?.spec;
    if (spec !== undefined) spec.serviceAccountName = 'no-such-account';
    await c.client.resource<Job>(JOBS).create(bad);
    const events = await eventually('FailedCreate', async () => {
      const e = await eventsOf('bad');
      return e.some((x) => x.startsWith('Warning FailedCreate Error creating:')) ? e : undefined;
    });
    expect(events.length).toBeGreaterThan(0);
    await c.client.resource<Job>(JOBS).create(job('after-bad', {}));
    const res = await runKubectl(
      '1.33',
      ['wait', '--for=condition=complete', 'job/after-bad', '--timeout=60s'],
      c.server.kubeconfigPath,
      90_000,
    );
    expect(res.stdout).toContain('condition met');
  });

  it('deletes a finished Job after ttlSecondsAfterFinished', async () => {
    await c.client.resource<Job>(JOBS).create(job('short-lived', { ttlSecondsAfterFinished: 1 }));
    await eventually(
      'the Job to be gone',
      async () => {
        try {
          await c.client.resource<Job>(JOBS).get('short-lived', { namespace: 'default' });
          return undefined;
        } catch (err) {
          return isNotFound(err) ? true : undefined;
        }
      },
      45_000,
    );
  });

  it('logged no controller errors', () => {
    expect(c.errors.filter((e) => !e.includes('FailedCreate') && !e.includes('no-such-account'))).toEqual([]);
  });
});
