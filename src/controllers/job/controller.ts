/**
 * The Job controller's loop (kube's `pkg/controller/job`): Job and Pod informers, a work queue
 * of Job keys, claiming of pods by selector and controller reference, and the client calls
 * behind {@link JobActions}. The reconcile itself is `sync.ts`.
 *
 * Pods still holding the tracking finalizer whose Job is gone (deleted, or never ours) lose it
 * here, so a deleted Job never leaves pods stuck in Terminating.
 */
import type { Job } from '../../api/types/batch-v1.js';
import type { Pod } from '../../api/types/core-v1.js';
import {
  JOBS,
  PODS,
  defaultControllerRateLimiter,
  isNotFound,
  WorkQueue,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import { concurrency } from '../config.js';
import type { ControllerContext, EventSink } from '../context.js';
import { namespaceTerminating } from '../shared/namespaces.js';
import { claimPods, controllerRefOf, newControllerRef } from '../shared/controller-ref.js';
import { Expectations } from '../shared/expectations.js';
import { labelMatcher } from '../shared/label-selector.js';
import { keyOf, splitKey, typed } from '../shared/meta.js';
import { DEFAULT_BACKOFF, NO_BACKOFF, type BackoffDurations, type BackoffRecord } from './backoff.js';
import { hasTrackingFinalizer, JOB_TRACKING_FINALIZER } from './pods.js';
import { syncJob, type JobActions } from './sync.js';
import { startWorkers } from '../shared/workers.js';

/** Options a test may set. */
export interface JobControllerOptions {
  readonly now?: () => Date;
  /** Pod re-creation backoff after failures (kube: 10 s doubling to 6 min). */
  readonly backoff?: BackoffDurations;
}

const ORPHAN = 'orphan-pod:';

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The kube `removeTrackingFinalizerPatch`: strategic merge, guarded by the pod's UID. */
function finalizerPatch(pod: Pod): unknown {
  return {
    metadata: { '$deleteFromPrimitiveList/finalizers': [JOB_TRACKING_FINALIZER], uid: pod.metadata.uid },
  };
}

/** One running job controller. */
export class JobController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #jobs: SharedInformer<Job>;
  readonly #podInformer: SharedInformer<Pod>;
  readonly #jobClient: ResourceClient<Job>;
  readonly #podClient: ResourceClient<Pod>;
  readonly #recorder: EventSink;
  readonly #expectations: Expectations;
  readonly #backoff = new Map<string, BackoffRecord>();
  readonly #now: () => Date;
  readonly #durations: BackoffDurations;

  constructor(ctx: ControllerContext, opts: JobControllerOptions = {}) {
    this.#ctx = ctx;
    this.#now = opts.now ?? (() => new Date());
    this.#durations = opts.backoff ?? DEFAULT_BACKOFF;
    this.#expectations = new Expectations(() => this.#now().getTime());
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#jobs = ctx.informers.informer<Job>(JOBS);
    this.#podInformer = ctx.informers.informer<Pod>(PODS);
    this.#jobClient = ctx.client.resource<Job>(JOBS);
    this.#podClient = ctx.client.resource<Pod>(PODS);
    this.#recorder = ctx.eventRecorder('job-controller');
    this.#jobs.addHandler({
      add: (j) => this.#queue.add(keyOf(j.metadata)),
      update: (_, j) => this.#queue.add(keyOf(j.metadata)),
      delete: (j) => {
        const key = keyOf(j.metadata);
        this.#expectations.delete(key);
        this.#backoff.delete(key);
        this.#queue.add(key);
        for (const p of this.#podInformer.store.byIndex('namespace', j.metadata.namespace ?? ''))
          if (controllerRefOf(p.metadata)?.uid === j.metadata.uid && hasTrackingFinalizer(p))
            this.#queue.add(ORPHAN + keyOf(p.metadata));
      },
    });
    this.#podInformer.addHandler({
      add: (p) => this.#podChanged(p, true),
      update: (old, p) => {
        if (old.metadata.resourceVersion !== p.metadata.resourceVersion) this.#podChanged(p, false);
      },
      delete: (p) => this.#podDeleted(p),
    });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'job', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'job', 5),
      sync: (key) => this.sync(key),
    });
  }

  #jobOf(pod: Pod): Job | undefined {
    const ref = controllerRefOf(pod.metadata);
    if (ref?.kind !== 'Job') return undefined;
    const job = this.#jobs.store.get(`${pod.metadata.namespace ?? ''}/${ref.name ?? ''}`);
    return job?.metadata.uid === ref.uid ? job : undefined;
  }

  #podChanged(pod: Pod, added: boolean): void {
    const ref = controllerRefOf(pod.metadata);
    const job = this.#jobOf(pod);
    if (job !== undefined) {
      const key = keyOf(job.metadata);
      if (added) this.#expectations.creationObserved(key);
      if (pod.metadata.deletionTimestamp !== undefined)
        this.#expectations.deletionObserved(key, keyOf(pod.metadata));
      this.#queue.add(key);
      return;
    }
    if (ref !== undefined) {
      if (ref.kind === 'Job' && hasTrackingFinalizer(pod)) this.#queue.add(ORPHAN + keyOf(pod.metadata));
      return;
    }
    if (hasTrackingFinalizer(pod)) this.#queue.add(ORPHAN + keyOf(pod.metadata));
    for (const j of this.#jobs.store.byIndex('namespace', pod.metadata.namespace ?? '')) {
      try {
        if (labelMatcher(j.spec?.selector)(pod.metadata.labels)) this.#queue.add(keyOf(j.metadata));
      } catch {
        // A Job with a selector no one can evaluate adopts nothing.
      }
    }
  }

  #podDeleted(pod: Pod): void {
    const job = this.#jobOf(pod);
    if (job === undefined) return;
    const key = keyOf(job.metadata);
    this.#expectations.deletionObserved(key, keyOf(pod.metadata));
    this.#queue.add(key);
  }

  /** Reconciles one Job key (or drops the tracking finalizer of one orphaned pod). */
  async sync(key: string): Promise<void> {
    if (key.startsWith(ORPHAN)) {
      await this.#releaseOrphan(key.slice(ORPHAN.length));
      return;
    }
    const cached = this.#jobs.store.get(key);
    if (cached === undefined) {
      this.#backoff.delete(key);
      return;
    }
    const job = typed(cached, 'batch/v1', 'Job');
    let matches;
    try {
      matches = labelMatcher(job.spec?.selector);
    } catch (err) {
      this.#ctx.log.error(`${key}: cannot use its selector`, err);
      return;
    }
    const { namespace } = splitKey(key);
    const candidates = this.#podInformer.store.byIndex('namespace', namespace);
    const pods = await claimPods(job, candidates, (p) => matches(p.metadata.labels), {
      objects: this.#podClient,
      owners: this.#jobClient,
    });
    if (!this.#expectations.satisfied(key)) return;
    const next = await syncJob(job, pods, this.#backoff.get(key) ?? NO_BACKOFF, this.#actions(key));
    this.#backoff.set(key, next);
  }

  #actions(key: string): JobActions {
    return {
      now: this.#now,
      expectCreations: (n) => this.#expectations.expectCreations(key, n),
      backoff: this.#durations,
      createPod: async (job, pod) => {
        const namespace = job.metadata.namespace ?? '';
        pod.metadata.ownerReferences = [newControllerRef(typed(job, 'batch/v1', 'Job'))];
        try {
          const created = await this.#podClient.create(pod, { namespace });
          this.#event(
            job,
            'Normal',
            'SuccessfulCreate',
            'Create',
            `Created pod: ${created.metadata.name ?? ''}`,
          );
        } catch (err) {
          this.#expectations.creationObserved(key);
          // kube: a namespace being torn down refuses every create; nothing to report or retry.
          if (namespaceTerminating(err)) return;
          this.#event(job, 'Warning', 'FailedCreate', 'Create', `Error creating: ${describe(err)}`);
          throw err;
        }
      },
      deletePod: async (job, pod) => {
        const podName = pod.metadata.name ?? '';
        try {
          await this.#podClient.delete(podName, { namespace: pod.metadata.namespace ?? '' });
          this.#event(job, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted pod: ${podName}`);
        } catch (err) {
          if (isNotFound(err)) return;
          this.#event(job, 'Warning', 'FailedDelete', 'Delete', `Error deleting: ${describe(err)}`);
          throw err;
        }
      },
      removeTrackingFinalizer: (pod) => this.#removeFinalizer(pod),
      updateStatus: async (job) =>
        this.#jobClient.updateStatus(job, { namespace: job.metadata.namespace ?? '' }),
      event: (job, type, reason, message) => this.#event(job, type, reason, 'Sync', message),
      requeueAfter: (ms) => this.#queue.addAfter(key, ms),
    };
  }

  #event(job: Job, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void {
    this.#recorder.event(typed(job, 'batch/v1', 'Job'), type, reason, action, note);
  }

  async #removeFinalizer(pod: Pod): Promise<void> {
    try {
      await this.#podClient.patch(pod.metadata.name ?? '', finalizerPatch(pod), {
        namespace: pod.metadata.namespace ?? '',
        type: 'strategic',
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async #releaseOrphan(podKey: string): Promise<void> {
    const pod = this.#podInformer.store.get(podKey);
    if (pod === undefined || !hasTrackingFinalizer(pod)) return;
    if (this.#jobOf(pod) !== undefined) return;
    await this.#removeFinalizer(pod);
  }
}
