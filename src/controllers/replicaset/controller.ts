/**
 * The ReplicaSet controller (and, through {@link ReplicaKind}, the ReplicationController one), as
 * kube's `pkg/controller/replicaset`: keeps `spec.replicas` active pods matching the selector,
 * adopting orphans and releasing pods that stopped matching, creating in slow-start batches of
 * at most 500 per sync, deleting the least valuable pods first, and reporting status.
 * Expectations keep a stale cache from creating or deleting twice.
 *
 * Handlers only enqueue `namespace/name`; a sync reads the current state from the informers.
 */
import type { Pod } from '../../api/types/core-v1.js';
import {
  PODS,
  WorkQueue,
  defaultControllerRateLimiter,
  isNotFound,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { concurrency } from '../config.js';
import { namespaceTerminating } from '../shared/namespaces.js';
import { claimPods, controllerRefOf, newControllerRef } from '../shared/controller-ref.js';
import { Expectations } from '../shared/expectations.js';
import { deletionOrder, isPodActive, isPodReady } from '../shared/pods.js';
import { keyOf, splitKey, typed } from '../shared/meta.js';
import { slowStartBatch } from '../shared/batch.js';
import { podFromTemplate } from '../shared/pod-template.js';
import type { ReplicaKind, ReplicatedObject } from './kind.js';
import { calculateStatus, sameStatus, type ManageFailure } from './status.js';
import { startWorkers } from '../shared/workers.js';

/** Most pods created or deleted in one sync (kube's `BurstReplicas`). */
export const BURST_REPLICAS = 500;

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One running controller of one replicated kind. */
export class ReplicaSetController<T extends ReplicatedObject> {
  readonly #kind: ReplicaKind<T>;
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #expectations = new Expectations();
  readonly #owners: SharedInformer<T>;
  readonly #podInformer: SharedInformer<Pod>;
  readonly #pods: ResourceClient<Pod>;
  readonly #objects: ResourceClient<T>;
  readonly #recorder: EventSink;

  constructor(kind: ReplicaKind<T>, ctx: ControllerContext) {
    this.#kind = kind;
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#owners = ctx.informers.informer<T>(kind.ref);
    this.#podInformer = ctx.informers.informer<Pod>(PODS);
    this.#pods = ctx.client.resource<Pod>(PODS);
    this.#objects = ctx.client.resource<T>(kind.ref);
    this.#recorder = ctx.eventRecorder(kind.component);
    this.#owners.addHandler({
      add: (o) => this.#queue.add(keyOf(o.metadata)),
      update: (old, cur) => {
        if (old.metadata.uid !== cur.metadata.uid) this.#ownerDeleted(old);
        this.#queue.add(keyOf(cur.metadata));
      },
      delete: (o) => this.#ownerDeleted(o),
    });
    this.#podInformer.addHandler({
      add: (p) => this.#podAdded(p),
      update: (old, cur) => this.#podUpdated(old, cur),
      delete: (p) => this.#podDeleted(p),
    });
  }

  /** Starts the workers once the caches are synced; they stop when the context's signal aborts. */
  start(): void {
    startWorkers(this.#ctx, this.#ctx.name, {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, this.#kind.concurrencyKey, 5),
      sync: (key) => this.sync(key),
    });
  }

  #ownerDeleted(o: T): void {
    const key = keyOf(o.metadata);
    this.#expectations.delete(key);
    this.#queue.add(key);
  }

  /** The owner named by the pod's controller reference, if it is one of ours and exists. */
  #ownerOf(pod: Pod): T | undefined {
    const ref = controllerRefOf(pod.metadata);
    if (ref?.kind !== this.#kind.kind) return undefined;
    const owner = this.#owners.store.get(`${pod.metadata.namespace ?? ''}/${ref.name ?? ''}`);
    return owner?.metadata.uid === ref.uid ? owner : undefined;
  }

  /** Owners whose selector matches an orphan pod. */
  #ownersSelecting(pod: Pod): T[] {
    return this.#owners.store.byIndex('namespace', pod.metadata.namespace ?? '').filter((o) => {
      try {
        return this.#kind.selector(o)(pod.metadata.labels);
      } catch {
        return false;
      }
    });
  }

  #podAdded(pod: Pod): void {
    if (pod.metadata.deletionTimestamp !== undefined) {
      // A restarted controller may see a pod already being deleted: that is a deletion.
      this.#podDeleted(pod);
      return;
    }
    if (controllerRefOf(pod.metadata) !== undefined) {
      const owner = this.#ownerOf(pod);
      if (owner === undefined) return;
      const key = keyOf(owner.metadata);
      this.#expectations.creationObserved(key);
      this.#queue.add(key);
      return;
    }
    for (const o of this.#ownersSelecting(pod)) this.#queue.add(keyOf(o.metadata));
  }

  #podUpdated(old: Pod, cur: Pod): void {
    if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
    const labelsChanged =
      JSON.stringify(old.metadata.labels ?? {}) !== JSON.stringify(cur.metadata.labels ?? {});
    if (cur.metadata.deletionTimestamp !== undefined) {
      this.#podDeleted(cur);
      if (labelsChanged) this.#podDeleted(old);
      return;
    }
    const oldRef = controllerRefOf(old.metadata);
    const curRef = controllerRefOf(cur.metadata);
    const refChanged = oldRef?.uid !== curRef?.uid;
    if (refChanged && oldRef !== undefined) {
      const previous = this.#ownerOf(old);
      if (previous !== undefined) this.#queue.add(keyOf(previous.metadata));
    }
    if (curRef !== undefined) {
      const owner = this.#ownerOf(cur);
      if (owner === undefined) return;
      const key = keyOf(owner.metadata);
      this.#queue.add(key);
      // Re-check availability once minReadySeconds have passed after the pod turned ready.
      const minReady = owner.spec?.minReadySeconds ?? 0;
      if (!isPodReady(old) && isPodReady(cur) && minReady > 0)
        this.#queue.addAfter(key, minReady * 1000 + 1000);
      return;
    }
    if (labelsChanged || refChanged)
      for (const o of this.#ownersSelecting(cur)) this.#queue.add(keyOf(o.metadata));
  }

  #podDeleted(pod: Pod): void {
    const owner = this.#ownerOf(pod);
    if (owner === undefined) return;
    const key = keyOf(owner.metadata);
    this.#expectations.deletionObserved(key, keyOf(pod.metadata));
    this.#queue.add(key);
  }

  /** Reconciles one owner (level-triggered: reads everything from the caches). */
  async sync(key: string): Promise<void> {
    const obj = this.#owners.store.get(key);
    if (obj === undefined) {
      this.#expectations.delete(key);
      return;
    }
    const needsSync = this.#expectations.satisfied(key);
    let matches;
    try {
      matches = this.#kind.selector(obj);
    } catch (err) {
      // kube logs and drops the key: retrying cannot fix the object; an update re-enqueues it.
      this.#ctx.log.error(`${key}: cannot use its selector`, err);
      return;
    }
    const { namespace } = splitKey(key);
    const owner = typed(obj, this.#kind.apiVersion, this.#kind.kind);
    const active = this.#podInformer.store.byIndex('namespace', namespace).filter(isPodActive);
    const pods = await claimPods(owner, active, (p) => matches(p.metadata.labels), {
      objects: this.#pods,
      owners: this.#objects,
    });
    let failure: ManageFailure | undefined;
    if (needsSync && obj.metadata.deletionTimestamp === undefined)
      failure = await this.#manage(owner, key, pods);
    const status = calculateStatus(obj, pods, failure, Date.now());
    const written = await this.#writeStatus(obj, status);
    const replicas = obj.spec?.replicas ?? 1;
    const minReady = obj.spec?.minReadySeconds ?? 0;
    if (
      failure === undefined &&
      minReady > 0 &&
      (written.readyReplicas ?? 0) === replicas &&
      (written.availableReplicas ?? 0) !== replicas
    ) {
      this.#queue.addAfter(key, minReady * 1000);
    }
    if (failure !== undefined) throw new Error(`${key}: ${failure.message}`);
  }

  /** Creates or deletes pods toward `spec.replicas`; the failure, if any. */
  async #manage(
    owner: T & { apiVersion: string; kind: string },
    key: string,
    pods: readonly Pod[],
  ): Promise<ManageFailure | undefined> {
    const namespace = owner.metadata.namespace ?? '';
    const diff = pods.length - (owner.spec?.replicas ?? 1);
    if (diff < 0) {
      const n = Math.min(-diff, BURST_REPLICAS);
      this.#expectations.expectCreations(key, n);
      const ref = newControllerRef(owner);
      const outcome = await slowStartBatch(n, 1, async () => {
        const pod = podFromTemplate(owner.spec?.template, namespace, owner.metadata.name ?? '', ref);
        if (Object.keys(pod.metadata.labels ?? {}).length === 0) {
          throw new Error('unable to create pods, no labels');
        }
        try {
          const created = await this.#pods.create(pod, { namespace });
          this.#recorder.event(
            owner,
            'Normal',
            'SuccessfulCreate',
            'Create',
            `Created pod: ${created.metadata.name ?? ''}`,
          );
        } catch (err) {
          if (namespaceTerminating(err)) return;
          this.#recorder.event(
            owner,
            'Warning',
            'FailedCreate',
            'Create',
            `Error creating: ${describe(err)}`,
          );
          throw err;
        }
      });
      // Creations never attempted (or failed) will not be observed.
      for (let i = outcome.successes; i < n; i++) this.#expectations.creationObserved(key);
      return outcome.error === undefined
        ? undefined
        : { reason: 'FailedCreate', message: describe(outcome.error) };
    }
    if (diff > 0) {
      const n = Math.min(diff, BURST_REPLICAS);
      const perNode = new Map<string, number>();
      for (const p of pods) {
        const node = p.spec?.nodeName ?? '';
        if (node !== '') perNode.set(node, (perNode.get(node) ?? 0) + 1);
      }
      const victims = [...pods]
        .sort(deletionOrder((p) => perNode.get(p.spec?.nodeName ?? '') ?? 0))
        .slice(0, n);
      this.#expectations.expectDeletions(
        key,
        victims.map((p) => keyOf(p.metadata)),
      );
      const results = await Promise.allSettled(
        victims.map(async (p) => {
          const podName = p.metadata.name ?? '';
          try {
            await this.#pods.delete(podName, { namespace });
            this.#recorder.event(owner, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted pod: ${podName}`);
          } catch (err) {
            this.#expectations.deletionObserved(key, keyOf(p.metadata));
            if (isNotFound(err)) return;
            this.#recorder.event(
              owner,
              'Warning',
              'FailedDelete',
              'Delete',
              `Error deleting: ${describe(err)}`,
            );
            throw err;
          }
        }),
      );
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      return failed === undefined ? undefined : { reason: 'FailedDelete', message: describe(failed.reason) };
    }
    return undefined;
  }

  /** Writes `status` unless the object already shows it (one retry after a conflict, as kube). */
  async #writeStatus(obj: T, status: NonNullable<T['status']>): Promise<NonNullable<T['status']>> {
    const generation = obj.metadata.generation ?? 0;
    if (sameStatus(obj.status, status) && (obj.status?.observedGeneration ?? 0) === generation) return status;
    const next = { ...status, observedGeneration: generation };
    const { namespace, name } = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
    let current: T = obj;
    for (let attempt = 0; ; attempt++) {
      try {
        const written = await this.#objects.updateStatus({ ...current, status: next }, { namespace });
        return written.status ?? next;
      } catch (err) {
        if (attempt >= 1) throw err;
        current = await this.#objects.get(name, { namespace });
      }
    }
  }
}
