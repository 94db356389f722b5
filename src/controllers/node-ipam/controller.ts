/**
 * The node IPAM controller with kube's range allocator (`pkg/controller/nodeipam`): with
 * `--allocate-node-cidrs`, every node without `spec.podCIDRs` gets the next free CIDR of
 * `--node-cidr-mask-size` (24 for IPv4, 64 for IPv6 by default) from each `--cluster-cidr`;
 * CIDRs nodes already have are marked used at start; a deleted node's are released. When a
 * cluster CIDR is exhausted the node gets a `CIDRNotAvailable` event and is retried with backoff.
 */
import type { Node } from '../../api/types/core-v1.js';
import {
  NODES,
  WorkQueue,
  defaultControllerRateLimiter,
  type ResourceClient,
  type SharedInformer,
} from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import type { ControllersConfig } from '../config.js';
import { typed } from '../shared/meta.js';
import { CidrError, CidrSet, formatNetwork, parseNetwork } from './cidr-set.js';
import { startWorkers } from '../shared/workers.js';

/**
 * The CIDR sets of the flags.
 * @throws CidrError for a missing or malformed `--cluster-cidr`, a mask that does not fit, or
 *   more than one CIDR of a family (a start-up error, as kube-controller-manager's).
 */
export function cidrSetsFromConfig(config: ControllersConfig): CidrSet[] {
  const text = config.clusterCidr.trim();
  if (text === '') throw new CidrError('--cluster-cidr must be set when --allocate-node-cidrs is true');
  const networks = text.split(',').map((c) => parseNetwork(c.trim()));
  if (networks.length > 2) throw new CidrError('--cluster-cidr takes at most two CIDRs (one per IP family)');
  if (networks.length === 2 && networks[0]?.family === networks[1]?.family) {
    throw new CidrError('--cluster-cidr: the two CIDRs must be of different IP families');
  }
  return networks.map((n) => {
    const perFamily = n.family === 'IPv4' ? config.nodeCidrMaskSizeIPv4 : config.nodeCidrMaskSizeIPv6;
    const mask =
      perFamily > 0
        ? perFamily
        : config.nodeCidrMaskSize > 0
          ? config.nodeCidrMaskSize
          : n.family === 'IPv4'
            ? 24
            : 64;
    return new CidrSet(n, mask);
  });
}

/** One running node IPAM controller. */
export class NodeIpamController {
  readonly #ctx: ControllerContext;
  readonly #sets: CidrSet[];
  readonly #queue: WorkQueue<string>;
  /** Whether the CIDRs nodes had at start are marked used (done by the first sync). */
  #occupied = false;
  readonly #nodes: SharedInformer<Node>;
  readonly #client: ResourceClient<Node>;
  readonly #recorder: EventSink;
  /** CIDRs handed out by node name (ahead of the cache). */
  readonly #assigned = new Map<string, string[]>();

  /** @throws CidrError for bad flags (see {@link cidrSetsFromConfig}). */
  constructor(ctx: ControllerContext) {
    this.#sets = cidrSetsFromConfig(ctx.config);
    this.#ctx = ctx;
    this.#queue = new WorkQueue<string>({ rateLimiter: defaultControllerRateLimiter(), name: ctx.name });
    this.#nodes = ctx.informers.informer<Node>(NODES);
    this.#client = ctx.client.resource<Node>(NODES);
    this.#recorder = ctx.eventRecorder('cidrAllocator');
    this.#nodes.addHandler({
      add: (n) => this.#queue.add(n.metadata.name ?? ''),
      update: (_o, n) => {
        if ((n.spec?.podCIDRs ?? []).length === 0) this.#queue.add(n.metadata.name ?? '');
      },
      delete: (n) => {
        this.#release(n);
        // A CIDR came free: nodes still waiting for one try again now.
        for (const other of this.#nodes.store.list()) {
          if ((other.spec?.podCIDRs ?? []).length === 0) this.#queue.add(other.metadata.name ?? '');
        }
      },
    });
  }

  /**
   * Starts the worker once the caches are synced (one worker: allocations must not race); its
   * first sync marks the CIDRs nodes already have. It stops when `ctx.signal` aborts.
   */
  start(): void {
    startWorkers(this.#ctx, 'node IPAM', { queue: this.#queue, workers: 1, sync: (name) => this.sync(name) });
  }

  #occupy(node: Node): void {
    for (const cidr of node.spec?.podCIDRs ?? []) {
      const set = this.#sets.find((s) => s.contains(cidr));
      if (set === undefined || !set.occupy(cidr)) {
        this.#ctx.log.warn(`node ${node.metadata.name ?? ''}: podCIDR ${cidr} is not within --cluster-cidr`);
      }
    }
  }

  #release(node: Node): void {
    const name = node.metadata.name ?? '';
    const cidrs = new Set([...(node.spec?.podCIDRs ?? []), ...(this.#assigned.get(name) ?? [])]);
    for (const cidr of cidrs) for (const s of this.#sets) s.release(cidr);
    this.#assigned.delete(name);
  }

  /** Gives one node its CIDRs if it has none. */
  async sync(name: string): Promise<void> {
    if (!this.#occupied) {
      for (const node of this.#nodes.store.list()) this.#occupy(node);
      this.#occupied = true;
    }
    const node = this.#nodes.store.get(name);
    if (node === undefined) return;
    const existing = node.spec?.podCIDRs ?? [];
    if (existing.length > 0) {
      this.#assigned.delete(name);
      return;
    }
    if (this.#assigned.has(name)) return; // written; the cache has not caught up yet
    const cidrs: string[] = [];
    for (const set of this.#sets) {
      const cidr = set.allocateNext();
      if (cidr === undefined) {
        for (const c of cidrs) for (const s of this.#sets) s.release(c);
        this.#recorder.event(
          typed(node, 'v1', 'Node'),
          'Normal',
          'CIDRNotAvailable',
          'CIDRNotAvailable',
          `Node ${name} status is now: CIDRNotAvailable`,
        );
        throw new Error(
          `failed to allocate cidr from cluster cidr ${formatNetwork(set.cluster)}: CIDR allocation failed; there are no remaining CIDRs left to allocate in the accepted range`,
        );
      }
      cidrs.push(cidr);
    }
    try {
      await this.#client.patch(name, { spec: { podCIDR: cidrs[0], podCIDRs: cidrs } }, { type: 'strategic' });
      this.#assigned.set(name, cidrs);
    } catch (err) {
      for (const c of cidrs) for (const s of this.#sets) s.release(c);
      this.#recorder.event(
        typed(node, 'v1', 'Node'),
        'Normal',
        'CIDRAssignmentFailed',
        'CIDRAssignmentFailed',
        `Node ${name} status is now: CIDRAssignmentFailed`,
      );
      throw err;
    }
  }
}
