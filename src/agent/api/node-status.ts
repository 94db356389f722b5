/**
 * The Node object: registration (create, or adopt the existing object), its status (capacity,
 * allocatable, conditions, addresses, nodeInfo, images, daemon endpoint) written every 10 s when
 * it changed, and the Lease heartbeat in `kube-node-lease` (renewed every 10 s, 40 s duration).
 *
 * Ready follows the runtime: False with kubelet's `container runtime is down` message while
 * CRI fails, True (`kubelet is posting ready status`) when it answers.
 */
import type { Node, NodeCondition, NodeStatus, Taint } from '../../api/types/core-v1.js';
import type { Lease } from '../../api/types/coordination-v1.js';
import {
  LEASES,
  NODES,
  SharedInformerFactory,
  isAlreadyExists,
  isConflict,
  isNotFound,
  type Client,
  type SharedInformer,
} from '../../client/index.js';
import type { CriClient } from '../cri/client.js';
import { kubeTime } from '../pod/status.js';
import { machineAllocatable, machineCapacity, nodeAddresses, nodeInfo } from './machine.js';

/** How the node registers. */
export interface NodeOptions {
  readonly name: string;
  readonly nodeIP: string;
  readonly port: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly maxPods: number;
  readonly rootDir: string;
  readonly podCIDR: string;
  readonly evictionMemoryBytes: number;
}

const LEASE_DURATION_S = 40;
const RENEW_MS = 10_000;
const STATUS_MS = 10_000;

function cond(
  type: string,
  status: boolean,
  reason: string,
  message: string,
  prev: NodeCondition[] | undefined,
  now: string,
): NodeCondition {
  const s = status ? 'True' : 'False';
  const old = prev?.find((c) => c.type === type);
  return {
    type,
    status: s,
    lastHeartbeatTime: now,
    lastTransitionTime: old && old.status === s && old.lastTransitionTime ? old.lastTransitionTime : now,
    reason,
    message,
  };
}

/** Keeps this node's Node object and Lease. */
export class NodeStatusManager {
  readonly #client: Client;
  readonly #cri: CriClient;
  readonly #opts: NodeOptions;
  #runtimeOk = false;
  #runtimeError = '';
  #timers: NodeJS.Timeout[] = [];
  #lastStatus = '';
  #node: Node | undefined;
  /**
   * The node as the API server has it, watched once registered (kubelet's node informer): what
   * others change (labels, taints, the pod CIDR) reaches admission without a status write.
   */
  #watched: SharedInformer<Node> | undefined;
  #informers: SharedInformerFactory | undefined;
  #stopped = false;

  constructor(client: Client, cri: CriClient, opts: NodeOptions) {
    this.#client = client;
    this.#cri = cri;
    this.#opts = opts;
  }

  /** The node as last watched, or else as last read or written. */
  get node(): Node | undefined {
    return this.#watched?.store.get(this.#opts.name) ?? this.#node;
  }

  /** The runtime's health, from the watcher's relists. */
  setRuntimeHealth(ok: boolean, error?: unknown): void {
    const changed = ok !== this.#runtimeOk;
    this.#runtimeOk = ok;
    this.#runtimeError = ok
      ? ''
      : error instanceof Error
        ? error.message
        : typeof error === 'string'
          ? error
          : 'unknown error';
    if (changed && this.#node) void this.updateStatus();
  }

  /** Registers the node (creating or adopting it), writes its status and starts the heartbeats. */
  async start(): Promise<void> {
    await this.#register();
    this.#informers = new SharedInformerFactory(this.#client, {
      log: (m, e) => console.error(`agent: node ${this.#opts.name}: ${m}: ${String(e)}`),
    });
    this.#watched = this.#informers.informer<Node>(NODES, {
      fieldSelector: `metadata.name=${this.#opts.name}`,
    });
    this.#informers.start();
    await this.updateStatus();
    await this.#renewLease();
    this.#timers.push(setInterval(() => void this.updateStatus(), STATUS_MS));
    this.#timers.push(setInterval(() => void this.#renewLease(), RENEW_MS));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#timers) clearInterval(t);
    await this.#informers?.stop();
  }

  async #register(): Promise<void> {
    const arch = process.arch === 'x64' ? 'amd64' : process.arch;
    const labels = {
      'beta.kubernetes.io/arch': arch,
      'beta.kubernetes.io/os': 'linux',
      'kubernetes.io/arch': arch,
      'kubernetes.io/hostname': this.#opts.name,
      'kubernetes.io/os': 'linux',
      ...this.#opts.labels,
    };
    const body: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: this.#opts.name,
        labels,
        annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
      },
      spec: {
        ...(this.#opts.podCIDR ? { podCIDR: this.#opts.podCIDR, podCIDRs: [this.#opts.podCIDR] } : {}),
        ...(this.#opts.taints.length ? { taints: [...this.#opts.taints] } : {}),
      },
    };
    const nodes = this.#client.resource<Node>(NODES);
    try {
      this.#node = await nodes.create(body);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const existing = await nodes.get(this.#opts.name);
      this.#node = await nodes.patch(this.#opts.name, { metadata: { labels } }, { type: 'merge' });
      if (existing.spec?.podCIDR && !this.#opts.podCIDR) this.#node = { ...this.#node, spec: existing.spec };
    }
  }

  /** The pod CIDR: the agent's own, else the one the controller manager assigned. */
  podCIDR(): string {
    return this.#opts.podCIDR || this.#node?.spec?.podCIDR || '';
  }

  async #status(): Promise<NodeStatus> {
    const now = kubeTime(Date.now());
    const prev = this.#node?.status?.conditions;
    let runtimeName = 'containerd';
    let runtimeVersion = '';
    let images: NodeStatus['images'] = [];
    if (this.#runtimeOk) {
      try {
        const v = await this.#cri.version();
        runtimeName = v.runtimeName;
        runtimeVersion = v.runtimeVersion;
        images = (await this.#cri.listImages())
          .map((i) => ({ names: [...i.repoDigests, ...i.repoTags], sizeBytes: Number(i.size) }))
          .sort((a, b) => b.sizeBytes - a.sizeBytes)
          .slice(0, 50);
      } catch (err) {
        this.#runtimeOk = false;
        this.#runtimeError = (err as Error).message;
      }
    }
    const capacity = machineCapacity(this.#opts.rootDir, this.#opts.maxPods);
    return {
      capacity,
      allocatable: machineAllocatable(capacity, this.#opts.evictionMemoryBytes),
      conditions: [
        cond(
          'MemoryPressure',
          false,
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
          prev,
          now,
        ),
        cond('DiskPressure', false, 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', prev, now),
        cond(
          'PIDPressure',
          false,
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
          prev,
          now,
        ),
        this.#runtimeOk
          ? cond('Ready', true, 'KubeletReady', 'kubelet is posting ready status', prev, now)
          : cond(
              'Ready',
              false,
              'KubeletNotReady',
              `container runtime is down: ${this.#runtimeError || 'not checked yet'}`,
              prev,
              now,
            ),
      ],
      addresses: nodeAddresses(this.#opts.nodeIP, this.#opts.name),
      daemonEndpoints: { kubeletEndpoint: { Port: this.#opts.port } },
      nodeInfo: nodeInfo({ name: runtimeName, version: runtimeVersion }),
      images,
    };
  }

  /** Writes the node's status when it changed (heartbeat times aside). */
  async updateStatus(): Promise<void> {
    if (this.#stopped) return;
    try {
      const status = await this.#status();
      const key = JSON.stringify({
        ...status,
        conditions: status.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      });
      if (key === this.#lastStatus) return;
      this.#node = await this.#client
        .resource<Node>(NODES)
        .patch(this.#opts.name, { status }, { type: 'merge', subresource: 'status' });
      this.#lastStatus = key;
    } catch (err) {
      console.error(`agent: node status of ${this.#opts.name}: ${(err as Error).message}`);
    }
  }

  async #renewLease(): Promise<void> {
    if (this.#stopped) return;
    const leases = this.#client.resource<Lease>(LEASES);
    const now = new Date().toISOString().replace('Z', '000Z');
    try {
      const lease = await leases.get(this.#opts.name, { namespace: 'kube-node-lease' });
      await leases.update({
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: this.#opts.name,
          leaseDurationSeconds: LEASE_DURATION_S,
          renewTime: now,
        },
      });
    } catch (err) {
      if (isNotFound(err)) {
        await leases
          .create({
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: {
              name: this.#opts.name,
              namespace: 'kube-node-lease',
              ...(this.#node?.metadata.uid
                ? {
                    ownerReferences: [
                      { apiVersion: 'v1', kind: 'Node', name: this.#opts.name, uid: this.#node.metadata.uid },
                    ],
                  }
                : {}),
            },
            spec: { holderIdentity: this.#opts.name, leaseDurationSeconds: LEASE_DURATION_S, renewTime: now },
          })
          .catch((e: unknown) => console.error(`agent: creating lease: ${(e as Error).message}`));
      } else if (!isConflict(err)) {
        console.error(`agent: renewing lease: ${(err as Error).message}`);
      }
    }
  }
}
