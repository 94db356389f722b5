/**
 * One simulated node's state: its identity and slot, the Node as last seen, what it was told to
 * do (annotations, or overrides from a test), and the pod IP pools of its pod CIDRs.
 */
import type { Node, Pod } from '../../api/types/core-v1.js';
import { nodeControl, type NodeControl } from './annotations.js';
import { fallbackPodCidr, nodeInternalIp, PodIpPool } from './ip-pool.js';

/** Registration and liveness of a simulated node. */
export type NodePhase = 'unregistered' | 'registering' | 'registered';

/** A simulated node. */
export class SimNode {
  readonly slot: number;
  readonly name: string;
  readonly hostIP: string;
  phase: NodePhase = 'unregistered';
  /** The Node as the API last returned or the informer last delivered it. */
  current: Node | undefined;
  /** When status was last posted (ms), 0 before the first post. */
  lastStatusMs = 0;
  /** A lease renewal or status post of this node is in flight. */
  leaseBusy = false;
  statusBusy = false;
  /** A status change came while a post was in flight. */
  statusAgain = false;
  #annotated: NodeControl = { heartbeat: true, ready: true };
  #override: { heartbeat?: boolean; ready?: boolean } = {};
  #pools: PodIpPool[];
  #poolKey: string;

  constructor(slot: number, name: string) {
    this.slot = slot;
    this.name = name;
    this.hostIP = nodeInternalIp(slot);
    this.#poolKey = fallbackPodCidr(slot);
    this.#pools = [new PodIpPool(this.#poolKey)];
  }

  /** The node's UID once registered. */
  get uid(): string | undefined {
    return this.current?.metadata.uid;
  }

  /** Heartbeating (lease, status, pod work) unless told to stop. */
  get heartbeat(): boolean {
    return this.#override.heartbeat ?? this.#annotated.heartbeat;
  }

  /** Reporting Ready unless told otherwise. */
  get ready(): boolean {
    return this.#override.ready ?? this.#annotated.ready;
  }

  /** Registered and heartbeating: its pods are worked on. */
  get active(): boolean {
    return this.phase === 'registered' && this.heartbeat;
  }

  /** Sets or clears (undefined) a test's override of the annotations. */
  override(what: 'heartbeat' | 'ready', value: boolean | undefined): void {
    if (value === undefined) delete this.#override[what];
    else this.#override[what] = value;
  }

  /**
   * Takes in the Node as the API now has it. Returns what changed that the agent must act on:
   * its heartbeat or its ready state.
   */
  observe(node: Node): { heartbeatChanged: boolean; readyChanged: boolean } {
    const before = { heartbeat: this.heartbeat, ready: this.ready };
    this.current = node;
    this.#annotated = nodeControl(node.metadata.annotations);
    const cidrs = node.spec?.podCIDRs ?? (node.spec?.podCIDR !== undefined ? [node.spec.podCIDR] : []);
    const key = cidrs.length > 0 ? cidrs.join(',') : fallbackPodCidr(this.slot);
    if (key !== this.#poolKey) {
      // Pods started before keep their addresses (as a kubelet's would); new pods get new ones.
      const pools: PodIpPool[] = [];
      for (const c of key.split(',')) {
        try {
          pools.push(new PodIpPool(c));
        } catch (err) {
          console.error(`simulated node ${this.name}: ${String(err)}`);
        }
      }
      if (pools.length > 0) {
        this.#pools = pools;
        this.#poolKey = key;
      }
    }
    return {
      heartbeatChanged: before.heartbeat !== this.heartbeat,
      readyChanged: before.ready !== this.ready,
    };
  }

  /** The pod's addresses, one per family of the node's CIDRs; undefined when a pool is full. */
  allocateIps(podUid: string): string[] | undefined {
    const ips: string[] = [];
    for (const pool of this.#pools) {
      const ip = pool.allocate(podUid);
      if (ip === undefined) {
        this.releaseIps(podUid);
        return undefined;
      }
      ips.push(ip);
    }
    return ips;
  }

  /** Records the addresses a running pod already reports (after a restart of the agent). */
  claimIps(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    for (const { ip } of pod.status?.podIPs ?? []) {
      if (ip === undefined) continue;
      for (const pool of this.#pools) if (pool.claim(uid, ip)) break;
    }
  }

  /** Frees the pod's addresses. */
  releaseIps(podUid: string): void {
    for (const pool of this.#pools) pool.release(podUid);
  }

  /** The CIDRs pod addresses come from now. */
  get podCidrs(): readonly string[] {
    return this.#pools.map((p) => p.text);
  }
}
