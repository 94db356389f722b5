/**
 * The node lifecycle controller's health pass, as kube's `monitorNodeHealth`: every
 * `--node-monitor-period`, each node silent past `--node-monitor-grace-period` (its Lease in
 * `kube-node-lease` and its Ready heartbeat both still) has its Ready and pressure conditions set
 * Unknown; the NoSchedule and NoExecute taints follow the conditions; a node turning not ready
 * gets a `NodeNotReady` event and its pods' Ready condition set False.
 */
import type { Node, Pod } from '../../api/types/core-v1.js';
import type { Lease } from '../../api/types/coordination-v1.js';
import { isConflict, type ResourceClient, type SharedInformer } from '../../client/index.js';
import type { ControllerContext, EventSink } from '../context.js';
import { rfc3339, typed } from '../shared/meta.js';
import { podsOnNode } from '../pods/node-index.js';
import { observe, readyCondition, silentConditions, type NodeProbe } from './health.js';
import { reconcileTaints } from './taints.js';

/** Where kubelets keep their heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** What the pass reads and writes. */
export interface MonitorDeps {
  readonly ctx: ControllerContext;
  readonly nodes: SharedInformer<Node>;
  readonly leases: SharedInformer<Lease>;
  readonly pods: SharedInformer<Pod>;
  readonly nodeClient: ResourceClient<Node>;
  readonly podClient: ResourceClient<Pod>;
  readonly recorder: EventSink;
  readonly now: () => number;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The health pass and its memory of each node. */
export class NodeMonitor {
  readonly #d: MonitorDeps;
  readonly #probes = new Map<string, NodeProbe>();
  /** Last Ready status seen per node, to see a True → not-True transition once. */
  readonly #lastReady = new Map<string, string>();
  /** Nodes whose pods still have to be marked not ready (a failed attempt is retried). */
  readonly #markPending = new Set<string>();

  constructor(deps: MonitorDeps) {
    this.#d = deps;
  }

  /** One pass over every node; failures are logged and retried on the next pass. */
  async pass(): Promise<void> {
    const names = new Set<string>();
    for (const cached of this.#d.nodes.store.list()) {
      const name = cached.metadata.name ?? '';
      names.add(name);
      try {
        await this.#checkNode(cached);
      } catch (err) {
        // A conflict is a kubelet (or user) writing at the same time: the next pass retries.
        if (isConflict(err)) this.#d.ctx.log.warn(`node ${name}: changed while checked; retried next pass`);
        else this.#d.ctx.log.error(`node ${name}: health check failed`, err);
      }
    }
    for (const name of [...this.#probes.keys()]) {
      if (!names.has(name)) {
        this.#probes.delete(name);
        this.#lastReady.delete(name);
        this.#markPending.delete(name);
      }
    }
  }

  async #checkNode(cached: Node): Promise<void> {
    const name = cached.metadata.name ?? '';
    const nowMs = this.#d.now();
    const lease = this.#d.leases.store.get(`${NODE_LEASE_NAMESPACE}/${name}`);
    const probe = observe(cached, lease, this.#probes.get(name), nowMs);
    this.#probes.set(name, probe);
    let node = cached;
    const grace = this.#d.ctx.config.nodeMonitorGracePeriodMs;
    const startup = this.#d.ctx.config.nodeStartupGracePeriodMs;
    const conditions = silentConditions(node, probe, nowMs, grace, startup);
    if (conditions !== undefined) {
      node = await this.#d.nodeClient.updateStatus({
        ...node,
        status: { ...(node.status ?? {}), conditions },
      });
      // Our own write is not the kubelet's heartbeat.
      probe.heartbeat = readyCondition(node)?.lastHeartbeatTime ?? '';
    }
    const taints = reconcileTaints(node, rfc3339(nowMs));
    if (taints !== undefined) {
      node = await this.#d.nodeClient.update({ ...node, spec: { ...(node.spec ?? {}), taints } });
    }
    const ready = readyCondition(node)?.status ?? 'Unknown';
    const before = this.#lastReady.get(name);
    this.#lastReady.set(name, ready);
    if (before === 'True' && ready !== 'True') {
      this.#d.recorder.event(
        typed(node, 'v1', 'Node'),
        'Normal',
        'NodeNotReady',
        'NodeNotReady',
        `Node ${name} status is now: NodeNotReady`,
      );
      this.#markPending.add(name);
    }
    if (ready === 'True') this.#markPending.delete(name);
    if (this.#markPending.has(name)) {
      await this.#markPodsNotReady(name, nowMs);
      this.#markPending.delete(name);
    }
  }

  /** Sets the Ready condition of the node's pods False (kube's `MarkPodsNotReady`). */
  async #markPodsNotReady(node: string, nowMs: number): Promise<void> {
    let failure: Error | undefined;
    for (const pod of podsOnNode(this.#d.pods.store, node)) {
      const ready = pod.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready === undefined || ready.status === 'False') continue;
      try {
        await this.#d.podClient.patch(
          pod.metadata.name ?? '',
          {
            status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: rfc3339(nowMs) }] },
          },
          { type: 'strategic', subresource: 'status', namespace: pod.metadata.namespace ?? '' },
        );
        this.#d.recorder.event(
          typed(pod, 'v1', 'Pod'),
          'Warning',
          'NodeNotReady',
          'NodeNotReady',
          'Node is not ready',
        );
      } catch (err) {
        failure = err instanceof Error ? err : new Error(JSON.stringify(err));
        this.#d.ctx.log.warn(
          `pod ${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}: marking not ready failed: ${describe(err)}`,
        );
      }
    }
    if (failure !== undefined) throw failure;
  }
}
