/**
 * The local-path provisioner (as k3s ships Rancher's): an external provisioner for single-node
 * and small clusters. Its default StorageClass `local-path` binds on first consumer, so the
 * scheduler picks the node first (`volume.kubernetes.io/selected-node`); the binder then asks
 * this provisioner (`volume.kubernetes.io/storage-provisioner`), which creates a hostPath
 * volume pinned to that node and pre-bound to the claim, and the binder completes the bind.
 *
 * The directory is made by the node agent when the pod mounts it (`DirectoryOrCreate`): nothing
 * on the node has to run before the pod. A released volume with the Delete policy is removed by a
 * helper pod on its node (`rm -rf` of the volume's own entry, mounted through its parent), as
 * k3s does; the volume object is deleted once that pod has succeeded. A volume whose node is gone
 * is deleted at once: its directory went with the node.
 */
import type { Node, PersistentVolume, PersistentVolumeClaim, Pod } from '../../api/types/core-v1.js';
import type { StorageClass } from '../../api/types/storage-v1.js';
import {
  NODES,
  PERSISTENT_VOLUMES,
  PERSISTENT_VOLUME_CLAIMS,
  PODS,
  STORAGE_CLASSES,
  WorkQueue,
  defaultControllerRateLimiter,
  isAlreadyExists,
  isNotFound,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import {
  ANN_DYNAMICALLY_PROVISIONED,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  REASON,
} from '../persistentvolume/annotations.js';
import { claimClass } from '../persistentvolume/match.js';
import { keyOf, typed } from '../shared/meta.js';
import { startWorkers } from '../shared/workers.js';
import { ensureDefaultClass } from './storage-class.js';
import {
  HELPER_NAMESPACE,
  PROVISIONER,
  deleteHelperPod,
  helperPodName,
  hostnameOf,
  ownedEntry,
  provisionedVolume,
  volumeHostname,
  volumeName,
} from './volume.js';

const HELPER_PREFIX = 'helper-pod-delete-';

/** One running provisioner. */
export class LocalPathProvisioner {
  readonly #ctx: ControllerContext;
  readonly #claims = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: 'claims' });
  readonly #volumes = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: 'volumes' });
  readonly #pvcs: SharedInformer<PersistentVolumeClaim>;
  readonly #pvs: SharedInformer<PersistentVolume>;
  readonly #classes: SharedInformer<StorageClass>;
  readonly #nodes: SharedInformer<Node>;
  readonly #pods: SharedInformer<Pod>;
  readonly #pvClient: ResourceClient<PersistentVolume>;
  readonly #podClient: ResourceClient<Pod>;
  readonly #recorder: EventSink;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#pvcs = ctx.informers.informer<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
    this.#pvs = ctx.informers.informer<PersistentVolume>(PERSISTENT_VOLUMES);
    this.#classes = ctx.informers.informer<StorageClass>(STORAGE_CLASSES);
    this.#nodes = ctx.informers.informer<Node>(NODES);
    this.#pods = ctx.informers.informer<Pod>(PODS);
    this.#pvClient = ctx.client.resource<PersistentVolume>(PERSISTENT_VOLUMES);
    this.#podClient = ctx.client.resource<Pod>(PODS);
    this.#recorder = ctx.eventRecorder(PROVISIONER);
    const claim = (pvc: PersistentVolumeClaim): void => {
      if (pvc.metadata.annotations?.[ANN_STORAGE_PROVISIONER] === PROVISIONER)
        this.#claims.add(keyOf(pvc.metadata));
    };
    this.#pvcs.addHandler({ add: claim, update: (_, c) => claim(c) });
    const volume = (pv: PersistentVolume): void => {
      if (pv.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED] === PROVISIONER)
        this.#volumes.add(pv.metadata.name ?? '');
    };
    this.#pvs.addHandler({ add: volume, update: (_, v) => volume(v) });
    const helper = (pod: Pod): void => {
      const name = pod.metadata.name ?? '';
      if (pod.metadata.namespace === HELPER_NAMESPACE && name.startsWith(HELPER_PREFIX))
        this.#volumes.add(name.slice(HELPER_PREFIX.length));
    };
    this.#pods.addHandler({ add: helper, update: (_, p) => helper(p) });
  }

  /** Starts the workers and makes the default class. */
  start(): void {
    startWorkers(
      this.#ctx,
      'local-path-provisioner',
      { queue: this.#claims, workers: 1, sync: (k) => this.syncClaim(k) },
      { queue: this.#volumes, workers: 1, sync: (k) => this.syncVolume(k) },
    );
    ensureDefaultClass(this.#ctx, this.#classes);
  }

  /** Provisions a volume for the claim when it is asked of us and has its node. */
  async syncClaim(key: string): Promise<void> {
    const pvc = this.#pvcs.store.get(key);
    if (pvc === undefined || (pvc.spec?.volumeName ?? '') !== '') return;
    if (pvc.metadata.deletionTimestamp !== undefined && pvc.metadata.deletionTimestamp !== null) return;
    if (pvc.metadata.annotations?.[ANN_STORAGE_PROVISIONER] !== PROVISIONER) return;
    const cls = this.#classes.store.get(claimClass(pvc));
    if (cls?.provisioner !== PROVISIONER) return;
    if (this.#pvs.store.get(volumeName(pvc)) !== undefined) return;
    const failed = (note: string): void => this.#event(pvc, 'Warning', REASON.ProvisioningFailed, note);
    if (pvc.spec?.selector !== undefined) {
      failed('claim Selector is not supported');
      return;
    }
    let nodeName = pvc.metadata.annotations[ANN_SELECTED_NODE] ?? '';
    if (nodeName === '') {
      // An Immediate class on a single-node cluster has only one place to go.
      const nodes = this.#nodes.store.list();
      if (cls.volumeBindingMode === 'WaitForFirstConsumer') return;
      if (nodes.length !== 1) {
        failed('configuration error, no node was specified');
        return;
      }
      nodeName = nodes[0]?.metadata.name ?? '';
    }
    const ref = `${pvc.metadata.namespace ?? ''}/${pvc.metadata.name ?? ''}`;
    this.#event(
      pvc,
      'Normal',
      'Provisioning',
      `External provisioner is provisioning volume for claim "${ref}"`,
    );
    const pv = provisionedVolume(pvc, cls, hostnameOf(this.#nodes.store.get(nodeName), nodeName));
    try {
      await this.#pvClient.create(pv);
    } catch (err) {
      if (isAlreadyExists(err)) return;
      failed(`failed to provision volume with StorageClass "${cls.metadata.name ?? ''}": ${String(err)}`);
      throw err;
    }
    this.#event(
      pvc,
      'Normal',
      REASON.ProvisioningSucceeded,
      `Successfully provisioned volume ${pv.metadata.name ?? ''}`,
    );
  }

  /** Removes a released volume of ours with the Delete policy: its directory, then the object. */
  async syncVolume(name: string): Promise<void> {
    const pv = this.#pvs.store.get(name);
    if (pv?.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED] !== PROVISIONER) return;
    if (pv.status?.phase !== 'Released' || pv.spec?.persistentVolumeReclaimPolicy !== 'Delete') return;
    if (pv.metadata.deletionTimestamp !== undefined && pv.metadata.deletionTimestamp !== null) return;
    const owned = ownedEntry(pv);
    if (owned === undefined) {
      this.#event(
        pv,
        'Warning',
        REASON.VolumeFailedDelete,
        `volume path ${pv.spec.hostPath?.path ?? '(none)'} was not made by ${PROVISIONER}; not removing it`,
      );
      return;
    }
    const hostname = volumeHostname(pv) ?? '';
    const node = this.#nodes.store.list().find((n) => hostnameOf(n, n.metadata.name ?? '') === hostname);
    if (node !== undefined) {
      const done = await this.#cleanDirectory(pv, owned, node.metadata.name ?? '');
      if (!done) return;
    }
    try {
      await this.#pvClient.delete(name, { preconditions: { uid: pv.metadata.uid ?? '' } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    await this.#deleteHelper(pv);
  }

  /** Drives the helper pod; true once it has removed the directory. */
  async #cleanDirectory(
    pv: PersistentVolume,
    owned: { parent: string; entry: string },
    nodeName: string,
  ): Promise<boolean> {
    const pod = this.#pods.store.get(`${HELPER_NAMESPACE}/${helperPodName(pv)}`);
    if (pod === undefined) {
      try {
        await this.#podClient.create(deleteHelperPod(pv, owned, nodeName));
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return false;
    }
    if (pod.status?.phase === 'Succeeded') return true;
    if (pod.status?.phase === 'Failed') {
      await this.#deleteHelper(pv);
      const note = `failed to delete volume ${pv.metadata.name ?? ''}: the helper pod ${helperPodName(pv)} failed`;
      this.#event(pv, 'Warning', REASON.VolumeFailedDelete, note);
      throw new Error(note);
    }
    return false;
  }

  async #deleteHelper(pv: PersistentVolume): Promise<void> {
    try {
      await this.#podClient.delete(helperPodName(pv), { namespace: HELPER_NAMESPACE });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  #event(
    obj: PersistentVolume | PersistentVolumeClaim,
    type: 'Normal' | 'Warning',
    reason: string,
    note: string,
  ): void {
    const kind = obj.metadata.namespace === undefined ? 'PersistentVolume' : 'PersistentVolumeClaim';
    this.#recorder.event(typed(obj, 'v1', kind), type, reason, reason, note);
  }
}
