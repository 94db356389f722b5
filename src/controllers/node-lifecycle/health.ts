/**
 * Node health as kube's node lifecycle controller judges it: a node is heard from when its
 * Ready condition's heartbeat or its `kube-node-lease` Lease's renewTime moves; past the grace
 * period without that, its Ready and pressure conditions turn Unknown.
 */
import type { Node, NodeCondition } from '../../api/types/core-v1.js';
import type { Lease } from '../../api/types/coordination-v1.js';

/** The conditions turned Unknown when a node goes silent. */
export const WATCHED_CONDITIONS = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'] as const;

/** What the controller last saw of a node. */
export interface NodeProbe {
  /** When (controller clock, ms) the node was last heard from. */
  probeMs: number;
  heartbeat: string;
  leaseRenew: string;
}

/** A node's Ready condition, if any. */
export function readyCondition(node: Node): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === 'Ready');
}

/**
 * Updates `probe` with what `node` and its `lease` say now and returns it (a new record the
 * first time: a node never heard from counts from its creation).
 */
export function observe(
  node: Node,
  lease: Lease | undefined,
  probe: NodeProbe | undefined,
  nowMs: number,
): NodeProbe {
  const heartbeat = readyCondition(node)?.lastHeartbeatTime ?? '';
  const leaseRenew = lease?.spec?.renewTime ?? '';
  if (probe === undefined) {
    const created = Date.parse(node.metadata.creationTimestamp ?? '');
    const start = readyCondition(node) === undefined && Number.isFinite(created) ? created : nowMs;
    return { probeMs: start, heartbeat, leaseRenew };
  }
  if (heartbeat !== probe.heartbeat) {
    probe.heartbeat = heartbeat;
    probe.probeMs = nowMs;
  }
  if (leaseRenew !== '' && leaseRenew !== probe.leaseRenew) {
    if (probe.leaseRenew === '' || Date.parse(leaseRenew) > Date.parse(probe.leaseRenew))
      probe.probeMs = nowMs;
    probe.leaseRenew = leaseRenew;
  }
  return probe;
}

/**
 * The node's conditions once it has been silent past its grace period (the startup grace when
 * it never posted Ready), or `undefined` when nothing is to change.
 */
export function silentConditions(
  node: Node,
  probe: NodeProbe,
  nowMs: number,
  gracePeriodMs: number,
  startupGracePeriodMs: number,
): NodeCondition[] | undefined {
  const grace = readyCondition(node) === undefined ? startupGracePeriodMs : gracePeriodMs;
  if (nowMs <= probe.probeMs + grace) return undefined;
  const now = new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const conditions = [...(node.status?.conditions ?? [])].map((c) => ({ ...c }));
  let changed = false;
  for (const type of WATCHED_CONDITIONS) {
    const c = conditions.find((x) => x.type === type);
    if (c === undefined) {
      conditions.push({
        type,
        status: 'Unknown',
        reason: 'NodeStatusNeverUpdated',
        message: 'Kubelet never posted node status.',
        lastHeartbeatTime: node.metadata.creationTimestamp ?? now,
        lastTransitionTime: now,
      });
      changed = true;
    } else if (c.status !== 'Unknown') {
      c.status = 'Unknown';
      c.reason = 'NodeStatusUnknown';
      c.message = 'Kubelet stopped posting node status.';
      c.lastTransitionTime = now;
      changed = true;
    }
  }
  return changed ? conditions : undefined;
}
