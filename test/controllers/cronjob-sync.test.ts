/**
 * kube's syncCronJob (src/controllers/cronjob/sync.ts) on plain objects: concurrencyPolicy
 * Allow/Forbid/Replace, startingDeadlineSeconds (MissSchedule), suspend, UnknownTimeZone,
 * UnexpectedJob, and the history limits.
 */
import { describe, expect, it } from 'vitest';
import type { CronJob, Job } from '../../src/api/types/batch-v1.js';
import { jobsToPrune, syncCronJob, type CronJobActions } from '../../src/controllers/cronjob/sync.js';

const NOW = new Date('2026-12-02T00:10:30Z');

function cj(
  spec: Partial<NonNullable<CronJob['spec']>>,
  active: string[] = [],
): CronJob & { apiVersion: string; kind: string } {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name: 'c', namespace: 'ns', uid: 'cj-uid', creationTimestamp: '2026-12-02T00:00:00Z' },
    spec: { schedule: '*/5 * * * *', jobTemplate: { metadata: {}, spec: {} }, ...spec },
    status: {
      active: active.map((n) => ({ kind: 'Job', name: n, namespace: 'ns', uid: `uid-${n}` })),
      lastScheduleTime: '2026-12-02T00:05:00Z',
    },
  };
}

function job(name: string, finished?: 'Complete' | 'Failed', start = '2026-12-02T00:00:00Z'): Job {
  return {
    metadata: {
      name,
      namespace: 'ns',
      uid: `uid-${name}`,
      ownerReferences: [{ kind: 'CronJob', uid: 'cj-uid', controller: true }],
    },
    status: {
      startTime: start,
      ...(finished === undefined ? {} : { conditions: [{ type: finished, status: 'True' }] }),
    },
  };
}

function actions(existing: Job[] = []): {
  act: CronJobActions;
  created: string[];
  deleted: string[];
  events: string[];
} {
  const created: string[] = [];
  const deleted: string[] = [];
  const events: string[] = [];
  return {
    created,
    deleted,
    events,
    act: {
      now: () => NOW,
      createJob: (_c, j) => {
        created.push(j.metadata.name ?? '');
        return Promise.resolve({
          job: { ...j, metadata: { ...j.metadata, uid: `uid-${j.metadata.name ?? ''}` } },
          alreadyExisted: false,
        });
      },
      getJob: (_ns, name) => Promise.resolve(existing.find((j) => j.metadata.name === name)),
      deleteJob: (_c, j) => {
        deleted.push(j.metadata.name ?? '');
        return Promise.resolve();
      },
      event: (_c, type, reason, message) => {
        events.push(`${type} ${reason} ${message}`);
      },
    },
  };
}

const DUE = `c-${Date.parse('2026-12-02T00:10:00Z') / 60_000}`;

describe('cronjob sync', () => {
  it('creates the due Job with Allow even while another runs', async () => {
    const a = actions();
    const r = await syncCronJob(cj({}, ['c-old']), [job('c-old')], a.act);
    expect(a.created).toEqual([DUE]);
    expect(r.cronJob.status?.active?.map((x) => x.name)).toEqual(['c-old', DUE]);
    expect(r.cronJob.status?.lastScheduleTime).toBe('2026-12-02T00:10:00Z');
    expect(r.requeueAfterMs).toBe(4 * 60_000 + 30_000 + 100);
  });

  it('skips with Forbid (JobAlreadyActive) and replaces with Replace', async () => {
    const f = actions();
    await syncCronJob(cj({ concurrencyPolicy: 'Forbid' }, ['c-old']), [job('c-old')], f.act);
    expect(f.created).toEqual([]);
    expect(f.events).toContain(
      'Normal JobAlreadyActive Not starting job because prior execution is running and concurrency policy is Forbid',
    );
    const r = actions([job('c-old')]);
    const res = await syncCronJob(cj({ concurrencyPolicy: 'Replace' }, ['c-old']), [job('c-old')], r.act);
    expect(r.deleted).toEqual(['c-old']);
    expect(r.created).toEqual([DUE]);
    expect(res.cronJob.status?.active?.map((x) => x.name)).toEqual([DUE]);
  });

  it('misses a start past startingDeadlineSeconds, does nothing when suspended, rejects an unknown zone', async () => {
    const late = actions();
    await syncCronJob(cj({ startingDeadlineSeconds: 10 }), [], late.act);
    expect(late.created).toEqual([]);
    const s = actions();
    await syncCronJob(cj({ suspend: true }), [], s.act);
    expect(s.created).toEqual([]);
    const z = actions();
    await syncCronJob(cj({ timeZone: 'Mars/Olympus' }), [], z.act);
    expect(z.created).toEqual([]);
    expect(z.events[0]).toMatch(/^Warning UnknownTimeZone invalid timeZone: "Mars\/Olympus"/);
  });

  it('reports an unknown running Job and drops finished ones from active', async () => {
    const a = actions();
    const r = await syncCronJob(cj({}, ['c-done']), [job('c-done', 'Complete'), job('stray')], a.act);
    expect(a.events).toContain(
      'Warning UnexpectedJob Saw a job that the controller did not create or forgot: stray',
    );
    expect(a.events).toContain('Normal SawCompletedJob Saw completed job: c-done, condition: Complete');
    expect(r.cronJob.status?.active?.map((x) => x.name)).toEqual([DUE]);
  });

  it('prunes finished Jobs beyond the history limits, oldest first', () => {
    const jobs = [
      job('s1', 'Complete', '2026-12-01T00:01:00Z'),
      job('s2', 'Complete', '2026-12-01T00:02:00Z'),
      job('s3', 'Complete', '2026-12-01T00:03:00Z'),
      job('f1', 'Failed', '2026-12-01T00:01:00Z'),
      job('f2', 'Failed', '2026-12-01T00:02:00Z'),
      job('running'),
    ];
    const pruned = jobsToPrune(cj({ successfulJobsHistoryLimit: 1, failedJobsHistoryLimit: 1 }), jobs);
    expect(pruned.map((j) => j.metadata.name)).toEqual(['s1', 's2', 'f1']);
  });
});
