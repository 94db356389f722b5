/**
 * kube's job reconcile (src/controllers/job/sync.ts) against an in-memory world that applies its
 * actions: pods are created with UIDs, deletions set deletionTimestamp (pods with the tracking
 * finalizer stay until it is removed), status writes replace the Job's status.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/api/types/batch-v1.js';
import type { Pod } from '../../src/api/types/core-v1.js';
import { NO_BACKOFF, type BackoffRecord } from '../../src/controllers/job/backoff.js';
import { JOB_COMPLETION_INDEX, JOB_TRACKING_FINALIZER } from '../../src/controllers/job/pods.js';
import { syncJob, type JobActions } from '../../src/controllers/job/sync.js';

class World {
  job: Job;
  readonly pods = new Map<string, Pod>();
  readonly events: string[] = [];
  now = new Date('2026-12-02T00:00:00Z');
  #seq = 0;
  backoff: BackoffRecord = NO_BACKOFF;
  requeues: number[] = [];

  constructor(job: Job) {
    this.job = job;
  }

  actions(): JobActions {
    return {
      now: () => this.now,
      backoff: { baseMs: 0, maxMs: 0 },
      expectCreations: () => undefined,
      createPod: (_job, pod) => {
        const name = `${pod.metadata.generateName ?? 'p-'}${this.#seq++}`;
        this.pods.set(name, {
          ...structuredClone(pod),
          metadata: {
            ...structuredClone(pod.metadata),
            name,
            uid: `uid-${name}`,
            creationTimestamp: this.now.toISOString(),
          },
          status: { phase: 'Pending' },
        });
        return Promise.resolve();
      },
      deletePod: (_job, pod) => {
        const p = this.pods.get(pod.metadata.name ?? '');
        if (p === undefined) return Promise.resolve();
        if ((p.metadata.finalizers ?? []).length === 0) this.pods.delete(p.metadata.name ?? '');
        else p.metadata.deletionTimestamp = this.now.toISOString();
        return Promise.resolve();
      },
      removeTrackingFinalizer: (pod) => {
        const p = this.pods.get(pod.metadata.name ?? '');
        if (p === undefined) return Promise.resolve();
        p.metadata.finalizers = (p.metadata.finalizers ?? []).filter((f) => f !== JOB_TRACKING_FINALIZER);
        if (p.metadata.deletionTimestamp !== undefined && p.metadata.finalizers.length === 0)
          this.pods.delete(p.metadata.name ?? '');
        return Promise.resolve();
      },
      updateStatus: (job) => {
        this.job = { ...this.job, status: structuredClone(job.status ?? {}) };
        return Promise.resolve(structuredClone(this.job));
      },
      event: (_job, type, reason, message) => {
        this.events.push(`${type} ${reason} ${message}`);
      },
      requeueAfter: (ms) => {
        this.requeues.push(ms);
      },
    };
  }

  async sync(times = 1): Promise<void> {
    for (let i = 0; i < times; i++)
      this.backoff = await syncJob(
        structuredClone(this.job),
        structuredClone([...this.pods.values()]),
        this.backoff,
        this.actions(),
      );
  }

  /** Sets the phase of every pod matching `pick`; failed pods get exit code `code`. */
  finish(phase: 'Succeeded' | 'Failed', pick: (p: Pod) => boolean = () => true, code = 1): void {
    for (const p of this.pods.values())
      if (pick(p) && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
        p.status = {
          phase,
          containerStatuses: [
            {
              name: 'main',
              state: {
                terminated: {
                  exitCode: phase === 'Succeeded' ? 0 : code,
                  finishedAt: this.now.toISOString(),
                },
              },
            },
          ],
        };
  }

  conditions(): string[] {
    return (this.job.status?.conditions ?? []).map((c) => `${c.type}=${c.status}:${c.reason}`);
  }
}

function job(spec: Job['spec']): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'ns', uid: 'job-uid', generation: 1 },
    spec: {
      parallelism: 1,
      completions: 1,
      backoffLimit: 6,
      template: {
        metadata: { labels: { app: 'pi' } },
        spec: { containers: [{ name: 'main', image: 'busybox' }], restartPolicy: 'Never' },
      },
      ...spec,
    },
  };
}

describe('job sync', () => {
  it('runs completions with parallelism, tracks pods with the finalizer, and completes as kube does', async () => {
    const w = new World(job({ completions: 3, parallelism: 2 }));
    await w.sync();
    expect(w.pods.size).toBe(2);
    for (const p of w.pods.values()) expect(p.metadata.finalizers).toContain(JOB_TRACKING_FINALIZER);
    expect(w.job.status?.active).toBe(2);
    expect(w.job.status?.startTime).toBe('2026-12-02T00:00:00Z');
    expect(w.job.status?.uncountedTerminatedPods).toEqual({});
    w.finish('Succeeded');
    await w.sync();
    expect(w.job.status?.succeeded).toBe(2);
    expect(w.pods.size).toBe(3);
    for (const p of w.pods.values())
      if (p.status?.phase === 'Succeeded') expect(p.metadata.finalizers).toEqual([]);
    w.finish('Succeeded');
    await w.sync(2);
    expect(w.job.status?.succeeded).toBe(3);
    expect(w.conditions()).toEqual([
      'SuccessCriteriaMet=True:CompletionsReached',
      'Complete=True:CompletionsReached',
    ]);
    expect(w.job.status?.completionTime).toBe('2026-12-02T00:00:00Z');
    expect(w.events).toContain('Normal Completed Job completed');
  });

  it('fails with BackoffLimitExceeded after backoffLimit failures', async () => {
    const w = new World(job({ backoffLimit: 1 }));
    await w.sync();
    w.finish('Failed');
    await w.sync();
    expect(w.job.status?.failed).toBe(1);
    w.finish('Failed');
    await w.sync(2);
    expect(w.job.status?.failed).toBe(2);
    expect(w.conditions()).toEqual([
      'FailureTarget=True:BackoffLimitExceeded',
      'Failed=True:BackoffLimitExceeded',
    ]);
    expect(w.events).toContain('Warning BackoffLimitExceeded Job has reached the specified backoff limit');
    expect(w.job.status?.completionTime).toBeUndefined();
  });

  it('fails with DeadlineExceeded after activeDeadlineSeconds, deleting active pods', async () => {
    const w = new World(job({ activeDeadlineSeconds: 10 }));
    await w.sync();
    expect(w.requeues.at(-1)).toBe(10_000);
    w.now = new Date(w.now.getTime() + 11_000);
    await w.sync(3);
    expect(w.conditions()).toEqual(['FailureTarget=True:DeadlineExceeded', 'Failed=True:DeadlineExceeded']);
    expect(w.job.status?.active).toBe(0);
    expect(w.pods.size).toBe(0);
  });

  it('applies podFailurePolicy: FailJob with kube message, Ignore not counted', async () => {
    const w = new World(
      job({
        backoffLimit: 0,
        podFailurePolicy: {
          rules: [
            { action: 'Ignore', onExitCodes: { operator: 'In', values: [5] } },
            { action: 'FailJob', onExitCodes: { containerName: 'main', operator: 'In', values: [42] } },
          ],
        },
      }),
    );
    await w.sync();
    w.finish('Failed', () => true, 5);
    await w.sync(2);
    expect(w.job.status?.failed ?? 0).toBe(0);
    expect(w.conditions()).toEqual([]);
    w.finish('Failed', () => true, 42);
    await w.sync(2);
    const failed = w.job.status?.conditions?.find((c) => c.type === 'Failed');
    expect(failed?.reason).toBe('PodFailurePolicy');
    expect(failed?.message).toMatch(
      /^Container main for pod ns\/pi-\d+ failed with exit code 42 matching FailJob rule at index 1$/,
    );
  });

  it('runs Indexed jobs with index annotation, label, hostname and env, and completedIndexes', async () => {
    const w = new World(job({ completionMode: 'Indexed', completions: 3, parallelism: 3 }));
    await w.sync();
    const pods = [...w.pods.values()];
    expect(pods.map((p) => p.metadata.annotations?.[JOB_COMPLETION_INDEX]).sort()).toEqual(['0', '1', '2']);
    const p1 = pods.find((p) => p.metadata.labels?.[JOB_COMPLETION_INDEX] === '1');
    expect(p1?.spec?.hostname).toBe('pi-1');
    expect(p1?.metadata.generateName).toBe('pi-1-');
    expect(p1?.spec?.containers?.[0]?.env?.[0]?.name).toBe('JOB_COMPLETION_INDEX');
    w.finish('Succeeded', (p) => p.metadata.labels?.[JOB_COMPLETION_INDEX] !== '1');
    await w.sync();
    expect(w.job.status?.completedIndexes).toBe('0,2');
    w.finish('Succeeded');
    await w.sync(2);
    expect(w.job.status?.completedIndexes).toBe('0-2');
    expect(w.conditions()).toContain('Complete=True:CompletionsReached');
  });

  it('ends an Indexed job early by successPolicy', async () => {
    const w = new World(
      job({
        completionMode: 'Indexed',
        completions: 3,
        parallelism: 3,
        successPolicy: { rules: [{ succeededIndexes: '0' }] },
      }),
    );
    await w.sync();
    // The other indexes run and are ready when index 0 succeeds.
    for (const p of w.pods.values())
      p.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    await w.sync();
    expect(w.job.status?.ready).toBe(3);
    w.finish('Succeeded', (p) => p.metadata.labels?.[JOB_COMPLETION_INDEX] === '0');
    await w.sync(3);
    expect(w.conditions()).toEqual(['SuccessCriteriaMet=True:SuccessPolicy', 'Complete=True:SuccessPolicy']);
    expect(w.job.status?.conditions?.[1]?.message).toBe('Matched rules at index 0');
    // The pods deleted at the end are no longer ready ones (kube's e2e checks `ready: 0`).
    expect([w.job.status?.active, w.job.status?.ready]).toEqual([0, 0]);
  });

  it('fails indexes past backoffLimitPerIndex and the job with FailedIndexes', async () => {
    const w = new World(
      job({
        completionMode: 'Indexed',
        completions: 2,
        parallelism: 2,
        backoffLimitPerIndex: 0,
        backoffLimit: 2147483647,
      }),
    );
    await w.sync();
    w.finish('Failed', (p) => p.metadata.labels?.[JOB_COMPLETION_INDEX] === '0');
    await w.sync();
    expect(w.job.status?.failedIndexes).toBe('0');
    w.finish('Succeeded');
    await w.sync(3);
    expect(w.conditions()).toEqual(['FailureTarget=True:FailedIndexes', 'Failed=True:FailedIndexes']);
  });

  it('suspends and resumes with kube conditions and events', async () => {
    const w = new World(job({ suspend: true }));
    await w.sync();
    expect(w.pods.size).toBe(0);
    expect(w.job.status?.startTime).toBeUndefined();
    expect(w.conditions()).toEqual(['Suspended=True:JobSuspended']);
    expect(w.events).toContain('Normal Suspended Job suspended');
    w.job = { ...w.job, spec: { ...w.job.spec, suspend: false } };
    await w.sync();
    expect(w.pods.size).toBe(1);
    expect(w.conditions()).toEqual(['Suspended=False:JobResumed']);
    expect(w.events).toContain('Normal Resumed Job resumed');
  });

  it('waits for terminating pods before replacing them with podReplacementPolicy Failed', async () => {
    const w = new World(job({ podReplacementPolicy: 'Failed' }));
    await w.sync();
    const [first] = w.pods.values();
    if (first === undefined) throw new Error('no pod');
    first.metadata.deletionTimestamp = w.now.toISOString();
    await w.sync();
    expect(w.pods.size).toBe(1);
    expect(w.job.status?.terminating).toBe(1);
    first.status = { phase: 'Failed' };
    await w.sync(2);
    expect(w.pods.size).toBe(1);
    expect([...w.pods.values()][0]?.metadata.name).not.toBe(first.metadata.name);
  });
});
