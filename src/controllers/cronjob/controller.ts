/**
 * The CronJob controller's loop (kube's `cronjob-controller`, v2): CronJob and Job informers,
 * a work queue of CronJob keys requeued for just after each next activation, and the client
 * calls behind {@link CronJobActions}. The clock is injectable so a test can fire a one-minute
 * schedule at once.
 */
import type { CronJob, Job } from '../../api/types/batch-v1.js';
import {
  CRON_JOBS,
  JOBS,
  defaultControllerRateLimiter,
  isAlreadyExists,
  isNotFound,
  WorkQueue,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import { concurrency } from '../config.js';
import type { ControllerContext, EventSink } from '../context.js';
import { controllerRefOf } from '../shared/controller-ref.js';
import { keyOf, typed } from '../shared/meta.js';
import { jobsToPrune, syncCronJob, type CronJobActions } from './sync.js';
import { startWorkers } from '../shared/workers.js';

/** Options a test may set. */
export interface CronJobControllerOptions {
  /** The controller's clock (default: the system's). */
  readonly now?: () => Date;
}

const BY_OWNER = 'cronjob-owner-uid';

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One running cronjob controller. */
export class CronJobController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #cronJobs: SharedInformer<CronJob>;
  readonly #jobs: SharedInformer<Job>;
  readonly #cronClient: ResourceClient<CronJob>;
  readonly #jobClient: ResourceClient<Job>;
  readonly #recorder: EventSink;
  readonly #now: () => Date;

  constructor(ctx: ControllerContext, opts: CronJobControllerOptions = {}) {
    this.#ctx = ctx;
    this.#now = opts.now ?? (() => new Date());
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#cronJobs = ctx.informers.informer<CronJob>(CRON_JOBS);
    this.#jobs = ctx.informers.informer<Job>(JOBS);
    this.#jobs.store.addIndex(BY_OWNER, (j) => {
      const ref = controllerRefOf(j.metadata);
      return ref?.kind === 'CronJob' && ref.uid !== undefined ? [ref.uid] : [];
    });
    this.#cronClient = ctx.client.resource<CronJob>(CRON_JOBS);
    this.#jobClient = ctx.client.resource<Job>(JOBS);
    this.#recorder = ctx.eventRecorder('cronjob-controller');
    this.#cronJobs.addHandler({
      add: (c) => this.#queue.add(keyOf(c.metadata)),
      update: (old, c) => {
        // A new schedule or zone moves the next activation: look again now.
        if (old.spec?.schedule !== c.spec?.schedule || old.spec?.timeZone !== c.spec?.timeZone)
          this.#queue.forget(keyOf(c.metadata));
        this.#queue.add(keyOf(c.metadata));
      },
      delete: (c) => this.#queue.add(keyOf(c.metadata)),
    });
    const jobChanged = (j: Job): void => {
      const ref = controllerRefOf(j.metadata);
      if (ref?.kind !== 'CronJob') return;
      const cj = this.#cronJobs.store.get(`${j.metadata.namespace ?? ''}/${ref.name ?? ''}`);
      if (cj !== undefined && cj.metadata.uid === ref.uid) this.#queue.add(keyOf(cj.metadata));
    };
    this.#jobs.addHandler({ add: jobChanged, update: (_, j) => jobChanged(j), delete: jobChanged });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'cronjob', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'cron-job', 5),
      sync: (key) => this.sync(key),
    });
  }

  /** Reconciles one CronJob key. */
  async sync(key: string): Promise<void> {
    const cached = this.#cronJobs.store.get(key);
    if (cached === undefined) return;
    const cj = typed(cached, 'batch/v1', 'CronJob');
    const jobs = this.#jobs.store.byIndex(BY_OWNER, cj.metadata.uid ?? '');
    const result = await syncCronJob(cj, jobs, this.#actions());
    let current = result.cronJob;
    let changed = result.statusChanged;
    for (const j of jobsToPrune(current, jobs)) {
      if (await this.#deleteJob(current, j)) {
        current = {
          ...current,
          status: {
            ...current.status,
            active: (current.status?.active ?? []).filter((r) => r.uid !== j.metadata.uid),
          },
        };
        changed = true;
      }
    }
    if (changed) await this.#cronClient.updateStatus(current, { namespace: cj.metadata.namespace ?? '' });
    if (result.requeueAfterMs !== undefined) this.#queue.addAfter(key, Math.max(0, result.requeueAfterMs));
  }

  #actions(): CronJobActions {
    return {
      now: this.#now,
      createJob: async (cj, job) => {
        const namespace = cj.metadata.namespace ?? '';
        try {
          return { job: await this.#jobClient.create(job, { namespace }), alreadyExisted: false };
        } catch (err) {
          if (isAlreadyExists(err))
            return {
              job: await this.#jobClient.get(job.metadata.name ?? '', { namespace }),
              alreadyExisted: true,
            };
          this.#event(cj, 'Warning', 'FailedCreate', `Error creating job: ${describe(err)}`);
          throw err;
        }
      },
      getJob: async (namespace, name) => {
        try {
          return await this.#jobClient.get(name, { namespace });
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      deleteJob: async (cj, job) => {
        await this.#deleteJob(cj, job);
      },
      event: (cj, type, reason, message) => this.#event(cj, type, reason, message),
    };
  }

  /** Deletes a Job in the background, as kube's `deleteJob`; false when it failed. */
  async #deleteJob(cj: CronJob, job: Job): Promise<boolean> {
    const name = job.metadata.name ?? '';
    try {
      await this.#jobClient.delete(name, {
        namespace: job.metadata.namespace ?? '',
        propagationPolicy: 'Background',
      });
    } catch (err) {
      if (isNotFound(err)) return true;
      this.#event(cj, 'Warning', 'FailedDelete', `Deleted job: ${describe(err)}`);
      return false;
    }
    this.#event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${name}`);
    return true;
  }

  #event(cj: CronJob, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.#recorder.event(typed(cj, 'batch/v1', 'CronJob'), type, reason, 'Sync', message);
  }
}
