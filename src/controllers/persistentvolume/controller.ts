/**
 * The persistent volume binder (kube's `persistentvolume-binder-controller`): two queues, claims
 * (`namespace/name`) and volumes (`name`), fed by the informers and by a full resync every
 * `--pvclaimbinder-sync-period` (15 s), whose sync functions (`claim-sync.ts`,
 * `volume-sync.ts`) decide binding, phases and reclaiming. It works with the scheduler's
 * VolumeBinding plugin for WaitForFirstConsumer classes: the scheduler writes the chosen
 * volume's claimRef (or the claim's `selected-node`), this controller completes the bind (or asks
 * the provisioner).
 */
import type { PersistentVolume, PersistentVolumeClaim, Pod } from '../../api/types/core-v1.js';
import type { StorageClass } from '../../api/types/storage-v1.js';
import {
  PERSISTENT_VOLUMES,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  STORAGE_CLASSES,
  WorkQueue,
  defaultControllerRateLimiter,
  isConflict,
  isNotFound,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { keyOf, rfc3339, typed } from '../shared/meta.js';
import { startWorkers } from '../shared/workers.js';
import { podClaimKeys } from '../pods/claims.js';
import { syncClaim } from './claim-sync.js';
import type { BinderOps, ClaimPhase, VolumePhase } from './ops.js';
import { syncVolume } from './volume-sync.js';

/** Pods by the claims they mount (`namespace/claim`). */
const POD_CLAIM_INDEX = 'persistentvolume-binder/claims';

/** Options a test may set. */
export interface BinderOptions {
  readonly now?: () => number;
}

/** One running binder. */
export class PersistentVolumeBinder implements BinderOps {
  readonly #ctx: ControllerContext;
  readonly #claimQueue: WorkQueue<string>;
  readonly #volumeQueue: WorkQueue<string>;
  readonly #pvs: SharedInformer<PersistentVolume>;
  readonly #pvcs: SharedInformer<PersistentVolumeClaim>;
  readonly #classes: SharedInformer<StorageClass>;
  readonly #pods: SharedInformer<Pod>;
  readonly #pvClient: ResourceClient<PersistentVolume>;
  readonly #pvcClient: ResourceClient<PersistentVolumeClaim>;
  readonly #recorder: EventSink;
  readonly #now: () => number;
  readonly dynamicProvisioning: boolean;

  constructor(ctx: ControllerContext, opts: BinderOptions = {}) {
    this.#ctx = ctx;
    this.#now = opts.now ?? Date.now;
    this.dynamicProvisioning = ctx.config.flags.get('enable-dynamic-provisioning') !== false;
    this.#claimQueue = new WorkQueue({ rateLimiter: defaultControllerRateLimiter(), name: 'claims' });
    this.#volumeQueue = new WorkQueue({ rateLimiter: defaultControllerRateLimiter(), name: 'volumes' });
    this.#pvs = ctx.informers.informer<PersistentVolume>(PERSISTENT_VOLUMES);
    this.#pvcs = ctx.informers.informer<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
    this.#classes = ctx.informers.informer<StorageClass>(STORAGE_CLASSES);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#pods.store.addIndex(POD_CLAIM_INDEX, podClaimKeys);
    this.#pvClient = ctx.client.resource<PersistentVolume>(PERSISTENT_VOLUMES);
    this.#pvcClient = ctx.client.resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
    this.#recorder = ctx.eventRecorder('persistentvolume-controller');

    const volume = (pv: PersistentVolume): void => this.#volumeQueue.add(pv.metadata.name ?? '');
    const claim = (pvc: PersistentVolumeClaim): void => this.#claimQueue.add(keyOf(pvc.metadata));
    this.#pvs.addHandler({
      add: volume,
      update: (_, pv) => volume(pv),
      delete: (pv) => {
        const ref = pv.spec?.claimRef;
        if (ref !== undefined) this.enqueueClaim(ref.namespace ?? '', ref.name ?? '');
      },
    });
    this.#pvcs.addHandler({
      add: claim,
      update: (_, pvc) => claim(pvc),
      // The claim's volume is released.
      delete: (pvc) => {
        const name = pvc.spec?.volumeName ?? '';
        if (name !== '') this.#volumeQueue.add(name);
      },
    });
  }

  /** Starts the workers and the periodic resync. */
  start(): void {
    const { signal } = this.#ctx;
    startWorkers(
      this.#ctx,
      'persistentvolume-binder',
      { queue: this.#claimQueue, workers: 1, sync: (k) => this.#syncClaimKey(k) },
      { queue: this.#volumeQueue, workers: 1, sync: (k) => this.#syncVolumeKey(k) },
    );
    const period = Number(this.#ctx.config.flags.get('pvclaimbinder-sync-period') ?? 15_000);
    const timer = setInterval(() => {
      if (!this.#pvs.hasSynced() || !this.#pvcs.hasSynced()) return;
      for (const pvc of this.#pvcs.store.list()) this.#claimQueue.add(keyOf(pvc.metadata));
      for (const pv of this.#pvs.store.list()) this.#volumeQueue.add(pv.metadata.name ?? '');
    }, period);
    timer.unref();
    signal.addEventListener('abort', () => clearInterval(timer), { once: true });
  }

  async #syncClaimKey(key: string): Promise<void> {
    const pvc = this.#pvcs.store.get(key);
    if (pvc === undefined) return;
    await this.#retryOnConflict(this.#claimQueue, key, syncClaim(this, pvc));
  }

  async #syncVolumeKey(name: string): Promise<void> {
    const pv = this.#pvs.store.get(name);
    if (pv === undefined) return;
    await this.#retryOnConflict(this.#volumeQueue, name, syncVolume(this, pv));
  }

  /**
   * A conflict means the other queue wrote the same object first (both bind and phase writes
   * touch it): not a failure worth a log line, the key is simply synced again from the newer
   * cache, after the usual per-item backoff.
   */
  async #retryOnConflict(queue: WorkQueue<string>, key: string, sync: Promise<void>): Promise<void> {
    try {
      await sync;
    } catch (err) {
      if (!isConflict(err)) throw err;
      queue.addAfter(key, 100);
    }
  }

  volumes(): PersistentVolume[] {
    return this.#pvs.store.list();
  }

  volume(name: string): PersistentVolume | undefined {
    return this.#pvs.store.get(name);
  }

  async claim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined> {
    const cached = this.#pvcs.store.get(`${namespace}/${name}`);
    if (cached !== undefined) return cached;
    // Not cached: maybe only not yet seen. A volume must never be released on a stale cache.
    try {
      return await this.#pvcClient.get(name, { namespace });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  storageClass(name: string): StorageClass | undefined {
    return name === '' ? undefined : this.#classes.store.get(name);
  }

  podsUsing(pvc: PersistentVolumeClaim): Pod[] {
    return this.#pods.store.byIndex(POD_CLAIM_INDEX, keyOf(pvc.metadata));
  }

  updateVolume(pv: PersistentVolume): Promise<PersistentVolume> {
    return this.#pvClient.update(pv);
  }

  async setVolumePhase(
    pv: PersistentVolume,
    phase: VolumePhase,
    message?: string,
  ): Promise<PersistentVolume> {
    const status = pv.status ?? {};
    if (status.phase === phase && (message === undefined || status.message === message)) return pv;
    const next: PersistentVolume['status'] = { ...status, phase };
    if (message === undefined) delete next.message;
    else next.message = message;
    if (status.phase !== phase) next.lastPhaseTransitionTime = rfc3339(this.#now());
    return this.#pvClient.updateStatus({ ...pv, status: next });
  }

  updateClaim(pvc: PersistentVolumeClaim): Promise<PersistentVolumeClaim> {
    return this.#pvcClient.update(pvc);
  }

  async setClaimStatus(
    pvc: PersistentVolumeClaim,
    phase: ClaimPhase,
    volume?: PersistentVolume,
  ): Promise<PersistentVolumeClaim> {
    const status = pvc.status ?? {};
    const next: PersistentVolumeClaim['status'] = { ...status, phase };
    if (phase === 'Bound' && volume !== undefined) {
      next.accessModes = volume.spec?.accessModes ?? [];
      next.capacity = volume.spec?.capacity ?? {};
    } else if (phase === 'Lost') {
      // kube keeps what the claim had; a claim that never bound has nothing to keep.
    } else {
      delete next.accessModes;
      delete next.capacity;
    }
    if (JSON.stringify(next) === JSON.stringify(status)) return pvc;
    return this.#pvcClient.updateStatus({ ...pvc, status: next });
  }

  event(
    obj: PersistentVolume | PersistentVolumeClaim,
    type: 'Normal' | 'Warning',
    reason: string,
    note: string,
  ): void {
    const kind = obj.metadata.namespace === undefined ? 'PersistentVolume' : 'PersistentVolumeClaim';
    this.#recorder.event(typed(obj, 'v1', kind), type, reason, reason, note);
  }

  enqueueClaim(namespace: string, name: string): void {
    this.#claimQueue.add(`${namespace}/${name}`);
  }
}
