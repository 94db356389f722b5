/**
 * The StatefulSet controller's loop (kube's `pkg/controller/statefulset`): StatefulSet, Pod,
 * ControllerRevision and PersistentVolumeClaim informers, a work queue of set keys, pod
 * claiming, revision history (`history/revisions.ts`), the pod reconcile (`sync.ts`), the status
 * with kube's rolling-update completion, and history truncation to `revisionHistoryLimit`.
 */
import type { ControllerRevision, StatefulSet, StatefulSetStatus } from '../../api/types/apps-v1.js';
import type { PersistentVolumeClaim, Pod } from '../../api/types/core-v1.js';
import {
  CONTROLLER_REVISIONS,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  STATEFUL_SETS,
  defaultControllerRateLimiter,
  isAlreadyExists,
  isNotFound,
  WorkQueue,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import { concurrency } from '../config.js';
import type { ControllerContext, EventSink } from '../context.js';
import {
  byRevision,
  ensureUpdateRevision,
  newRevision,
  POD_REVISION_LABEL,
  revisionTemplate,
  type RevisionStore,
} from '../history/revisions.js';
import { claimPods, controllerRefOf, newControllerRef } from '../shared/controller-ref.js';
import { labelMatcher } from '../shared/label-selector.js';
import { keyOf, splitKey, typed } from '../shared/meta.js';
import { msUntilAvailable } from '../workload/pod.js';
import { claimsFor, ordinalOf, podOwnerRef, type TypedStatefulSet } from './identity.js';
import { syncStatefulSetPods, type StatefulSetActions } from './sync.js';
import { startWorkers } from '../shared/workers.js';
import { sameStoredStatus } from '../shared/stored-status.js';

/** StatefulSetStatus fields Go omits when zero (apps/v1). */
const STATEFULSET_OMIT_EMPTY = [
  'observedGeneration',
  'readyReplicas',
  'currentReplicas',
  'updatedReplicas',
  'currentRevision',
  'updateRevision',
] as const;

const BY_OWNER = 'statefulset-owner-uid';

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One running statefulset controller. */
export class StatefulSetController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #sets: SharedInformer<StatefulSet>;
  readonly #pods: SharedInformer<Pod>;
  readonly #revisions: SharedInformer<ControllerRevision>;
  readonly #claims: SharedInformer<PersistentVolumeClaim>;
  readonly #setClient: ResourceClient<StatefulSet>;
  readonly #podClient: ResourceClient<Pod>;
  readonly #revClient: ResourceClient<ControllerRevision>;
  readonly #claimClient: ResourceClient<PersistentVolumeClaim>;
  readonly #recorder: EventSink;
  readonly #now: () => Date;

  constructor(ctx: ControllerContext, opts: { now?: () => Date } = {}) {
    this.#ctx = ctx;
    this.#now = opts.now ?? (() => new Date());
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#sets = ctx.informers.informer<StatefulSet>(STATEFUL_SETS);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#revisions = ctx.informers.informer<ControllerRevision>(CONTROLLER_REVISIONS);
    this.#claims = ctx.informers.informer<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
    this.#revisions.store.addIndex(BY_OWNER, (r) => {
      const ref = controllerRefOf(r.metadata);
      return ref?.kind === 'StatefulSet' && ref.uid !== undefined ? [ref.uid] : [];
    });
    this.#setClient = ctx.client.resource<StatefulSet>(STATEFUL_SETS);
    this.#podClient = ctx.client.resource<Pod>(PODS);
    this.#revClient = ctx.client.resource<ControllerRevision>(CONTROLLER_REVISIONS);
    this.#claimClient = ctx.client.resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
    this.#recorder = ctx.eventRecorder('statefulset-controller');
    this.#sets.addHandler({
      add: (s) => this.#queue.add(keyOf(s.metadata)),
      update: (_, s) => this.#queue.add(keyOf(s.metadata)),
      delete: (s) => this.#queue.add(keyOf(s.metadata)),
    });
    const podChanged = (p: Pod): void => {
      const ref = controllerRefOf(p.metadata);
      if (ref !== undefined) {
        if (ref.kind === 'StatefulSet') this.#queue.add(`${p.metadata.namespace ?? ''}/${ref.name ?? ''}`);
        return;
      }
      for (const s of this.#sets.store.byIndex('namespace', p.metadata.namespace ?? '')) {
        try {
          if (labelMatcher(s.spec?.selector)(p.metadata.labels)) this.#queue.add(keyOf(s.metadata));
        } catch {
          // An unusable selector adopts nothing.
        }
      }
    };
    this.#pods.addHandler({
      add: podChanged,
      update: (old, p) => {
        if (old.metadata.resourceVersion === p.metadata.resourceVersion) return;
        podChanged(p);
        if (JSON.stringify(old.metadata.labels) !== JSON.stringify(p.metadata.labels)) podChanged(old);
      },
      delete: podChanged,
    });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'statefulset', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'statefulset', 5),
      sync: (k) => this.sync(k),
    });
  }

  /** Reconciles one StatefulSet key. */
  async sync(key: string): Promise<void> {
    const cached = this.#sets.store.get(key);
    if (cached === undefined) return;
    const set = typed(cached, 'apps/v1', 'StatefulSet');
    let matches;
    try {
      matches = labelMatcher(set.spec?.selector);
    } catch (err) {
      this.#ctx.log.error(`${key}: cannot use its selector`, err);
      return;
    }
    const { namespace } = splitKey(key);
    const ref = newControllerRef(set);
    const pods = await claimPods(
      set,
      this.#pods.store.byIndex('namespace', namespace).filter((p) => ordinalOf(set, p) !== undefined),
      (p) => matches(p.metadata.labels),
      { objects: this.#podClient, owners: this.#setClient },
    );
    if (set.metadata.deletionTimestamp !== undefined) return;
    const revisions = this.#revisions.store.byIndex(BY_OWNER, set.metadata.uid ?? '');
    const { update, collisionCount } = await ensureUpdateRevision(
      key,
      (n, c) => newRevision(set, ref, set.spec?.template, n, c),
      revisions,
      set.status?.collisionCount ?? 0,
      this.#revisionStore(),
    );
    const updateName = update.metadata.name ?? '';
    const currentName = revisions.some((r) => r.metadata.name === set.status?.currentRevision)
      ? (set.status?.currentRevision ?? updateName)
      : updateName;
    // Pods made at the current revision get its template, not the set's (kube's ApplyRevision).
    const currentRev = revisions.find((r) => r.metadata.name === currentName);
    const currentTemplate =
      currentName !== updateName && currentRev !== undefined ? revisionTemplate(currentRev) : undefined;
    const counts = await syncStatefulSetPods(
      set,
      pods,
      { current: currentName, update: updateName, ...(currentTemplate ? { currentTemplate } : {}) },
      this.#actions(),
    );
    const status: StatefulSetStatus = {
      observedGeneration: set.metadata.generation ?? 0,
      replicas: counts.replicas ?? 0,
      readyReplicas: counts.readyReplicas ?? 0,
      currentReplicas: counts.currentReplicas ?? 0,
      updatedReplicas: counts.updatedReplicas ?? 0,
      availableReplicas: counts.availableReplicas ?? 0,
      currentRevision: currentName,
      updateRevision: updateName,
      collisionCount,
    };
    // kube's completeRollingUpdate: every replica updated and ready makes the update current.
    if (
      (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate' &&
      status.updatedReplicas === status.replicas &&
      status.readyReplicas === status.replicas
    ) {
      status.currentRevision = updateName;
      status.currentReplicas = status.updatedReplicas ?? 0;
    }
    if (set.status?.conditions !== undefined) status.conditions = set.status.conditions;
    if (!sameStoredStatus(status, set.status, STATEFULSET_OMIT_EMPTY))
      await this.#setClient.updateStatus({ ...set, status }, { namespace });
    await this.#truncateHistory(set, pods, [currentName, status.currentRevision ?? '', updateName]);
    const minReady = set.spec?.minReadySeconds ?? 0;
    const nowMs = this.#now().getTime();
    const waits = pods
      .map((p) => msUntilAvailable(p, minReady, nowMs))
      .filter((w): w is number => w !== undefined);
    if (waits.length > 0) this.#queue.addAfter(key, Math.min(...waits) + 100);
  }

  /** Deletes old revisions beyond `revisionHistoryLimit`, keeping live ones. */
  async #truncateHistory(set: StatefulSet, pods: readonly Pod[], live: readonly string[]): Promise<void> {
    const keep = new Set(live);
    for (const p of pods) {
      const r = p.metadata.labels?.[POD_REVISION_LABEL];
      if (r !== undefined) keep.add(r);
    }
    const old = this.#revisions.store
      .byIndex(BY_OWNER, set.metadata.uid ?? '')
      .filter((r) => !keep.has(r.metadata.name ?? ''))
      .sort(byRevision);
    const limit = set.spec?.revisionHistoryLimit ?? 10;
    for (const r of old.slice(0, Math.max(0, old.length - limit))) {
      try {
        await this.#revClient.delete(r.metadata.name ?? '', { namespace: r.metadata.namespace ?? '' });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }

  #revisionStore(): RevisionStore {
    return {
      create: (rev) => this.#revClient.create(rev, { namespace: rev.metadata.namespace ?? '' }),
      get: async (namespace, name) => {
        try {
          return await this.#revClient.get(name, { namespace });
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      renumber: (rev, revision) =>
        this.#revClient.patch(
          rev.metadata.name ?? '',
          { revision },
          { namespace: rev.metadata.namespace ?? '', type: 'merge' },
        ),
    };
  }

  #actions(): StatefulSetActions {
    return {
      now: this.#now,
      createPod: async (set, pod, claims) => {
        const setName = set.metadata.name ?? '';
        const podName = pod.metadata.name ?? '';
        const namespace = set.metadata.namespace ?? '';
        for (const c of claims) {
          const existing = this.#claims.store.get(`${namespace}/${c.metadata.name ?? ''}`);
          if (existing?.metadata.deletionTimestamp !== undefined)
            throw new Error(`pvc ${c.metadata.name ?? ''} is being deleted`);
          if (existing !== undefined) continue;
          try {
            await this.#claimClient.create(c, { namespace });
            this.#event(
              set,
              'Normal',
              'SuccessfulCreate',
              `create Claim ${c.metadata.name ?? ''} Pod ${podName} in StatefulSet ${setName} success`,
            );
          } catch (err) {
            if (isAlreadyExists(err)) continue;
            this.#event(
              set,
              'Warning',
              'FailedCreate',
              `create Claim ${c.metadata.name ?? ''} for Pod ${podName} in StatefulSet ${setName} failed error: ${describe(err)}`,
            );
            throw err;
          }
        }
        try {
          await this.#podClient.create(pod, { namespace });
          this.#event(
            set,
            'Normal',
            'SuccessfulCreate',
            `create Pod ${podName} in StatefulSet ${setName} successful`,
          );
        } catch (err) {
          if (isAlreadyExists(err)) return;
          this.#event(
            set,
            'Warning',
            'FailedCreate',
            `create Pod ${podName} in StatefulSet ${setName} failed error: ${describe(err)}`,
          );
          throw err;
        }
      },
      deletePod: async (set, pod) => {
        const podName = pod.metadata.name ?? '';
        try {
          await this.#podClient.delete(podName, {
            namespace: pod.metadata.namespace ?? '',
            preconditions: { uid: pod.metadata.uid ?? '' },
          });
          this.#event(
            set,
            'Normal',
            'SuccessfulDelete',
            `delete Pod ${podName} in StatefulSet ${set.metadata.name ?? ''} successful`,
          );
        } catch (err) {
          if (isNotFound(err)) return;
          this.#event(
            set,
            'Warning',
            'FailedDelete',
            `delete Pod ${podName} in StatefulSet ${set.metadata.name ?? ''} failed error: ${describe(err)}`,
          );
          throw err;
        }
      },
      updatePod: async (set, pod) => {
        await this.#podClient.update(pod, { namespace: pod.metadata.namespace ?? '' });
        this.#event(
          set,
          'Normal',
          'SuccessfulUpdate',
          `update Pod ${pod.metadata.name ?? ''} in StatefulSet ${set.metadata.name ?? ''} successful`,
        );
      },
      ownClaimsByPod: async (set, pod, ordinal) => {
        for (const c of claimsFor(set, ordinal)) {
          const namespace = set.metadata.namespace ?? '';
          const existing = this.#claims.store.get(`${namespace}/${c.metadata.name ?? ''}`);
          if (existing === undefined) continue;
          const refs = (existing.metadata.ownerReferences ?? []).filter((r) => r.uid !== pod.metadata.uid);
          await this.#claimClient.patch(
            c.metadata.name ?? '',
            { metadata: { ownerReferences: [...refs, podOwnerRef(pod)] } },
            { namespace, type: 'merge' },
          );
        }
      },
      event: (set, type, reason, message) => this.#event(set, type, reason, message),
    };
  }

  #event(set: TypedStatefulSet, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.#recorder.event(set, type, reason, 'Sync', message);
  }
}
