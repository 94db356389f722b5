/**
 * The `persistentvolume-expander-controller` (alias `persistentvolume-expander`), kube's
 * `pkg/controller/volume/expand` as far as it applies to a manager without in-tree volume
 * plugins. kube v1.33's only controller-side expander is Portworx's in-tree plugin (migrated to
 * CSI there too); every other volume is expanded by someone else (a CSI external-resizer, or the
 * kubelet), and the controller only says so:
 *
 * - a Bound claim is queued when added or deleted, or when its storage request or its status
 *   capacity grew;
 * - the sync reads the claim's volume from the server (a missing volume, or one whose `claimRef`
 *   is not this claim, is an error retried with backoff) and stops when the request does not
 *   exceed the status capacity and the volume carries no `volume.alpha.kubernetes.io/pre-resize-capacity`;
 * - a volume of an in-tree type kube migrates to CSI (`awsElasticBlockStore`, `gcePersistentDisk`,
 *   `azureDisk`, `azureFile`, `cinder`, `vsphereVolume`, `portworxVolume`) gets a Normal
 *   `ExternalExpanding` event "CSI migration enabled for <plugin>; waiting for external resizer
 *   to expand the pvc", and the claim the annotation `volume.kubernetes.io/storage-resizer` naming
 *   the CSI driver (through the status subresource, as kube patches it);
 * - any other volume gets a Normal `ExternalExpanding` event "waiting for an external controller
 *   to expand this PVC".
 *
 * Not done: kube's no-op expansion of FlexVolume volumes (their kubelet expands them); here they
 * get the second event like any other volume.
 */
import { compareQuantities, parseQuantity, type Quantity } from '../../api/quantity.js';
import type { PersistentVolume, PersistentVolumeClaim } from '../../api/types/core-v1.js';
import {
  PERSISTENT_VOLUMES,
  PERSISTENT_VOLUME_CLAIMS,
  defaultControllerRateLimiter,
  isNotFound,
  WorkQueue,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, ControllerDescriptor, EventSink } from '../context.js';
import { keyOf, splitKey, typed } from '../shared/meta.js';
import { startWorkers } from '../shared/workers.js';

/** kube's event reason. */
export const EXTERNAL_EXPANDING = 'ExternalExpanding';
/** The claim annotation naming the CSI driver that resizes it. */
export const RESIZER_ANNOTATION = 'volume.kubernetes.io/storage-resizer';
/** The volume annotation kept while an expansion is recovering. */
export const PRE_RESIZE_CAPACITY_ANNOTATION = 'volume.alpha.kubernetes.io/pre-resize-capacity';

/** In-tree volume sources kube v1.33 migrates to CSI: spec field → [in-tree plugin, CSI driver]. */
const MIGRATED: ReadonlyArray<readonly [string, string, string]> = [
  ['awsElasticBlockStore', 'kubernetes.io/aws-ebs', 'ebs.csi.aws.com'],
  ['gcePersistentDisk', 'kubernetes.io/gce-pd', 'pd.csi.storage.gke.io'],
  ['azureDisk', 'kubernetes.io/azure-disk', 'disk.csi.azure.com'],
  ['azureFile', 'kubernetes.io/azure-file', 'file.csi.azure.com'],
  ['cinder', 'kubernetes.io/cinder', 'cinder.csi.openstack.org'],
  ['vsphereVolume', 'kubernetes.io/vsphere-volume', 'csi.vsphere.vmware.com'],
  ['portworxVolume', 'kubernetes.io/portworx-volume', 'pxd.portworx.com'],
];

const ZERO = parseQuantity('0') as Quantity;

function storage(list: Readonly<Record<string, string>> | undefined): Quantity {
  return parseQuantity(list?.['storage']) ?? ZERO;
}

/** Whether an update from `old` to `cur` asks for a sync (the request or the capacity grew). */
export function grew(old: PersistentVolumeClaim, cur: PersistentVolumeClaim): boolean {
  return (
    compareQuantities(storage(cur.spec?.resources?.requests), storage(old.spec?.resources?.requests)) > 0 ||
    compareQuantities(storage(cur.status?.capacity), storage(old.status?.capacity)) > 0
  );
}

/** The in-tree plugin and CSI driver of a migrated volume type, if `pv` is one. */
export function migratedPlugin(pv: PersistentVolume): { plugin: string; driver: string } | undefined {
  const spec = (pv.spec ?? {}) as Readonly<Record<string, unknown>>;
  const hit = MIGRATED.find(([field]) => spec[field] !== undefined && spec[field] !== null);
  return hit === undefined ? undefined : { plugin: hit[1], driver: hit[2] };
}

/** One running expander. */
export class VolumeExpander {
  readonly #ctx: ControllerContext;
  readonly #queue: WorkQueue<string>;
  readonly #claims: SharedInformer<PersistentVolumeClaim>;
  readonly #events: EventSink;

  constructor(ctx: ControllerContext) {
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({
      rateLimiter: defaultControllerRateLimiter(),
      name: 'volume_expand',
    });
    this.#events = ctx.eventRecorder('volume_expand');
    this.#claims = ctx.informers.informer<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS);
    const enqueue = (pvc: PersistentVolumeClaim): void => {
      if (pvc.status?.phase === 'Bound') this.#queue.add(keyOf(pvc.metadata));
    };
    this.#claims.addHandler({
      add: enqueue,
      update: (old, cur) => {
        if (grew(old, cur)) enqueue(cur);
      },
      delete: enqueue,
    });
  }

  /** Starts the workers once the caches are synced (kube runs 10). */
  start(): void {
    startWorkers(this.#ctx, 'volume expander', {
      queue: this.#queue,
      workers: 10,
      sync: (k) => this.sync(k),
    });
  }

  #event(pvc: PersistentVolumeClaim, note: string): void {
    this.#events.event(
      typed(pvc, 'v1', 'PersistentVolumeClaim'),
      'Normal',
      EXTERNAL_EXPANDING,
      EXTERNAL_EXPANDING,
      note,
    );
  }

  /** Looks at one claim's resize. */
  async sync(key: string): Promise<void> {
    const pvc = this.#claims.store.get(key);
    if (pvc === undefined) return;
    const volumeName = pvc.spec?.volumeName ?? '';
    let pv: PersistentVolume;
    try {
      pv = await this.#ctx.client.resource<PersistentVolume>(PERSISTENT_VOLUMES).get(volumeName);
    } catch (err) {
      throw new Error(`failed to get PV "${volumeName}"`, { cause: err });
    }
    const ref = pv.spec?.claimRef;
    if (ref === undefined || ref.namespace !== pvc.metadata.namespace || ref.uid !== pvc.metadata.uid) {
      throw new Error(`persistent Volume is not bound to PVC being updated : ${key}`);
    }
    const requested = storage(pvc.spec?.resources?.requests);
    const preResize = pv.metadata.annotations?.[PRE_RESIZE_CAPACITY_ANNOTATION] !== undefined;
    if (compareQuantities(requested, storage(pvc.status?.capacity)) <= 0 && !preResize) return;

    const migrated = migratedPlugin(pv);
    if (migrated === undefined) {
      this.#event(pvc, 'waiting for an external controller to expand this PVC');
      this.#ctx.log.info(
        `waiting for an external controller to expand the PVC ${key} (uid ${pvc.metadata.uid ?? ''})`,
      );
      return;
    }
    this.#event(
      pvc,
      `CSI migration enabled for ${migrated.plugin}; waiting for external resizer to expand the pvc`,
    );
    if (pvc.metadata.annotations?.[RESIZER_ANNOTATION] === migrated.driver) return;
    const { namespace, name } = splitKey(key);
    try {
      await this.#ctx.client
        .resource<PersistentVolumeClaim>(PERSISTENT_VOLUME_CLAIMS)
        .patch(
          name,
          { metadata: { annotations: { [RESIZER_ANNOTATION]: migrated.driver } } },
          { namespace, subresource: 'status', type: 'strategic' },
        );
    } catch (err) {
      if (isNotFound(err)) return;
      throw new Error(`error setting resizer annotation to pvc ${key}`, { cause: err });
    }
  }
}

/** Registry entry. */
export const persistentVolumeExpanderController: ControllerDescriptor = {
  name: 'persistentvolume-expander-controller',
  aliases: ['persistentvolume-expander'],
  serviceAccount: 'expand-controller',
  start(ctx) {
    new VolumeExpander(ctx).start();
  },
};
