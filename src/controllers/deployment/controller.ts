/**
 * The Deployment controller, as kube's `pkg/controller/deployment`: each sync claims the
 * ReplicaSets the selector matches, then either only writes status (being deleted), scales
 * (paused, or resized), or rolls out per strategy. Handlers enqueue the Deployment of a changed
 * ReplicaSet (by controller reference, or by selector for orphans) and, for Recreate, of a
 * deleted pod.
 */
import type { Deployment, ReplicaSet } from '../../api/types/apps-v1.js';
import type { Pod } from '../../api/types/core-v1.js';
import {
  DEPLOYMENTS,
  PODS,
  REPLICA_SETS,
  WorkQueue,
  defaultControllerRateLimiter,
  isNotFound,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { concurrency } from '../config.js';
import { claimByPatch, controllerRefOf } from '../shared/controller-ref.js';
import { isEmptySelector, labelMatcher } from '../shared/label-selector.js';
import { keyOf, splitKey, typed } from '../shared/meta.js';
import { rolloutRecreate } from './recreate.js';
import { rolloutRolling } from './rolling.js';
import { DeploymentSync, type DeploymentOps } from './rollout.js';
import { conditionOf, hasProgressDeadline, newCondition, REASONS, setCondition } from './status.js';
import { startWorkers } from '../shared/workers.js';
import { cloneJson } from '../../api/object.js';

const COMPONENT = 'deployment-controller';

/** The running controller. */
export class DeploymentController {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #deployments: SharedInformer<Deployment>;
  readonly #replicaSets: SharedInformer<ReplicaSet>;
  readonly #pods: SharedInformer<Pod>;
  readonly #dClient: ResourceClient<Deployment>;
  readonly #rsClient: ResourceClient<ReplicaSet>;
  readonly #recorder: EventSink;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#deployments = ctx.informers.informer<Deployment>(DEPLOYMENTS);
    this.#replicaSets = ctx.informers.informer<ReplicaSet>(REPLICA_SETS);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#dClient = ctx.client.resource<Deployment>(DEPLOYMENTS);
    this.#rsClient = ctx.client.resource<ReplicaSet>(REPLICA_SETS);
    this.#recorder = ctx.eventRecorder(COMPONENT);
    const enqueue = (d: Deployment): void => this.#queue.add(keyOf(d.metadata));
    this.#deployments.addHandler({ add: enqueue, update: (_o, cur) => enqueue(cur), delete: enqueue });
    this.#replicaSets.addHandler({
      add: (rs) => this.#rsChanged(rs),
      update: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        if (controllerRefOf(old.metadata)?.uid !== controllerRefOf(cur.metadata)?.uid) this.#rsChanged(old);
        this.#rsChanged(cur);
      },
      delete: (rs) => {
        const d = this.#ownerOf(rs);
        if (d !== undefined) enqueue(d);
      },
    });
    this.#pods.addHandler({
      delete: (pod) => {
        // Recreate waits for old pods to be gone.
        const rsRef = controllerRefOf(pod.metadata);
        if (rsRef?.kind !== 'ReplicaSet') return;
        const rs = this.#replicaSets.store.get(`${pod.metadata.namespace ?? ''}/${rsRef.name ?? ''}`);
        const d = rs === undefined ? undefined : this.#ownerOf(rs);
        if (d?.spec?.strategy?.type === 'Recreate') enqueue(d);
      },
    });
  }

  /** Starts the workers once the caches are synced. */
  start(): void {
    startWorkers(this.#ctx, 'deployment', {
      queue: this.#queue,
      workers: concurrency(this.#ctx.config, 'deployment', 5),
      sync: (key) => this.sync(key),
    });
  }

  #ownerOf(rs: ReplicaSet): Deployment | undefined {
    const ref = controllerRefOf(rs.metadata);
    if (ref?.kind !== 'Deployment') return undefined;
    const d = this.#deployments.store.get(`${rs.metadata.namespace ?? ''}/${ref.name ?? ''}`);
    return d?.metadata.uid === ref.uid ? d : undefined;
  }

  #rsChanged(rs: ReplicaSet): void {
    if (controllerRefOf(rs.metadata) !== undefined) {
      const d = this.#ownerOf(rs);
      if (d !== undefined) this.#queue.add(keyOf(d.metadata));
      return;
    }
    for (const d of this.#deployments.store.byIndex('namespace', rs.metadata.namespace ?? '')) {
      try {
        if (labelMatcher(d.spec?.selector)(rs.metadata.labels)) this.#queue.add(keyOf(d.metadata));
      } catch {
        // A Deployment whose selector cannot be read claims nothing.
      }
    }
  }

  /** The pods of `namespace` controlled by one of `rsList`, by ReplicaSet UID. */
  #podsByReplicaSet(namespace: string, rsList: readonly ReplicaSet[]): Map<string, Pod[]> {
    const uids = new Set(rsList.map((rs) => rs.metadata.uid));
    const podsByRS = new Map<string, Pod[]>();
    for (const p of this.#pods.store.byIndex('namespace', namespace)) {
      const uid = controllerRefOf(p.metadata)?.uid;
      if (uid === undefined || !uids.has(uid)) continue;
      const list = podsByRS.get(uid);
      if (list === undefined) podsByRS.set(uid, [p]);
      else list.push(p);
    }
    return podsByRS;
  }

  /** Reconciles one Deployment. */
  async sync(key: string): Promise<void> {
    const cached = this.#deployments.store.get(key);
    if (cached === undefined) return;
    const { namespace } = splitKey(key);
    const d = typed(cloneJson(cached), 'apps/v1', 'Deployment');
    if (isEmptySelector(d.spec?.selector)) {
      this.#recorder.event(
        d,
        'Warning',
        'SelectingAll',
        'Sync',
        'This deployment is selecting all pods. A non-empty selector is required.',
      );
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        d.status = { ...d.status, observedGeneration: d.metadata.generation ?? 0 };
        await this.#dClient.updateStatus(d, { namespace });
      }
      return;
    }
    const matches = labelMatcher(d.spec?.selector);
    const rsList = await claimByPatch(
      d,
      this.#replicaSets.store.byIndex('namespace', namespace),
      (rs) => matches(rs.metadata.labels),
      { objects: this.#rsClient, owners: this.#dClient },
    );
    // Only Recreate reads the pods (to wait for the old ones). kube's syncDeployment groups them
    // on every sync; skipping that walk over every pod of the namespace changes nothing else, and
    // it ran on each ReplicaSet status change (hundreds while 10,000 pods are made or deleted).
    const podsByRS =
      d.spec?.strategy?.type === 'Recreate'
        ? this.#podsByReplicaSet(namespace, rsList)
        : new Map<string, Pod[]>();
    const sync = new DeploymentSync(d, rsList, podsByRS, this.#ops(key));

    if (d.metadata.deletionTimestamp !== undefined) {
      const { newRS, oldRSs } = await sync.allReplicaSets(false);
      await sync.syncStatus([...oldRSs, newRS], newRS);
      return;
    }
    await this.#checkPausedConditions(sync);
    if (sync.d.spec?.paused === true) {
      await this.#scaleOnly(sync);
      return;
    }
    if (await sync.isScalingEvent()) {
      await this.#scaleOnly(sync);
      return;
    }
    if (sync.d.spec?.strategy?.type === 'Recreate') await rolloutRecreate(sync);
    else await rolloutRolling(sync);
  }

  /** kube's `sync`: scale, clean up when paused, write status. */
  async #scaleOnly(sync: DeploymentSync): Promise<void> {
    const { newRS, oldRSs } = await sync.allReplicaSets(false);
    await sync.scale(newRS, oldRSs);
    const latest = (rs: ReplicaSet | undefined): ReplicaSet | undefined =>
      rs === undefined ? undefined : (sync.rsList.find((x) => x.metadata.uid === rs.metadata.uid) ?? rs);
    const olds = oldRSs.map((rs) => latest(rs) ?? rs);
    if (sync.d.spec?.paused === true) await sync.cleanup(olds);
    await sync.syncStatus([...olds, latest(newRS)], latest(newRS));
  }

  /** Progressing Unknown with DeploymentPaused / DeploymentResumed as `spec.paused` flips. */
  async #checkPausedConditions(sync: DeploymentSync): Promise<void> {
    const d = sync.d;
    if (!hasProgressDeadline(d)) return;
    const cond = conditionOf(d.status, 'Progressing');
    const pausedShown = cond?.reason === REASONS.paused;
    const now = Date.now();
    d.status ??= {};
    if (d.spec?.paused === true && !pausedShown) {
      setCondition(
        d.status,
        newCondition('Progressing', 'Unknown', REASONS.paused, 'Deployment is paused', now),
      );
    } else if (d.spec?.paused !== true && pausedShown) {
      setCondition(
        d.status,
        newCondition('Progressing', 'Unknown', REASONS.resumed, 'Deployment is resumed', now),
      );
    } else {
      return;
    }
    await sync.writeDeployment();
  }

  #ops(key: string): DeploymentOps {
    return {
      now: () => Date.now(),
      createRS: (rs) => this.#rsClient.create(rs, { namespace: rs.metadata.namespace ?? '' }),
      getRS: (namespace, name) => this.#rsClient.get(name, { namespace }),
      updateRS: (rs) => this.#rsClient.update(rs, { namespace: rs.metadata.namespace ?? '' }),
      deleteRS: async (namespace, name) => {
        try {
          await this.#rsClient.delete(name, { namespace });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      },
      updateStatus: (d) => this.#dClient.updateStatus(d, { namespace: d.metadata.namespace ?? '' }),
      event: (d, type, reason, note) =>
        this.#recorder.event(typed(d, 'apps/v1', 'Deployment'), type, reason, reason, note),
      requeueAfter: (ms) => this.#queue.addAfter(key, ms),
      requeueRateLimited: () => this.#queue.addRateLimited(key),
    };
  }
}
