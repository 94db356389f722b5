/**
 * A scheduler fed by hand: nodes and pods as typed objects, a fake API that records bindings,
 * events and condition patches and plays the binding back as the informer would.
 */
import type {
  Namespace,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  Service,
} from '../../src/api/types/core-v1.js';
import type { PodDisruptionBudget } from '../../src/api/types/policy-v1.js';
import type { CSINode, StorageClass } from '../../src/api/types/storage-v1.js';
import type { ReplicaSet } from '../../src/api/types/apps-v1.js';
import { NODES, type Client } from '../../src/client/index.js';
import { schedulerConfigFrom } from '../../src/scheduler/config.js';
import type { PodSchedulingCondition, SchedulerApi } from '../../src/scheduler/framework/types.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { createSchedulerTransform } from '../../src/scheduler/trim.js';

/**
 * Creates `n` on a real server as a Ready node, without the not-ready taint admission adds (no
 * node lifecycle controller runs in the scheduler's tests).
 */
export async function createReadyNode(client: Client, n: Node): Promise<void> {
  const nodes = client.resource<Node>(NODES);
  const created = await nodes.create(n);
  const untainted = await nodes.update({
    ...created,
    spec: { ...created.spec, taints: n.spec?.taints ?? [] },
  });
  await nodes.updateStatus({
    ...untainted,
    status: {
      ...untainted.status,
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }],
    },
  });
}

/** A node with the given allocatable (cpu, memory, pods) and extras. */
export function node(
  name: string,
  opts: {
    cpu?: string;
    memory?: string;
    pods?: string;
    labels?: Record<string, string>;
    taints?: Node['spec'] extends infer S ? (S extends { taints?: infer T } ? T : never) : never;
    unschedulable?: boolean;
    extra?: Record<string, string>;
    images?: { names: string[]; sizeBytes: number }[];
  } = {},
): Node {
  const alloc = {
    cpu: opts.cpu ?? '4',
    memory: opts.memory ?? '8Gi',
    pods: opts.pods ?? '110',
    ...(opts.extra ?? {}),
  };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(opts.labels ?? {}) } },
    spec: {
      ...(opts.taints ? { taints: opts.taints } : {}),
      ...(opts.unschedulable ? { unschedulable: true } : {}),
    },
    status: { allocatable: alloc, capacity: alloc, ...(opts.images ? { images: opts.images } : {}) },
  };
}

let uid = 0;

/** A pending pod with one container requesting `cpu`/`memory`, plus any spec fields. */
export function pod(
  name: string,
  opts: {
    cpu?: string;
    memory?: string;
    labels?: Record<string, string>;
    namespace?: string;
    spec?: Pod['spec'];
    priority?: number;
  } = {},
): Pod {
  const requests: Record<string, string> = {};
  if (opts.cpu !== undefined) requests['cpu'] = opts.cpu;
  if (opts.memory !== undefined) requests['memory'] = opts.memory;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      uid: `uid-${++uid}`,
      labels: opts.labels ?? {},
      creationTimestamp: new Date(Date.now() - 1000 * (1000 - uid)).toISOString(),
    },
    spec: {
      containers: [{ name: 'c', image: 'busybox', resources: { requests } }],
      schedulerName: 'default-scheduler',
      ...(opts.priority === undefined ? {} : { priority: opts.priority }),
      ...(opts.spec ?? {}),
    },
    status: { phase: 'Pending' },
  };
}

/** What the fake API saw. */
export interface Recorded {
  readonly binds: Map<string, string>;
  readonly events: { key: string; type: string; reason: string; note: string }[];
  readonly conditions: Map<string, PodSchedulingCondition>;
  readonly evicted: string[];
  readonly pvUpdates: PersistentVolume[];
  readonly pvcUpdates: PersistentVolumeClaim[];
}

/** A scheduler with in-memory objects. */
export class Harness {
  readonly pods = new Map<string, Pod>();
  readonly pvcs = new Map<string, PersistentVolumeClaim>();
  readonly pvs = new Map<string, PersistentVolume>();
  readonly classes = new Map<string, StorageClass>();
  readonly csiNodes = new Map<string, CSINode>();
  readonly services: Service[] = [];
  readonly replicaSets: ReplicaSet[] = [];
  readonly pdbs: PodDisruptionBudget[] = [];
  readonly namespaces = new Map<string, Namespace>();
  readonly rec: Recorded = {
    binds: new Map(),
    events: [],
    conditions: new Map(),
    evicted: [],
    pvUpdates: [],
    pvcUpdates: [],
  };
  readonly scheduler: Scheduler;
  /** The scheduler's own informer transform: trimmed, shared and frozen pods and nodes. */
  readonly #transform = createSchedulerTransform();

  constructor(config?: unknown) {
    const key = (p: Pod): string => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;
    const api: SchedulerApi = {
      bind: async (p, nodeName) => {
        await Promise.resolve();
        const cur = this.pods.get(key(p));
        if (cur === undefined) throw new Error('not found');
        this.rec.binds.set(key(p), nodeName);
        const bound: Pod = { ...cur, spec: { ...cur.spec, nodeName } };
        this.pods.set(key(p), bound);
        this.scheduler.onPodUpdate(cur, bound);
      },
      updatePv: async (pv) => {
        await Promise.resolve();
        this.rec.pvUpdates.push(pv);
        this.pvs.set(pv.metadata.name ?? '', pv);
        return pv;
      },
      updatePvc: async (pvc) => {
        await Promise.resolve();
        this.rec.pvcUpdates.push(pvc);
        this.pvcs.set(`${pvc.metadata.namespace ?? ''}/${pvc.metadata.name ?? ''}`, pvc);
        return pvc;
      },
      evictVictim: async (victim) => {
        await Promise.resolve();
        this.rec.evicted.push(key(victim));
      },
      setNominatedNode: async () => {},
      patchPodScheduled: async (p, condition, nominated) => {
        await Promise.resolve();
        this.rec.conditions.set(key(p), condition);
        const cur = this.pods.get(key(p));
        if (cur === undefined) return;
        const next: Pod = {
          ...cur,
          status: {
            ...cur.status,
            conditions: [{ type: 'PodScheduled', ...condition }],
            ...(nominated === undefined ? {} : { nominatedNodeName: nominated }),
          },
        };
        this.pods.set(key(p), next);
        this.scheduler.onPodUpdate(cur, next);
      },
      event: (p, type, reason, _action, note) => {
        this.rec.events.push({ key: key(p), type, reason, note });
      },
    };
    const lister = {
      pvc: (ns: string, n: string) => this.pvcs.get(`${ns}/${n}`),
      pv: (n: string) => this.pvs.get(n),
      pvs: () => [...this.pvs.values()],
      storageClass: (n: string) => this.classes.get(n),
      csiNode: (n: string) => this.csiNodes.get(n),
      namespace: (n: string) => this.namespaces.get(n),
      namespaceLabels: (n: string) => this.namespaces.get(n)?.metadata.labels,
      services: (ns: string) => this.services.filter((s) => s.metadata.namespace === ns),
      replicationControllers: () => [],
      replicaSets: (ns: string) => this.replicaSets.filter((s) => s.metadata.namespace === ns),
      statefulSets: () => [],
      pdbs: (ns: string) => this.pdbs.filter((s) => s.metadata.namespace === ns),
    };
    this.scheduler = new Scheduler({
      config: schedulerConfigFrom(config),
      api,
      lister,
      currentPod: (k) => this.pods.get(k),
      log: () => {},
    });
  }

  /** Adds a node as the scheduler's informer hands it over: trimmed by its transform. */
  addNode(node: Node): void {
    this.scheduler.onNodeAdd(this.#transform(node) as Node);
  }

  /** Adds a pod as the scheduler's informer hands it over: trimmed by its transform. */
  addPod(pod: Pod): void {
    const p = this.#transform(pod) as Pod;
    this.pods.set(`${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`, p);
    this.scheduler.onPodAdd(p);
  }

  deletePod(k: string): void {
    const p = this.pods.get(k);
    if (p === undefined) return;
    this.pods.delete(k);
    this.scheduler.onPodDelete(p);
  }

  /** Schedules every active pod; returns the placements made so far. */
  async run(): Promise<Map<string, string>> {
    await this.scheduler.drain();
    return this.rec.binds;
  }

  /** The last FailedScheduling note for a pod. */
  failure(k: string): string | undefined {
    return this.rec.events.filter((e) => e.key === k && e.reason === 'FailedScheduling').at(-1)?.note;
  }
}
