/**
 * The scheduling framework's contracts: plugins with kube's extension points, the per-cycle
 * state, the cluster view plugins read (a snapshot of node infos plus listers of other kinds),
 * and the API actions plugins may take (binding, PVC and PV updates, victim deletion).
 */
import type {
  Namespace,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  ReplicationController,
  Service,
} from '../../api/types/core-v1.js';
import type { ReplicaSet, StatefulSet } from '../../api/types/apps-v1.js';
import type { PodDisruptionBudget } from '../../api/types/policy-v1.js';
import type { StorageClass, CSINode } from '../../api/types/storage-v1.js';
import type { AffinityIndex } from '../affinity-index.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import type { Labels } from '../selectors.js';
import type { MaybeStatus, Status } from './status.js';

/** The highest score a plugin gives a node (after normalization). */
export const MAX_NODE_SCORE = 100;

/** Data plugins keep for one scheduling cycle, by plugin name. */
export class CycleState {
  readonly #data = new Map<string, unknown>();
  /** Plugins skipped at PreFilter / PreScore for this pod. */
  readonly skipFilter = new Set<string>();
  readonly skipScore = new Set<string>();

  read<T>(key: string): T | undefined {
    return this.#data.get(key) as T | undefined;
  }

  write(key: string, value: unknown): void {
    this.#data.set(key, value);
  }
}

/** The nodes and placed pods as one cycle sees them. */
export interface Snapshot {
  /** Every node, in a stable order. */
  readonly nodes: readonly NodeInfo[];
  get(name: string): NodeInfo | undefined;
  /** Nodes holding a pod with any (anti-)affinity term. */
  nodesWithAffinityPods(): Iterable<NodeInfo>;
  /** Nodes holding a pod with a required anti-affinity term. */
  nodesWithRequiredAntiAffinityPods(): Iterable<NodeInfo>;
  /** Number of nodes holding each normalized image name. */
  imageNodeCount(image: string): number;
  /**
   * InterPodAffinity's counts kept with the pods (the cache's); absent in snapshots that
   * change pods hypothetically (preemption's dry runs), where the plugin counts per cycle.
   */
  readonly affinityIndex?: AffinityIndex;
}

/** Read access to the kinds plugins consult besides nodes and pods. */
export interface ClusterLister {
  pvc(namespace: string, name: string): PersistentVolumeClaim | undefined;
  pv(name: string): PersistentVolume | undefined;
  pvs(): readonly PersistentVolume[];
  storageClass(name: string): StorageClass | undefined;
  csiNode(name: string): CSINode | undefined;
  namespace(name: string): Namespace | undefined;
  namespaceLabels(name: string): Labels;
  services(namespace: string): readonly Service[];
  replicationControllers(namespace: string): readonly ReplicationController[];
  replicaSets(namespace: string): readonly ReplicaSet[];
  statefulSets(namespace: string): readonly StatefulSet[];
  pdbs(namespace: string): readonly PodDisruptionBudget[];
  /** Pods nominated to a node (by preemption), not yet bound. */
  nominatedPods(nodeName: string): readonly PodInfo[];
}

/** API writes plugins make. Every method throws on failure (the caller turns it into a Status). */
export interface SchedulerApi {
  bind(pod: Pod, nodeName: string): Promise<void>;
  updatePv(pv: PersistentVolume): Promise<PersistentVolume>;
  updatePvc(pvc: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  /** Marks the pod with the DisruptionTarget condition and deletes it gracefully. */
  evictVictim(victim: Pod, preemptor: Pod, reason: string): Promise<void>;
  /** Sets or clears status.nominatedNodeName. */
  setNominatedNode(pod: Pod, nodeName: string): Promise<void>;
  /**
   * Sets the pod's PodScheduled condition (and nominatedNodeName when given; '' clears it)
   * with a status patch.
   */
  patchPodScheduled(
    pod: Pod,
    condition: PodSchedulingCondition,
    nominatedNodeName: string | undefined,
  ): Promise<void>;
  /** Records an event about the object. */
  event(regarding: Pod, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void;
}

/** The PodScheduled condition the scheduler writes. */
export interface PodSchedulingCondition {
  readonly status: 'True' | 'False';
  readonly reason: string;
  readonly message: string;
}

/** What a plugin gets to see and do. */
export interface Handle {
  readonly lister: ClusterLister;
  readonly api: SchedulerApi;
  /** The snapshot of the cycle being run. */
  snapshot(): Snapshot;
  /** The profile's scheduler name (reported in events). */
  readonly schedulerName: string;
  /**
   * Runs the profile's PreFilter and Filter plugins for a pod on one node of `snapshot` (a
   * modified copy of the cycle's snapshot: preemption's dry runs). Undefined: the pod fits.
   */
  dryRun(pod: PodInfo, node: NodeInfo, snapshot: Snapshot): MaybeStatus;
}

/** A kind of cluster change that can make a rejected pod schedulable. */
export interface ClusterEvent {
  readonly resource:
    | 'Pod'
    | 'AssignedPod'
    | 'Node'
    | 'PersistentVolume'
    | 'PersistentVolumeClaim'
    | 'StorageClass'
    | 'CSINode'
    | 'Namespace'
    | 'Service'
    | '*';
  readonly action: 'Add' | 'Update' | 'Delete' | '*';
}

/** The result of PreFilter: optionally the only nodes worth filtering. */
export interface PreFilterResult {
  readonly status?: Status;
  readonly nodeNames?: ReadonlySet<string>;
}

/** A score of one node. */
export interface NodeScore {
  readonly name: string;
  score: number;
}

/** A pod in the queue, as QueueSort compares them. */
export interface QueuedPod {
  readonly info: PodInfo;
  /** When the pod was first added to the queue (ms). */
  readonly timestamp: number;
}

/**
 * A scheduler plugin: every method is optional; the framework calls those present at their
 * extension point, in the profile's order. Filter and Score are synchronous: a cycle's filtering
 * never waits on I/O, as all data comes from informers.
 */
export interface Plugin {
  readonly name: string;
  /** Cluster events after which a pod this plugin rejected may fit (queueing). */
  readonly events?: readonly ClusterEvent[];
  preEnqueue?(pod: Pod): MaybeStatus;
  less?(a: QueuedPod, b: QueuedPod): boolean;
  preFilter?(state: CycleState, pod: PodInfo, snapshot: Snapshot): PreFilterResult | undefined;
  filter?(state: CycleState, pod: PodInfo, node: NodeInfo): MaybeStatus;
  postFilter?(
    state: CycleState,
    pod: PodInfo,
    statuses: ReadonlyMap<string, Status>,
  ): Promise<{ status: Status | undefined; nominatedNode?: string }>;
  preScore?(state: CycleState, pod: PodInfo, nodes: readonly NodeInfo[]): MaybeStatus;
  score?(state: CycleState, pod: PodInfo, node: NodeInfo): number;
  normalizeScore?(state: CycleState, pod: PodInfo, scores: NodeScore[]): void;
  reserve?(state: CycleState, pod: PodInfo, nodeName: string): MaybeStatus;
  unreserve?(state: CycleState, pod: PodInfo, nodeName: string): void;
  preBind?(state: CycleState, pod: PodInfo, nodeName: string): Promise<MaybeStatus>;
  bind?(state: CycleState, pod: PodInfo, nodeName: string): Promise<MaybeStatus>;
}

/** Builds a plugin from its args (pluginConfig) and the handle. */
export type PluginFactory = (args: Record<string, unknown>, handle: Handle) => Plugin;

/** Scales raw scores to 0..100 (kube's DefaultNormalizeScore), optionally reversed. */
export function defaultNormalizeScore(scores: NodeScore[], reverse: boolean, max = MAX_NODE_SCORE): void {
  let highest = 0;
  for (const s of scores) if (s.score > highest) highest = s.score;
  if (highest === 0) {
    if (reverse) for (const s of scores) s.score = max;
    return;
  }
  for (const s of scores) {
    let v = Math.trunc((max * s.score) / highest);
    if (reverse) v = max - v;
    s.score = v;
  }
}

/** A shared empty array (no allocation for "nothing to score"). */
export const SKIP_NONE: readonly never[] = Object.freeze([]);
