/**
 * One reconcile of one Job, as kube v1.33's job controller `syncJob` does it:
 *
 * 1. A finished Job only loses the tracking finalizers of its remaining pods.
 * 2. Count: newly finished pods (still holding the tracking finalizer) join the counts through
 *    `status.uncountedTerminatedPods` (Indexed: `completedIndexes`), then lose the finalizer.
 * 3. Decide: a FailureTarget (podFailurePolicy FailJob, BackoffLimitExceeded, DeadlineExceeded,
 *    MaxFailedIndexesExceeded, FailedIndexes) or SuccessCriteriaMet (successPolicy, or all
 *    completions) condition first; active pods are then deleted; once nothing is uncounted or
 *    terminating, the final Failed / Complete condition (and completionTime) is written.
 * 4. Otherwise manage pods: delete surplus, create missing ones (indexes lowest first) after
 *    the failure backoff; Suspended/Resumed conditions and events.
 */
import type { Job, JobStatus } from '../../api/types/batch-v1.js';
import type { Pod } from '../../api/types/core-v1.js';
import { isPodTerminating } from '../workload/pod.js';
import { deletionOrder, isPodActive, isPodReady } from '../shared/pods.js';
import { rfc3339 } from '../shared/meta.js';
import {
  NO_BACKOFF,
  nextBackoffRecord,
  remainingBackoff,
  type BackoffDurations,
  type BackoffRecord,
} from './backoff.js';
import {
  ensureCondition,
  isJobFinished,
  JOB_REASONS,
  trueCondition,
  type PendingCondition,
} from './conditions.js';
import { formatIndexes, parseIndexes } from './indexes.js';
import {
  completionIndex,
  hasTrackingFinalizer,
  isIndexed,
  isPodFailed,
  JOB_INDEX_FAILURE_COUNT,
  JOB_INDEX_IGNORED_FAILURE_COUNT,
  onlyReplaceFailedPods,
  podForJob,
} from './pods.js';
import { matchPodFailurePolicy, matchSuccessPolicy } from './policies.js';

/** The job controller's name in `spec.managedBy`. */
export const JOB_CONTROLLER_NAME = 'kubernetes.io/job-controller';
/** kube's cap on creates and deletes per sync. */
const MAX_POD_CHANGES_PER_SYNC = 500;
const BY_DELETION = deletionOrder(() => 0);

/** What a sync does to the world; the controller implements it over the client. */
export interface JobActions {
  now(): Date;
  /** About to create `n` pods (the controller's expectations). */
  expectCreations(n: number): void;
  createPod(job: Job, pod: Pod): Promise<void>;
  deletePod(job: Job, pod: Pod): Promise<void>;
  removeTrackingFinalizer(pod: Pod): Promise<void>;
  /** PUT status; returns the stored Job. */
  updateStatus(job: Job): Promise<Job>;
  event(job: Job, type: 'Normal' | 'Warning', reason: string, message: string): void;
  requeueAfter(ms: number): void;
  readonly backoff: BackoffDurations;
}

/** Reconciles `job` with its (claimed) pods; returns the Job's new backoff record. */
export async function syncJob(
  job: Job,
  pods: readonly Pod[],
  prevBackoff: BackoffRecord,
  act: JobActions,
): Promise<BackoffRecord> {
  const managedBy = job.spec?.managedBy;
  if (managedBy !== undefined && managedBy !== JOB_CONTROLLER_NAME) return prevBackoff;
  if (isJobFinished(job)) {
    for (const p of pods) if (hasTrackingFinalizer(p)) await act.removeTrackingFinalizer(p);
    return prevBackoff;
  }
  return new JobSync(structuredClone(job), pods, prevBackoff, act).run();
}

class JobSync {
  readonly #status: JobStatus;
  readonly #now: Date;
  readonly #indexed: boolean;
  readonly #completions: number | undefined;
  readonly #uncountedSucceeded: Set<string>;
  readonly #uncountedFailed: Set<string>;
  #active: Pod[];
  #finished: PendingCondition | undefined;
  #succeededIndexes = new Set<number>();
  #failedIndexes: Set<number> | undefined;

  constructor(
    private readonly job: Job,
    private readonly pods: readonly Pod[],
    private readonly prevBackoff: BackoffRecord,
    private readonly act: JobActions,
  ) {
    this.#now = act.now();
    this.#status = job.status ?? {};
    job.status = this.#status;
    this.#status.uncountedTerminatedPods ??= {};
    this.#uncountedSucceeded = new Set(this.#status.uncountedTerminatedPods.succeeded ?? []);
    this.#uncountedFailed = new Set(this.#status.uncountedTerminatedPods.failed ?? []);
    this.#indexed = isIndexed(job);
    this.#completions = job.spec?.completions;
    this.#active = pods.filter(isPodActive);
  }

  async run(): Promise<BackoffRecord> {
    const { job } = this;
    const status = this.#status;
    const spec = job.spec ?? {};
    const suspended = spec.suspend === true;
    const tracked = this.pods.filter(hasTrackingFinalizer);
    const newSucceeded = tracked.filter(
      (p) => p.status?.phase === 'Succeeded' && !this.#uncountedSucceeded.has(p.metadata.uid ?? ''),
    );
    const newFailed = tracked.filter(
      (p) => isPodFailed(p, job) && !this.#uncountedFailed.has(p.metadata.uid ?? ''),
    );
    const countedNewFailed = newFailed.filter(
      (p) => matchPodFailurePolicy(spec.podFailurePolicy, p).countFailed,
    );
    const failed = (status.failed ?? 0) + countedNewFailed.length + this.#uncountedFailed.size;
    let succeeded = (status.succeeded ?? 0) + newSucceeded.length + this.#uncountedSucceeded.size;
    const terminating = this.pods.filter(isPodTerminating).length;
    if (status.startTime === undefined && !suspended) status.startTime = rfc3339(this.#now.getTime());
    const backoff = nextBackoffRecord(this.prevBackoff, newSucceeded, newFailed, this.#now);

    // An interim condition already written decides the end.
    const target = trueCondition(job, 'FailureTarget');
    const criteria = trueCondition(job, 'SuccessCriteriaMet');
    if (criteria !== undefined)
      this.#finished = pending('SuccessCriteriaMet', criteria.reason, criteria.message);
    else if (target !== undefined) this.#finished = pending('FailureTarget', target.reason, target.message);
    else this.#finished = this.#failJobMessage();
    if (this.#finished === undefined) {
      if (failed > (spec.backoffLimit ?? 6) || this.#pastBackoffLimitOnFailure()) {
        this.#finished = pending(
          'FailureTarget',
          JOB_REASONS.backoffLimitExceeded,
          'Job has reached the specified backoff limit',
        );
      } else if (this.#pastActiveDeadline()) {
        this.#finished = pending(
          'FailureTarget',
          JOB_REASONS.deadlineExceeded,
          'Job was active longer than specified deadline',
        );
      } else if (spec.activeDeadlineSeconds !== undefined && !suspended && status.startTime !== undefined) {
        const left = Date.parse(status.startTime) + spec.activeDeadlineSeconds * 1000 - this.#now.getTime();
        this.act.requeueAfter(Math.max(left, 0));
      }
    }
    const completions = this.#completions ?? 0;
    if (this.#indexed) {
      this.#succeededIndexes = parseIndexes(status.completedIndexes, completions);
      for (const p of tracked) {
        const ix = completionIndex(p);
        if (p.status?.phase === 'Succeeded' && ix !== undefined && ix < completions)
          this.#succeededIndexes.add(ix);
      }
      succeeded = this.#succeededIndexes.size;
      if (spec.backoffLimitPerIndex !== undefined) {
        this.#failedIndexes = this.#computeFailedIndexes();
        const nFailed = this.#failedIndexes.size;
        if (this.#finished === undefined) {
          if (spec.maxFailedIndexes !== undefined && nFailed > spec.maxFailedIndexes)
            this.#finished = pending(
              'FailureTarget',
              JOB_REASONS.maxFailedIndexesExceeded,
              'Job has exceeded the specified maximal number of failed indexes',
            );
          else if (nFailed > 0 && nFailed + this.#succeededIndexes.size >= completions)
            this.#finished = pending('FailureTarget', JOB_REASONS.failedIndexes, 'Job has failed indexes');
        }
      }
      if (this.#finished === undefined) {
        const msg = matchSuccessPolicy(spec.successPolicy, completions, this.#succeededIndexes);
        if (msg !== undefined) this.#finished = pending('SuccessCriteriaMet', JOB_REASONS.successPolicy, msg);
      }
    }

    let suspendChanged = false;
    if (this.#finished !== undefined) {
      await this.#deletePods(this.#active, true);
    } else {
      if (job.metadata.deletionTimestamp === undefined) await this.#manage(succeeded, terminating, backoff);
      const complete =
        this.#completions === undefined
          ? succeeded > 0 && this.#active.length === 0
          : succeeded >= completions && this.#active.length === 0;
      if (complete) {
        this.#finished = pending(
          'SuccessCriteriaMet',
          JOB_REASONS.completionsReached,
          'Reached expected number of succeeded pods',
        );
      } else {
        suspendChanged = this.#suspendCondition(suspended);
      }
    }
    // Ready among the pods still active: those deleted above no longer count (kube's
    // `ready -= deletedReady`).
    const ready = this.#active.filter(isPodReady).length;
    const changed =
      suspendChanged ||
      // `active` is omitempty (absent when 0); `ready` and `terminating` are pointers.
      (status.active ?? 0) !== this.#active.length ||
      status.ready !== ready ||
      status.terminating !== terminating;
    status.active = this.#active.length;
    status.ready = ready;
    status.terminating = terminating;
    await this.#track(changed, terminating);
    return backoff;
  }

  /** A failed pod matching a FailJob rule: the FailureTarget with kube's message. */
  #failJobMessage(): PendingCondition | undefined {
    const policy = this.job.spec?.podFailurePolicy;
    if (policy === undefined) return undefined;
    for (const p of this.pods) {
      if (!isPodFailed(p, this.job)) continue;
      const m = matchPodFailurePolicy(policy, p);
      if (m.action === 'FailJob' && m.message !== undefined)
        return pending('FailureTarget', JOB_REASONS.podFailurePolicy, m.message);
    }
    return undefined;
  }

  /** restartPolicy OnFailure: container restarts of active pods reach backoffLimit. */
  #pastBackoffLimitOnFailure(): boolean {
    if (this.job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
    let restarts = 0;
    for (const p of this.#active)
      for (const cs of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])])
        restarts += cs.restartCount ?? 0;
    const limit = this.job.spec.backoffLimit ?? 6;
    return limit === 0 ? restarts > 0 : restarts >= limit;
  }

  #pastActiveDeadline(): boolean {
    const deadline = this.job.spec?.activeDeadlineSeconds;
    const start = this.#status.startTime;
    if (deadline === undefined || start === undefined || this.job.spec?.suspend === true) return false;
    return this.#now.getTime() - Date.parse(start) >= deadline * 1000;
  }

  /** Failed indexes so far, plus indexes whose pod failed past backoffLimitPerIndex or by FailIndex. */
  #computeFailedIndexes(): Set<number> {
    const completions = this.#completions ?? 0;
    const out = parseIndexes(this.#status.failedIndexes, completions);
    const limit = this.job.spec?.backoffLimitPerIndex ?? 0;
    for (const p of this.pods) {
      const ix = completionIndex(p);
      if (ix === undefined || ix >= completions || !hasTrackingFinalizer(p) || !isPodFailed(p, this.job))
        continue;
      if (this.#succeededIndexes.has(ix)) continue;
      const m = matchPodFailurePolicy(this.job.spec?.podFailurePolicy, p);
      if (m.action === 'FailIndex') out.add(ix);
      else if (m.countFailed && Number(p.metadata.annotations?.[JOB_INDEX_FAILURE_COUNT] ?? 0) + 1 > limit)
        out.add(ix);
    }
    return out;
  }

  #suspendCondition(suspended: boolean): boolean {
    const c = suspended
      ? pending('Suspended', 'JobSuspended', 'Job suspended', 'True')
      : pending('Suspended', 'JobResumed', 'Job resumed', 'False');
    const r = ensureCondition(this.#status.conditions ?? [], c, this.#now);
    if (!r.changed) return false;
    this.#status.conditions = r.conditions;
    this.act.event(
      this.job,
      'Normal',
      suspended ? 'Suspended' : 'Resumed',
      suspended ? 'Job suspended' : 'Job resumed',
    );
    // A resumed Job's activeDeadlineSeconds counts from the resume.
    if (!suspended) this.#status.startTime = rfc3339(this.#now.getTime());
    return true;
  }

  /** kube's manageJob: delete surplus, create what is missing. */
  async #manage(succeeded: number, terminating: number, backoff: BackoffRecord): Promise<void> {
    const spec = this.job.spec ?? {};
    const parallelism = spec.parallelism ?? 1;
    if (spec.suspend === true) {
      await this.#deletePods(this.#active);
      return;
    }
    let want: number;
    if (this.#completions === undefined) want = succeeded > 0 ? this.#active.length : parallelism;
    else want = Math.max(0, Math.min(this.#completions - succeeded, parallelism));
    const surplus = this.#surplusPods(want);
    if (surplus.length > 0) {
      await this.#deletePods(surplus.slice(0, MAX_POD_CHANGES_PER_SYNC));
      return;
    }
    const waiting = onlyReplaceFailedPods(this.job) ? terminating : 0;
    let diff = Math.min(want - waiting - this.#active.length, MAX_POD_CHANGES_PER_SYNC);
    if (diff <= 0) return;
    if (spec.backoffLimitPerIndex === undefined) {
      const wait = remainingBackoff(
        backoff.failuresAfterLastSuccess,
        backoff.lastFailureTime,
        this.#now,
        this.act.backoff,
      );
      if (wait > 0) {
        this.act.requeueAfter(wait);
        return;
      }
    }
    let indexes: (number | undefined)[] = [];
    if (this.#indexed) {
      indexes = this.#pendingIndexes(diff);
      diff = indexes.length;
    } else {
      indexes = Array.from({ length: diff }, () => undefined);
    }
    this.act.expectCreations(indexes.length);
    try {
      for (const ix of indexes) {
        const pod = podForJob(this.job, ix, ix === undefined ? undefined : this.#indexCounts(ix));
        await this.act.createPod(this.job, pod);
        this.#active.push(pod);
      }
    } catch (err) {
      // What was not created will not be observed.
      this.act.expectCreations(0);
      throw err;
    }
  }

  /** Active pods to delete: Indexed duplicates and out-of-range indexes first, then by kube's order. */
  #surplusPods(want: number): Pod[] {
    const out: Pod[] = [];
    let rest = [...this.#active];
    if (this.#indexed) {
      const seen = new Set<number>();
      const keep: Pod[] = [];
      for (const p of [...rest].sort((a, b) => -BY_DELETION(a, b))) {
        const ix = completionIndex(p);
        if (
          ix === undefined ||
          ix >= (this.#completions ?? 0) ||
          seen.has(ix) ||
          this.#succeededIndexes.has(ix)
        )
          out.push(p);
        else {
          seen.add(ix);
          keep.push(p);
        }
      }
      rest = keep;
    }
    const more = rest.length - want;
    if (more > 0) out.push(...rest.sort(BY_DELETION).slice(0, more));
    return out;
  }

  /** The lowest indexes with no active pod, not succeeded and not failed, at most `n`. */
  #pendingIndexes(n: number): number[] {
    const busy = new Set<number>();
    for (const p of this.#active) {
      const ix = completionIndex(p);
      if (ix !== undefined) busy.add(ix);
    }
    if (onlyReplaceFailedPods(this.job))
      for (const p of this.pods.filter(isPodTerminating)) {
        const ix = completionIndex(p);
        if (ix !== undefined) busy.add(ix);
      }
    const out: number[] = [];
    for (let i = 0; i < (this.#completions ?? 0) && out.length < n; i++)
      if (!busy.has(i) && !this.#succeededIndexes.has(i) && !(this.#failedIndexes?.has(i) ?? false))
        out.push(i);
    return out;
  }

  /** Failure counts carried to an index's next pod (backoffLimitPerIndex). */
  #indexCounts(ix: number): { failures: number; ignored: number } {
    let failures = 0;
    let ignored = 0;
    for (const p of this.pods) {
      if (completionIndex(p) !== ix) continue;
      let f = Number(p.metadata.annotations?.[JOB_INDEX_FAILURE_COUNT] ?? 0);
      let g = Number(p.metadata.annotations?.[JOB_INDEX_IGNORED_FAILURE_COUNT] ?? 0);
      if (isPodFailed(p, this.job)) {
        if (matchPodFailurePolicy(this.job.spec?.podFailurePolicy, p).countFailed) f++;
        else g++;
      }
      failures = Math.max(failures, f);
      ignored = Math.max(ignored, g);
    }
    return { failures, ignored };
  }

  /**
   * Deletes pods. Surplus and suspended pods lose the tracking finalizer first (they do not
   * count); the active pods of a finishing Job keep it, so they are counted as failed.
   */
  async #deletePods(pods: readonly Pod[], count = false): Promise<void> {
    const gone = new Set<Pod>();
    for (const p of pods) {
      if (!count && hasTrackingFinalizer(p)) await this.act.removeTrackingFinalizer(p);
      await this.act.deletePod(this.job, p);
      gone.add(p);
    }
    this.#active = this.#active.filter((p) => !gone.has(p));
  }

  /**
   * kube's trackJobStatusAndRemoveFinalizers: record newly finished pods as uncounted, write,
   * drop their finalizers, move them into the counts, then write the final condition when
   * nothing is uncounted or terminating.
   */
  async #track(changed: boolean, terminating: number): Promise<void> {
    let job = this.job;
    const status = this.#status;
    const uncounted = status.uncountedTerminatedPods ?? {};
    const succeededUids = [...(uncounted.succeeded ?? [])];
    const failedUids = [...(uncounted.failed ?? [])];
    const failing = this.#finished !== undefined && this.#finished.type !== 'SuccessCriteriaMet';
    const release: Pod[] = [];
    let flush = changed;
    const completions = this.#completions ?? 0;
    for (const p of this.pods) {
      if (!hasTrackingFinalizer(p)) continue;
      const uid = p.metadata.uid ?? '';
      const failedNow = isPodFailed(p, job);
      if (!this.#canRelease(p, failedNow)) continue;
      release.push(p);
      if (p.status?.phase === 'Succeeded' && !this.#uncountedFailed.has(uid)) {
        if (this.#indexed) continue; // completedIndexes counts it
        if (!this.#uncountedSucceeded.has(uid)) {
          succeededUids.push(uid);
          flush = true;
        }
      } else if (failedNow || failing) {
        const ix = completionIndex(p);
        if (this.#uncountedFailed.has(uid) || (this.#indexed && (ix === undefined || ix >= completions)))
          continue;
        if (matchPodFailurePolicy(job.spec?.podFailurePolicy, p).countFailed) {
          failedUids.push(uid);
          flush = true;
        }
      }
    }
    status.uncountedTerminatedPods = {
      ...(succeededUids.length > 0 ? { succeeded: succeededUids } : {}),
      ...(failedUids.length > 0 ? { failed: failedUids } : {}),
    };
    if (this.#indexed) {
      const completed = formatIndexes(this.#succeededIndexes);
      if ((status.completedIndexes ?? '') !== completed) flush = true;
      status.completedIndexes = completed;
      status.succeeded = this.#succeededIndexes.size;
      if (this.#failedIndexes !== undefined) {
        const f = formatIndexes(this.#failedIndexes);
        if (status.failedIndexes !== f) flush = true;
        status.failedIndexes = f;
      }
    }
    let final: PendingCondition | undefined;
    if (this.#finished?.type === 'FailureTarget') {
      const r = ensureCondition(status.conditions ?? [], this.#finished, this.#now);
      status.conditions = r.conditions;
      flush ||= r.changed;
      final = pending('Failed', this.#finished.reason, this.#finished.message);
    } else if (this.#finished?.type === 'SuccessCriteriaMet') {
      const r = ensureCondition(status.conditions ?? [], this.#finished, this.#now);
      status.conditions = r.conditions;
      flush ||= r.changed;
      final = pending('Complete', this.#finished.reason, this.#finished.message);
    }
    if (flush) job = await this.act.updateStatus(job);
    // Finalizers off; what lost its finalizer moves from uncounted into the counts.
    const released = new Set<string>();
    for (const p of release) {
      await this.act.removeTrackingFinalizer(p);
      released.add(p.metadata.uid ?? '');
    }
    const st = job.status ?? {};
    const left = { succeeded: [] as string[], failed: [] as string[] };
    for (const uid of st.uncountedTerminatedPods?.succeeded ?? []) {
      if (released.has(uid) || !this.pods.some((p) => p.metadata.uid === uid && hasTrackingFinalizer(p)))
        st.succeeded = (st.succeeded ?? 0) + 1;
      else left.succeeded.push(uid);
    }
    for (const uid of st.uncountedTerminatedPods?.failed ?? []) {
      if (released.has(uid) || !this.pods.some((p) => p.metadata.uid === uid && hasTrackingFinalizer(p)))
        st.failed = (st.failed ?? 0) + 1;
      else left.failed.push(uid);
    }
    const moved =
      left.succeeded.length !== (st.uncountedTerminatedPods?.succeeded ?? []).length ||
      left.failed.length !== (st.uncountedTerminatedPods?.failed ?? []).length;
    st.uncountedTerminatedPods = {
      ...(left.succeeded.length > 0 ? { succeeded: left.succeeded } : {}),
      ...(left.failed.length > 0 ? { failed: left.failed } : {}),
    };
    st.failed ??= 0;
    st.succeeded ??= 0;
    job.status = st;
    const done =
      final !== undefined && left.succeeded.length === 0 && left.failed.length === 0 && terminating === 0;
    if (done && final !== undefined) {
      const r = ensureCondition(st.conditions ?? [], final, this.#now);
      st.conditions = r.conditions;
      if (final.type === 'Complete') st.completionTime = rfc3339(this.#now.getTime());
    }
    if (moved || done) job = await this.act.updateStatus(job);
    if (done && final !== undefined) {
      if (final.type === 'Complete') this.act.event(job, 'Normal', 'Completed', 'Job completed');
      else this.act.event(job, 'Warning', final.reason, final.message);
    }
  }

  /** kube's canRemoveFinalizer, with per-index failures kept until the index has moved on. */
  #canRelease(p: Pod, failedNow: boolean): boolean {
    if (this.job.metadata.deletionTimestamp !== undefined || this.#finished !== undefined) return true;
    if (p.status?.phase === 'Succeeded') return true;
    if (!failedNow) return false;
    if (this.job.spec?.backoffLimitPerIndex === undefined) return true;
    const ix = completionIndex(p);
    if (ix === undefined || (this.#failedIndexes?.has(ix) ?? false)) return true;
    // Keep the failed pod (and its failure count) until its replacement exists.
    return this.#active.some((a) => completionIndex(a) === ix);
  }
}

function pending(
  type: string,
  reason: string | undefined,
  message: string | undefined,
  status: 'True' | 'False' = 'True',
): PendingCondition {
  return { type, status, reason: reason ?? '', message: message ?? '' };
}

export { NO_BACKOFF };
