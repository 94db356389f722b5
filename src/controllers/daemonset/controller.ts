/**
 * The DaemonSet controller's loop (kube's `pkg/controller/daemon`): DaemonSet, Pod, Node and
 * ControllerRevision informers, a work queue of DaemonSet keys, pod claiming, revision history,
 * the pod plan (`sync.ts`) carried out with expectations, the status, and history truncation.
 * Pods are created unscheduled with node affinity to their node (the scheduler binds them), as
 * kube has done since 1.12.
 */
import type { ControllerRevision, DaemonSet, DaemonSetStatus } from '../../api/types/apps-v1.js';
import type { Node, Pod } from '../../api/types/core-v1.js';
import {
  CONTROLLER_REVISIONS,
  DAEMON_SETS,
  NODES,
  PODS,
  defaultControllerRateLimiter,
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
  POD_REVISION_LABEL,
  revisionHash,
  type RevisionStore,
} from '../history/revisions.js';
import { slowStartBatch } from '../shared/batch.js';
import { namespaceTerminating } from '../shared/namespaces.js';
import { claimPods, controllerRefOf, newControllerRef } from '../shared/controller-ref.js';
import { Expectations } from '../shared/expectations.js';
import { isEmptySelector, labelMatcher } from '../shared/label-selector.js';
import { keyOf, splitKey, typed } from '../shared/meta.js';
import { msUntilAvailable } from '../workload/pod.js';
import { daemonRevision, podForNode } from './pods.js';
import { daemonStatus, planDaemonPods } from './sync.js';
import { startWorkers } from '../shared/workers.js';
import { sameStoredStatus } from '../shared/stored-status.js';

/** DaemonSetStatus fields Go omits when zero (apps/v1). */
const DAEMONSET_OMIT_EMPTY = [
  'observedGeneration',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
] as const;

const BY_OWNER = 'daemonset-owner-uid';

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One running daemonset controller. */
export class DaemonSetController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #sets: SharedInformer<DaemonSet>;
  readonly #pods: SharedInformer<Pod>;
  readonly #nodes: SharedInformer<Node>;
  readonly #revisions: SharedInformer<ControllerRevision>;
  readonly #setClient: ResourceClient<DaemonSet>;
  readonly #podClient: ResourceClient<Pod>;
  readonly #revClient: ResourceClient<ControllerRevision>;
  readonly #recorder: EventSink;
  readonly #expectations: Expectations;
  readonly #now: () => Date;

  constructor(ctx: ControllerContext, opts: { now?: () => Date } = {}) {
    this.#ctx = ctx;
    this.#now = opts.now ?? (() => new Date());
    this.#expectations = new Expectations(() => this.#now().getTime());
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#sets = ctx.informers.informer<DaemonSet>(DAEMON_SETS);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#nodes = ctx.informers.informer<Node>(NODES);
    this.#revisions = ctx.informers.informer<ControllerRevision>(CONTROLLER_REVISIONS);
    this.#revisions.store.addIndex(BY_OWNER, (r) => {
      const ref = controllerRefOf(r.metadata);
      return ref?.kind === 'DaemonSet' && ref.uid !== undefined ? [ref.uid] : [];
    });
    this.#setClient = ctx.client.resource<DaemonSet>(DAEMON_SETS);
    this.#podClient = ctx.client.resource<Pod>(PODS);
    this.#revClient = ctx.client.resource<ControllerRevision>(CONTROLLER_REVISIONS);
    this.#recorder = ctx.eventRecorder('daemonset-controller');
    this.#sets.addHandler({
      add: (s) => this.#queue.add(keyOf(s.metadata)),
      update: (_, s) => this.#queue.add(keyOf(s.metadata)),
      delete: (s) => {
        this.#expectations.delete(keyOf(s.metadata));
        this.#queue.add(keyOf(s.metadata));
      },
    });
    const podEvent = (p: Pod, kind: 'add' | 'update' | 'delete'): void => {
      const ref = controllerRefOf(p.metadata);
      if (ref !== undefined) {
        if (ref.kind !== 'DaemonSet') return;
        const key = `${p.metadata.namespace ?? ''}/${ref.name ?? ''}`;
        if (kind === 'add') this.#expectations.creationObserved(key);
        if (kind === 'delete') this.#expectations.deletionObserved(key, keyOf(p.metadata));
        this.#queue.add(key);
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
      add: (p) => podEvent(p, 'add'),
      update: (old, p) => {
        if (old.metadata.resourceVersion !== p.metadata.resourceVersion) podEvent(p, 'update');
      },
      delete: (p) => podEvent(p, 'delete'),
    });
    const all = (): void => {
      for (const s of this.#sets.store.list()) this.#queue.add(keyOf(s.metadata));
    };
    this.#nodes.addHandler({
      add: all,
      update: (old, n) => old.metadata.resourceVersion !== n.metadata.resourceVersion && all(),
      delete: all,
    });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'daemonset', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'daemonset', 2),
      sync: (k) => this.sync(k),
    });
  }

  /** Reconciles one DaemonSet key. */
  async sync(key: string): Promise<void> {
    const cached = this.#sets.store.get(key);
    if (cached === undefined) {
      this.#expectations.delete(key);
      return;
    }
    const ds = typed(cached, 'apps/v1', 'DaemonSet');
    if (isEmptySelector(ds.spec?.selector)) {
      this.#event(
        ds,
        'Warning',
        'SelectingAll',
        'This daemon set is selecting all pods. A non-empty selector is required.',
      );
      return;
    }
    let matches;
    try {
      matches = labelMatcher(ds.spec?.selector);
    } catch (err) {
      this.#ctx.log.error(`${key}: cannot use its selector`, err);
      return;
    }
    const { namespace } = splitKey(key);
    const ref = newControllerRef(ds);
    const pods = await claimPods(
      ds,
      this.#pods.store.byIndex('namespace', namespace),
      (p) => matches(p.metadata.labels),
      {
        objects: this.#podClient,
        owners: this.#setClient,
      },
    );
    if (ds.metadata.deletionTimestamp !== undefined) return;
    const { update, collisionCount } = await ensureUpdateRevision(
      key,
      (n, c) => daemonRevision(ds, ref, n, c),
      this.#revisions.store.byIndex(BY_OWNER, ds.metadata.uid ?? ''),
      ds.status?.collisionCount ?? 0,
      this.#revisionStore(),
    );
    const hash = update.metadata.labels?.[POD_REVISION_LABEL] ?? revisionHash(update);
    const nodes = this.#nodes.store.list();
    const nowMs = this.#now().getTime();
    let failure: unknown;
    if (this.#expectations.satisfied(key)) {
      try {
        await this.#carryOut(ds, ref, key, planDaemonPods(ds, nodes, pods, hash, nowMs), hash);
      } catch (err) {
        failure = err;
      }
    }
    const counts = daemonStatus(ds, nodes, pods, hash, nowMs);
    const status: DaemonSetStatus = {
      ...counts,
      observedGeneration: ds.metadata.generation ?? 0,
      collisionCount,
    };
    if (ds.status?.conditions !== undefined) status.conditions = ds.status.conditions;
    if (!sameStoredStatus(status, ds.status, DAEMONSET_OMIT_EMPTY))
      await this.#setClient.updateStatus({ ...ds, status }, { namespace });
    await this.#truncateHistory(ds, pods, update.metadata.name ?? '');
    const minReady = ds.spec?.minReadySeconds ?? 0;
    const waits = pods
      .map((p) => msUntilAvailable(p, minReady, nowMs))
      .filter((w): w is number => w !== undefined);
    if (waits.length > 0) this.#queue.addAfter(key, Math.min(...waits) + 100);
    if (failure !== undefined) throw failure instanceof Error ? failure : new Error(describe(failure));
  }

  async #carryOut(
    ds: DaemonSet & { apiVersion: string; kind: string },
    ref: ReturnType<typeof newControllerRef>,
    key: string,
    plan: ReturnType<typeof planDaemonPods>,
    hash: string,
  ): Promise<void> {
    const namespace = ds.metadata.namespace ?? '';
    for (const { pod, node } of plan.failed) {
      const succeeded = pod.status?.phase === 'Succeeded';
      this.#event(
        ds,
        'Warning',
        succeeded ? 'SucceededDaemonPod' : 'FailedDaemonPod',
        `Found ${succeeded ? 'succeeded' : 'failed'} daemon pod ${namespace}/${pod.metadata.name ?? ''} on node ${node}, will try to ${succeeded ? 'delete' : 'kill'} it`,
      );
    }
    this.#expectations.expectCreations(key, plan.createOn.length);
    const queue = [...plan.createOn];
    const outcome = await slowStartBatch(queue.length, 1, async () => {
      const node = queue.shift() ?? '';
      try {
        const created = await this.#podClient.create(podForNode(ds, ref, node, hash), { namespace });
        this.#event(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${created.metadata.name ?? ''}`);
      } catch (err) {
        // kube: a namespace being torn down refuses every create; nothing to report or retry.
        if (namespaceTerminating(err)) return;
        this.#event(ds, 'Warning', 'FailedCreate', `Error creating: ${describe(err)}`);
        throw err;
      }
    });
    for (let i = outcome.successes; i < plan.createOn.length; i++) this.#expectations.creationObserved(key);
    this.#expectations.expectDeletions(
      key,
      plan.delete.map((p) => keyOf(p.metadata)),
    );
    for (const p of plan.delete) {
      const podName = p.metadata.name ?? '';
      try {
        await this.#podClient.delete(podName, { namespace });
        this.#event(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${podName}`);
      } catch (err) {
        this.#expectations.deletionObserved(key, keyOf(p.metadata));
        if (isNotFound(err)) continue;
        this.#event(ds, 'Warning', 'FailedDelete', `Error deleting: ${describe(err)}`);
        throw err;
      }
    }
    if (outcome.error !== undefined)
      throw outcome.error instanceof Error ? outcome.error : new Error(describe(outcome.error));
  }

  async #truncateHistory(ds: DaemonSet, pods: readonly Pod[], current: string): Promise<void> {
    const liveHashes = new Set(
      pods.map((p) => p.metadata.labels?.[POD_REVISION_LABEL]).filter((h) => h !== undefined),
    );
    const old = this.#revisions.store
      .byIndex(BY_OWNER, ds.metadata.uid ?? '')
      .filter((r) => r.metadata.name !== current && !liveHashes.has(revisionHash(r)))
      .sort(byRevision);
    const limit = ds.spec?.revisionHistoryLimit ?? 10;
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

  #event(
    ds: DaemonSet & { apiVersion: string; kind: string },
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): void {
    this.#recorder.event(ds, type, reason, 'Sync', message);
  }
}
