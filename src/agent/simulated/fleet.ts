/**
 * The node side of the simulated agent: registers every node, renews each node's Lease in
 * `kube-node-lease` and posts node status, as kubelet does with node leases (lease every
 * 10 s; status every 5 m, or at once when it changes). All deadlines live in the agent's one
 * {@link TimerQueue}; first deadlines are spread over the interval so 1,000 nodes renew at an
 * even 100 per second, and each later one carries kubelet's 4% jitter.
 *
 * Transitions of a node ({@link SimNode.phase}): unregistered → registering → registered; a
 * registered node whose Node object disappears goes back to unregistered and registers again
 * at its next status deadline. A node told to stop heartbeating keeps its deadlines but skips
 * the writes, as a hung kubelet would.
 */
import type { Lease } from '../../api/types/coordination-v1.js';
import type { Node } from '../../api/types/core-v1.js';
import type { Client, ResourceClient } from '../../client/index.js';
import { isAlreadyExists, isConflict, isNotFound, LEASES, NODES } from '../../client/index.js';
import { nodeForRegistration, nodeName, nodeStatus, nodeStatusChanged } from './node-object.js';
import type { SimulatedNodesOptions } from './options.js';
import { SimNode } from './sim-node.js';
import type { TimerQueue } from './timer-queue.js';

/** The namespace of node Leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** Timer keys of the node side: `L/<node>` lease, `S/<node>` status. */
export const LEASE_TIMER = 'L/';
export const STATUS_TIMER = 'S/';

const RETRY_MS = 1_000;
const JITTER = 0.04;

/** RFC 3339 with microseconds (metav1.MicroTime). */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** All simulated nodes of one agent. */
export class NodeFleet {
  readonly #options: SimulatedNodesOptions;
  readonly #nodesApi: ResourceClient<Node>;
  readonly #leasesApi: ResourceClient<Lease>;
  readonly #timers: TimerQueue<string>;
  readonly #nodes = new Map<string, SimNode>();
  readonly #leases = new Map<string, Lease>();
  readonly #bootMs = Date.now();
  readonly #onActive: (node: SimNode) => void;
  readonly #log: (line: string) => void;
  #stopped = false;

  /**
   * @param onActive called when a node starts (or resumes) working on its pods: after its
   *   registration, and when it is told to heartbeat again.
   */
  constructor(
    client: Client,
    options: SimulatedNodesOptions,
    timers: TimerQueue<string>,
    onActive: (node: SimNode) => void,
    log: (line: string) => void,
  ) {
    this.#options = options;
    this.#nodesApi = client.resource<Node>(NODES);
    this.#leasesApi = client.resource<Lease>(LEASES);
    this.#timers = timers;
    this.#onActive = onActive;
    this.#log = log;
    for (let slot = 0; slot < options.nodes; slot++) {
      const name = nodeName(options, slot);
      this.#nodes.set(name, new SimNode(slot, name));
    }
  }

  /** The simulated node of that name, if it is one of ours. */
  get(name: string): SimNode | undefined {
    return this.#nodes.get(name);
  }

  /** Every node, in slot order. */
  all(): IterableIterator<SimNode> {
    return this.#nodes.values();
  }

  /** Registers every node (at most `concurrency` at once); resolves when all have tried once. */
  async registerAll(concurrency: number): Promise<void> {
    const queue = [...this.#nodes.values()];
    const worker = async (): Promise<void> => {
      for (let node = queue.shift(); node !== undefined && !this.#stopped; node = queue.shift()) {
        await this.#register(node);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, worker));
  }

  /** Stops all further writes. */
  stop(): void {
    this.#stopped = true;
  }

  /** A timer of the node side fired. */
  fire(key: string): void {
    const node = this.#nodes.get(key.slice(2));
    if (node === undefined || this.#stopped) return;
    if (key.startsWith(LEASE_TIMER)) void this.#renewLease(node);
    else void this.#postStatus(node, false);
  }

  /** The informer saw our Node change (or vanish: `node` undefined). */
  observe(name: string, node: Node | undefined): void {
    const sim = this.#nodes.get(name);
    if (sim === undefined) return;
    if (node === undefined) {
      if (sim.phase === 'registered') {
        this.#log(`simulated node ${name}: Node deleted; registering again`);
        sim.phase = 'unregistered';
        sim.current = undefined;
        this.#leases.delete(name);
        this.#timers.after(STATUS_TIMER + name, RETRY_MS);
      }
      return;
    }
    const { heartbeatChanged, readyChanged } = sim.observe(node);
    this.#afterChange(sim, heartbeatChanged, readyChanged);
  }

  /** A test's override of a node's heartbeat or readiness (undefined: back to its annotations). */
  override(name: string, what: 'heartbeat' | 'ready', value: boolean | undefined): void {
    const sim = this.#nodes.get(name);
    if (sim === undefined) throw new Error(`${name} is not a simulated node of this agent`);
    const before = { heartbeat: sim.heartbeat, ready: sim.ready };
    sim.override(what, value);
    this.#afterChange(sim, before.heartbeat !== sim.heartbeat, before.ready !== sim.ready);
  }

  #afterChange(sim: SimNode, heartbeatChanged: boolean, readyChanged: boolean): void {
    if (sim.phase !== 'registered') return;
    if (heartbeatChanged) {
      this.#log(`simulated node ${sim.name}: heartbeat ${sim.heartbeat ? 'resumed' : 'stopped'}`);
      if (sim.heartbeat) {
        this.#timers.after(LEASE_TIMER + sim.name, 0);
        this.#timers.after(STATUS_TIMER + sim.name, 0);
        this.#onActive(sim);
      }
    } else if (readyChanged && sim.heartbeat) {
      this.#timers.after(STATUS_TIMER + sim.name, 0);
    }
  }

  async #register(sim: SimNode): Promise<void> {
    if (sim.phase !== 'unregistered' || this.#stopped) return;
    sim.phase = 'registering';
    try {
      let node: Node;
      try {
        node = await this.#nodesApi.create(nodeForRegistration(this.#options, sim.slot));
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        node = await this.#nodesApi.get(sim.name);
      }
      sim.observe(node);
      sim.phase = 'registered';
      sim.lastStatusMs = 0;
    } catch (err) {
      sim.phase = 'unregistered';
      this.#log(`simulated node ${sim.name}: registration failed, retrying: ${String(err)}`);
      this.#timers.after(STATUS_TIMER + sim.name, RETRY_MS * (1 + Math.random()));
      return;
    }
    await this.#postStatus(sim, true);
    await this.#renewLease(sim);
    // Spread the nodes over the intervals from here on.
    this.#timers.after(LEASE_TIMER + sim.name, Math.random() * this.#options.leaseRenewIntervalMs);
    this.#onActive(sim);
  }

  async #postStatus(sim: SimNode, force: boolean): Promise<void> {
    if (this.#stopped) return;
    if (sim.phase === 'unregistered') return this.#register(sim);
    if (sim.phase !== 'registered') return;
    if (sim.statusBusy) {
      // A change while a post is in flight: post again right after it.
      sim.statusAgain = true;
      return;
    }
    const next = (): void => {
      const every = this.#options.nodeStatusReportFrequencyMs;
      // After registration, spread the nodes' reports over the period.
      const delay = force ? every * (0.5 + Math.random() * 0.5) : every * (1 + Math.random() * JITTER);
      this.#timers.after(STATUS_TIMER + sim.name, delay);
    };
    if (!sim.heartbeat) return next();
    const now = Date.now();
    const status = nodeStatus(
      this.#options,
      { slot: sim.slot, ready: sim.ready, current: sim.current, bootMs: this.#bootMs },
      now,
    );
    if (
      !force &&
      !nodeStatusChanged(sim.current, status) &&
      now - sim.lastStatusMs < this.#options.nodeStatusReportFrequencyMs * 0.9
    ) {
      return next();
    }
    sim.statusBusy = true;
    try {
      const updated = await this.#nodesApi.patch(
        sim.name,
        { status },
        { type: 'strategic', subresource: 'status' },
      );
      sim.observe(updated);
      sim.lastStatusMs = now;
      next();
    } catch (err) {
      if (isNotFound(err)) {
        sim.phase = 'unregistered';
        sim.current = undefined;
      } else {
        this.#log(`simulated node ${sim.name}: status update failed, retrying: ${String(err)}`);
      }
      this.#timers.after(STATUS_TIMER + sim.name, RETRY_MS * (1 + Math.random()));
    } finally {
      sim.statusBusy = false;
      if (sim.statusAgain) {
        sim.statusAgain = false;
        this.#timers.after(STATUS_TIMER + sim.name, 0);
      }
    }
  }

  async #renewLease(sim: SimNode): Promise<void> {
    if (this.#stopped || sim.phase !== 'registered' || sim.leaseBusy) return;
    const interval = this.#options.leaseRenewIntervalMs;
    if (!sim.heartbeat) {
      this.#timers.after(LEASE_TIMER + sim.name, interval);
      return;
    }
    sim.leaseBusy = true;
    try {
      const renewTime = microTime(Date.now());
      const held = this.#leases.get(sim.name);
      let lease: Lease;
      if (held !== undefined) {
        try {
          lease = await this.#leasesApi.update({ ...held, spec: { ...held.spec, renewTime } });
        } catch (err) {
          if (!isConflict(err) && !isNotFound(err)) throw err;
          this.#leases.delete(sim.name);
          lease = await this.#getOrCreateLease(sim, renewTime);
        }
      } else {
        lease = await this.#getOrCreateLease(sim, renewTime);
      }
      this.#leases.set(sim.name, lease);
      this.#timers.after(LEASE_TIMER + sim.name, interval * (1 + Math.random() * JITTER));
    } catch (err) {
      this.#leases.delete(sim.name);
      this.#log(`simulated node ${sim.name}: lease renewal failed, retrying: ${String(err)}`);
      this.#timers.after(LEASE_TIMER + sim.name, Math.min(interval, RETRY_MS * (1 + Math.random())));
    } finally {
      sim.leaseBusy = false;
    }
  }

  /**
   * Creates the node's Lease, or takes over the one there (a restarted agent). Create comes
   * first: on a fresh cluster that saves the GET kubelet makes, a quarter of registration's writes.
   */
  async #getOrCreateLease(sim: SimNode, renewTime: string): Promise<Lease> {
    const spec = {
      holderIdentity: sim.name,
      leaseDurationSeconds: this.#options.leaseDurationSeconds,
      renewTime,
    };
    try {
      return await this.#leasesApi.create({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: sim.name,
          namespace: NODE_LEASE_NAMESPACE,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: sim.name, uid: sim.uid ?? '' }],
        },
        spec,
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    const found = await this.#leasesApi.get(sim.name, { namespace: NODE_LEASE_NAMESPACE });
    return this.#leasesApi.update({ ...found, spec: { ...found.spec, ...spec } });
  }
}
