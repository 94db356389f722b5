/**
 * The scheduler's informers: nodes and pods feed the cache and the queue; the kinds plugins read
 * (PVCs, PVs, StorageClasses, CSINodes, Namespaces, Services, ReplicationControllers,
 * ReplicaSets, StatefulSets, PodDisruptionBudgets) are listed from the informers' stores and
 * their changes requeue the pods they may help.
 */
import type { ReplicaSet, StatefulSet } from '../api/types/apps-v1.js';
import type {
  Namespace,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  ReplicationController,
  Service,
} from '../api/types/core-v1.js';
import type { PodDisruptionBudget } from '../api/types/policy-v1.js';
import type { CSINode, StorageClass } from '../api/types/storage-v1.js';
import {
  CSI_NODES,
  NAMESPACE_INDEX,
  NAMESPACES,
  NODES,
  PERSISTENT_VOLUME_CLAIMS,
  PERSISTENT_VOLUMES,
  POD_DISRUPTION_BUDGETS,
  PODS,
  REPLICA_SETS,
  REPLICATION_CONTROLLERS,
  SERVICES,
  STATEFUL_SETS,
  STORAGE_CLASSES,
  type ResourceRef,
  type SharedInformer,
  type SharedInformerFactory,
  type TypedObject,
} from '../client/index.js';
import type { ClusterEvent, ClusterLister } from './framework/types.js';
import type { Scheduler } from './scheduler.js';

/** The informers the scheduler reads, and listers over their stores. */
export class SchedulerInformers {
  readonly pods: SharedInformer<Pod>;
  readonly nodes: SharedInformer<Node>;
  readonly #pvcs: SharedInformer<PersistentVolumeClaim>;
  readonly #pvs: SharedInformer<PersistentVolume>;
  readonly #classes: SharedInformer<StorageClass>;
  readonly #csiNodes: SharedInformer<CSINode>;
  readonly #namespaces: SharedInformer<Namespace>;
  readonly #services: SharedInformer<Service>;
  readonly #rcs: SharedInformer<ReplicationController>;
  readonly #rss: SharedInformer<ReplicaSet>;
  readonly #sss: SharedInformer<StatefulSet>;
  readonly #pdbs: SharedInformer<PodDisruptionBudget>;

  constructor(readonly factory: SharedInformerFactory) {
    this.pods = factory.informer<Pod>(PODS);
    this.nodes = factory.informer<Node>(NODES);
    this.#pvcs = factory.informer(PERSISTENT_VOLUME_CLAIMS);
    this.#pvs = factory.informer(PERSISTENT_VOLUMES);
    this.#classes = factory.informer(STORAGE_CLASSES);
    this.#csiNodes = factory.informer(CSI_NODES);
    this.#namespaces = factory.informer(NAMESPACES);
    this.#services = factory.informer(SERVICES);
    this.#rcs = factory.informer(REPLICATION_CONTROLLERS);
    this.#rss = factory.informer(REPLICA_SETS);
    this.#sss = factory.informer(STATEFUL_SETS);
    this.#pdbs = factory.informer(POD_DISRUPTION_BUDGETS);
  }

  /** Listers over the stores. */
  lister(): Omit<ClusterLister, 'nominatedPods'> {
    const inNs = <T>(inf: SharedInformer<T>, ns: string): T[] => inf.store.byIndex(NAMESPACE_INDEX, ns);
    return {
      pvc: (ns, name) => this.#pvcs.store.get(`${ns}/${name}`),
      pv: (name) => this.#pvs.store.get(name),
      pvs: () => this.#pvs.store.list(),
      storageClass: (name) => this.#classes.store.get(name),
      csiNode: (name) => this.#csiNodes.store.get(name),
      namespace: (name) => this.#namespaces.store.get(name),
      namespaceLabels: (name) => this.#namespaces.store.get(name)?.metadata.labels,
      services: (ns) => inNs(this.#services, ns),
      replicationControllers: (ns) => inNs(this.#rcs, ns),
      replicaSets: (ns) => inNs(this.#rss, ns),
      statefulSets: (ns) => inNs(this.#sss, ns),
      pdbs: (ns) => inNs(this.#pdbs, ns),
    };
  }

  /** Sends every change to the scheduler. */
  connect(s: Scheduler): void {
    this.nodes.addHandler({
      add: (n) => s.onNodeAdd(n),
      update: (_o, n) => s.onNodeUpdate(n),
      delete: (n) => s.onNodeDelete(n),
    });
    this.pods.addHandler({
      add: (p) => s.onPodAdd(p),
      update: (o, p) => s.onPodUpdate(o, p),
      delete: (p) => s.onPodDelete(p),
    });
    const relay = <T extends TypedObject>(
      inf: SharedInformer<T>,
      resource: ClusterEvent['resource'],
    ): void => {
      inf.addHandler({
        add: () => s.onEvent({ resource, action: 'Add' }),
        update: () => s.onEvent({ resource, action: 'Update' }),
        delete: () => s.onEvent({ resource, action: 'Delete' }),
      });
    };
    relay(this.#pvcs, 'PersistentVolumeClaim');
    relay(this.#pvs, 'PersistentVolume');
    relay(this.#classes, 'StorageClass');
    relay(this.#csiNodes, 'CSINode');
    relay(this.#namespaces, 'Namespace');
    relay(this.#services, 'Service');
  }
}

/** The refs the scheduler watches (for RBAC checks and docs). */
export const WATCHED: readonly ResourceRef[] = [
  PODS,
  NODES,
  PERSISTENT_VOLUME_CLAIMS,
  PERSISTENT_VOLUMES,
  STORAGE_CLASSES,
  CSI_NODES,
  NAMESPACES,
  SERVICES,
  REPLICATION_CONTROLLERS,
  REPLICA_SETS,
  STATEFUL_SETS,
  POD_DISRUPTION_BUDGETS,
];
