/**
 * The disruption controller (kube's `pkg/controller/disruption`): keeps each
 * PodDisruptionBudget's status (`budget.ts`) current as its pods come, go and change readiness.
 * A budget that cannot be computed (a bad selector, a pod whose controller is missing) gets
 * `DisruptionAllowed=False` with reason `SyncFailed` and is retried with backoff. Entries of
 * `status.disruptedPods` (written by the eviction API) expire after two minutes.
 */
import type { Pod, ReplicationController } from '../../api/types/core-v1.js';
import type { Deployment, ReplicaSet, StatefulSet } from '../../api/types/apps-v1.js';
import type { PodDisruptionBudget } from '../../api/types/policy-v1.js';
import {
  DEPLOYMENTS,
  PODS,
  POD_DISRUPTION_BUDGETS,
  REPLICATION_CONTROLLERS,
  REPLICA_SETS,
  STATEFUL_SETS,
  WorkQueue,
  defaultControllerRateLimiter,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { keyOf, rfc3339, typed } from '../shared/meta.js';
import { labelMatcher } from '../shared/label-selector.js';
import { sameJson } from '../endpointslice/plan.js';
import {
  DELETION_TIMEOUT_MS,
  countHealthy,
  disruptedPods,
  expectedAndDesired,
  failedStatus,
  healthyStatus,
} from './budget.js';
import { expectedScale, type ScaleSources } from './scale.js';
import { startWorkers } from '../shared/workers.js';

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One running disruption controller. */
export class DisruptionController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #budgets: SharedInformer<PodDisruptionBudget>;
  readonly #pods: SharedInformer<Pod>;
  readonly #sources: ScaleSources;
  readonly #client: ResourceClient<PodDisruptionBudget>;
  readonly #recorder: EventSink;
  readonly #now: () => number;

  constructor(ctx: ControllerContext, now: () => number = Date.now) {
    this.#ctx = ctx;
    this.#now = now;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#budgets = ctx.informers.informer<PodDisruptionBudget>(POD_DISRUPTION_BUDGETS);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#sources = {
      replicationControllers: ctx.informers.informer<ReplicationController>(REPLICATION_CONTROLLERS).store,
      replicaSets: ctx.informers.informer<ReplicaSet>(REPLICA_SETS).store,
      deployments: ctx.informers.informer<Deployment>(DEPLOYMENTS).store,
      statefulSets: ctx.informers.informer<StatefulSet>(STATEFUL_SETS).store,
    };
    this.#client = ctx.client.resource<PodDisruptionBudget>(POD_DISRUPTION_BUDGETS);
    this.#recorder = ctx.eventRecorder('controllermanager');
    const enqueue = (b: PodDisruptionBudget): void => this.#queue.add(keyOf(b.metadata));
    this.#budgets.addHandler({ add: enqueue, update: (_o, b) => enqueue(b), delete: enqueue });
    const podChanged = (pod: Pod, old?: Pod): void => {
      for (const b of this.#budgets.store.byIndex('namespace', pod.metadata.namespace ?? '')) {
        try {
          const m = labelMatcher(b.spec?.selector);
          if (m(pod.metadata.labels) || (old !== undefined && m(old.metadata.labels))) enqueue(b);
        } catch {
          enqueue(b); // its sync reports the bad selector
        }
      }
    };
    this.#pods.addHandler({
      add: (p) => podChanged(p),
      update: (old, cur) => {
        if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) podChanged(cur, old);
      },
      delete: (p) => podChanged(p),
    });
  }

  /** Starts the workers once the caches are synced; they stop when the context's signal aborts. */
  start(): void {
    startWorkers(this.#ctx, 'disruption', { queue: this.#queue, workers: 1, sync: (key) => this.sync(key) });
  }

  /** Recomputes one budget's status (`namespace/name`). */
  async sync(key: string): Promise<void> {
    const pdb = this.#budgets.store.get(key);
    if (pdb === undefined) return;
    const nowMs = this.#now();
    const now = rfc3339(nowMs);
    let status;
    let failure: Error | undefined;
    try {
      const matcher = labelMatcher(pdb.spec?.selector);
      const pods = this.#pods.store
        .byIndex('namespace', pdb.metadata.namespace ?? '')
        .filter((p) => matcher(p.metadata.labels));
      const ref = typed(pdb, 'policy/v1', 'PodDisruptionBudget');
      if (pods.length === 0)
        this.#recorder.event(ref, 'Normal', 'NoPods', 'NoPods', 'No matching pods found');
      let unmanaged: string[] = [];
      const { expected, desired } = expectedAndDesired(pdb, pods, () => {
        const scale = expectedScale(this.#sources, pods);
        unmanaged = scale.unmanaged;
        return scale.expected;
      });
      if (unmanaged.length > 0) {
        this.#recorder.event(
          ref,
          'Warning',
          'UnmanagedPods',
          'UnmanagedPods',
          `Pods selected by this PodDisruptionBudget (selector: ${JSON.stringify(pdb.spec?.selector ?? {})}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set ".spec.minAvailable" field of the PDB to an integer value.`,
        );
      }
      const disrupted = disruptedPods(pdb, pods, nowMs);
      const current = countHealthy(pods, disrupted);
      status = healthyStatus(pdb, { expected, desired, current, disrupted }, now);
      const times = Object.values(disrupted).map((t) => Date.parse(t) + DELETION_TIMEOUT_MS);
      if (times.length > 0) this.#queue.addAfter(key, Math.max(0, Math.min(...times) - nowMs) + 1000);
    } catch (err) {
      failure = err instanceof Error ? err : new Error(JSON.stringify(err));
      status = failedStatus(pdb, describe(err), now);
    }
    if (!sameJson(status, pdb.status ?? {})) {
      await this.#client.updateStatus({ ...pdb, status });
    }
    if (failure !== undefined) throw failure;
  }
}
