/**
 * The cronjob controller (with the job controller) on a real server, its clock injected: a
 * one-minute schedule fires at once, the Job is named `<cronjob>-<scheduled minutes>` with the
 * scheduled-timestamp annotation, the Job completes, and the CronJob's status follows. A
 * schedule that never fires (February 31st) gets kube's InvalidSchedule event while the
 * controller goes on serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CronJob, Job } from '../../src/api/types/batch-v1.js';
import type { Event } from '../../src/api/types/events-v1.js';
import { CRON_JOBS, EVENTS, JOBS } from '../../src/client/index.js';
import { CronJobController } from '../../src/controllers/cronjob/controller.js';
import { cronJobController } from '../../src/controllers/cronjob/index.js';
import { CRONJOB_SCHEDULED_TIMESTAMP } from '../../src/controllers/cronjob/sync.js';
import { jobController } from '../../src/controllers/job/index.js';
import { eventually, startWorkloadCluster, type WorkloadCluster } from '../support/workload-cluster.js';

let c: WorkloadCluster;
/** The controller's clock runs this far ahead of the machine's. */
const AHEAD_MS = 70_000;

beforeAll(async () => {
  c = await startWorkloadCluster(
    [
      jobController,
      {
        ...cronJobController,
        start: (ctx) => {
          new CronJobController(ctx, { now: () => new Date(Date.now() + AHEAD_MS) }).start();
        },
      },
    ],
    { outcome: () => ({ phase: 'Succeeded' }) },
  );
});

afterAll(async () => {
  await c?.close();
});

function cronJob(name: string, schedule: string): CronJob {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: 'default' },
    spec: {
      schedule,
      jobTemplate: {
        metadata: { labels: { from: name } },
        spec: {
          template: {
            metadata: {},
            spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      },
    },
  };
}

async function eventsOf(name: string): Promise<string[]> {
  const list = await c.client.resource<Event>(EVENTS).list({ namespace: 'default' });
  return (list.items ?? [])
    .filter((e) => e.regarding?.name === name)
    .map((e) => `${e.type ?? ''} ${e.reason ?? ''} ${e.note ?? ''}`);
}

describe('cronjob controller', () => {
  it('fires a one-minute schedule with an injected clock, and records the finished Job', async () => {
    const created = await c.client.resource<CronJob>(CRON_JOBS).create(cronJob('every-minute', '* * * * *'));
    const job = await eventually('the scheduled Job', async () => {
      const list = await c.client
        .resource<Job>(JOBS)
        .list({ namespace: 'default', labelSelector: 'from=every-minute' });
      return list.items?.[0];
    });
    const scheduled = job.metadata.annotations?.[CRONJOB_SCHEDULED_TIMESTAMP] ?? '';
    expect(scheduled).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    expect(job.metadata.name).toBe(`every-minute-${Date.parse(scheduled) / 60_000}`);
    // The activation is within the minute the controller's clock is in, after creation.
    expect(Date.parse(scheduled)).toBeGreaterThan(Date.parse(created.metadata.creationTimestamp ?? ''));
    expect(job.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'CronJob',
      name: 'every-minute',
      controller: true,
      blockOwnerDeletion: true,
    });
    const cj = await eventually('lastSuccessfulTime', async () => {
      const x = await c.client.resource<CronJob>(CRON_JOBS).get('every-minute', { namespace: 'default' });
      return x.status?.lastSuccessfulTime !== undefined && (x.status.active ?? []).length === 0
        ? x
        : undefined;
    });
    expect(cj.status?.lastScheduleTime).toBe(scheduled);
    const events = await eventually('SawCompletedJob', async () => {
      const e = await eventsOf('every-minute');
      return e.some((x) => x.includes('SawCompletedJob')) ? e : undefined;
    });
    expect(events).toContain(`Normal SuccessfulCreate Created job ${job.metadata.name ?? ''}`);
    expect(events).toContain(
      `Normal SawCompletedJob Saw completed job: ${job.metadata.name ?? ''}, condition: Complete`,
    );
  });

  it('reports a schedule that never fires with InvalidSchedule and keeps serving', async () => {
    await c.client.resource<CronJob>(CRON_JOBS).create(cronJob('never', '59 23 31 2 *'));
    const events = await eventually('InvalidSchedule', async () => {
      const e = await eventsOf('never');
      return e.length > 0 ? e : undefined;
    });
    expect(events[0]).toBe(
      'Warning InvalidSchedule invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second',
    );
    await c.client.resource<CronJob>(CRON_JOBS).create(cronJob('after-never', '*/1 * * * *'));
    await eventually('a Job of the next CronJob', async () => {
      const list = await c.client
        .resource<Job>(JOBS)
        .list({ namespace: 'default', labelSelector: 'from=after-never' });
      return list.items?.[0];
    });
    expect(c.errors).toEqual([]);
  });
});
