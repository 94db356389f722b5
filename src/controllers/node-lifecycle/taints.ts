/**
 * The taints the node lifecycle controller keeps on nodes from their conditions: NoSchedule
 * for Ready False/Unknown, pressure, network unavailability and `spec.unschedulable`; NoExecute
 * `not-ready` / `unreachable` for taint-based eviction (with `timeAdded`). Other taints are
 * left as they are.
 */
import type { Node, Taint } from '../../api/types/core-v1.js';
import { readyCondition } from './health.js';

export const NOT_READY = 'node.kubernetes.io/not-ready';
export const UNREACHABLE = 'node.kubernetes.io/unreachable';
export const UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const PID_PRESSURE = 'node.kubernetes.io/pid-pressure';
export const NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';

/** The NoSchedule taint keys this controller owns. */
const NO_SCHEDULE_KEYS = [
  NOT_READY,
  UNREACHABLE,
  UNSCHEDULABLE,
  MEMORY_PRESSURE,
  DISK_PRESSURE,
  PID_PRESSURE,
  NETWORK_UNAVAILABLE,
];

function conditionStatus(node: Node, type: string): string | undefined {
  return node.status?.conditions?.find((c) => c.type === type)?.status;
}

/** The NoSchedule taint keys a node's conditions call for. */
export function wantedNoSchedule(node: Node): string[] {
  const keys: string[] = [];
  const ready = readyCondition(node)?.status;
  if (ready === 'False') keys.push(NOT_READY);
  if (ready === 'Unknown') keys.push(UNREACHABLE);
  if (conditionStatus(node, 'MemoryPressure') === 'True') keys.push(MEMORY_PRESSURE);
  if (conditionStatus(node, 'DiskPressure') === 'True') keys.push(DISK_PRESSURE);
  if (conditionStatus(node, 'PIDPressure') === 'True') keys.push(PID_PRESSURE);
  if (conditionStatus(node, 'NetworkUnavailable') === 'True') keys.push(NETWORK_UNAVAILABLE);
  if (node.spec?.unschedulable === true) keys.push(UNSCHEDULABLE);
  return keys;
}

/** The NoExecute taint key a node's Ready condition calls for, if any. */
export function wantedNoExecute(node: Node): string | undefined {
  const ready = readyCondition(node)?.status;
  if (ready === 'False') return NOT_READY;
  if (ready === 'Unknown') return UNREACHABLE;
  return undefined;
}

/**
 * The node's taints with this controller's brought in line with its conditions, or
 * `undefined` when they already are. `'noSchedule'` leaves the NoExecute taints as they are (kube's
 * `doNoScheduleTaintingPass`, run on every change of a node; the NoExecute ones follow in the
 * periodic health pass).
 */
export function reconcileTaints(
  node: Node,
  now: string,
  effects: 'all' | 'noSchedule' = 'all',
): Taint[] | undefined {
  const current = node.spec?.taints ?? [];
  const noSchedule = new Set(wantedNoSchedule(node));
  const noExecute = effects === 'all' ? wantedNoExecute(node) : undefined;
  const out: Taint[] = [];
  let changed = false;
  for (const t of current) {
    const owned =
      (t.effect === 'NoSchedule' && NO_SCHEDULE_KEYS.includes(t.key ?? '')) ||
      (effects === 'all' && t.effect === 'NoExecute' && (t.key === NOT_READY || t.key === UNREACHABLE));
    if (!owned) {
      out.push(t);
      continue;
    }
    const keep = t.effect === 'NoSchedule' ? noSchedule.has(t.key ?? '') : t.key === noExecute;
    if (keep) out.push(t);
    else changed = true;
  }
  for (const key of noSchedule) {
    if (!current.some((t) => t.key === key && t.effect === 'NoSchedule')) {
      out.push({ key, effect: 'NoSchedule' });
      changed = true;
    }
  }
  if (noExecute !== undefined && !current.some((t) => t.key === noExecute && t.effect === 'NoExecute')) {
    out.push({ key: noExecute, effect: 'NoExecute', timeAdded: now });
    changed = true;
  }
  return changed ? out : undefined;
}
