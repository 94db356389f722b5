/**
 * The small plugins: PrioritySort, SchedulingGates, NodeUnschedulable, NodeName and NodePorts,
 * each a few lines of kube's semantics.
 */
import type { Plugin } from '../framework/types.js';
import { Code, unresolvable, unschedulable } from '../framework/status.js';
import { PLUGIN } from './names.js';
import { toleratedByAny } from './taints.js';

const NODE_ADD_UPDATE = [
  { resource: 'Node', action: 'Add' },
  { resource: 'Node', action: 'Update' },
] as const;

/** PrioritySort: higher `spec.priority` first, then earlier arrival. */
export function prioritySort(): Plugin {
  return {
    name: PLUGIN.PrioritySort,
    less(a, b) {
      const pa = a.info.priority;
      const pb = b.info.priority;
      return pa > pb || (pa === pb && a.timestamp < b.timestamp);
    },
  };
}

/** The message of the PodScheduled condition of a gated pod. */
export const GATED_MESSAGE = 'Scheduling is blocked due to non-empty scheduling gates';

/** SchedulingGates: a pod with `spec.schedulingGates` waits outside the active queue. */
export function schedulingGates(): Plugin {
  return {
    name: PLUGIN.SchedulingGates,
    events: [{ resource: 'Pod', action: 'Update' }],
    preEnqueue(pod) {
      const gates = pod.spec?.schedulingGates ?? [];
      if (gates.length === 0) return undefined;
      return {
        code: Code.UnschedulableAndUnresolvable,
        reasons: [`waiting for scheduling gates: [${gates.map((g) => g.name).join(' ')}]`],
      };
    },
  };
}

/** The taint NodeUnschedulable lets a pod tolerate. */
const UNSCHEDULABLE_TAINT = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };

/** NodeUnschedulable: cordoned nodes take only pods tolerating the unschedulable taint. */
export function nodeUnschedulable(): Plugin {
  return {
    name: PLUGIN.NodeUnschedulable,
    events: NODE_ADD_UPDATE,
    filter(_state, pod, node) {
      if (node.node === undefined) return unresolvable('node(s) had unknown conditions');
      if (node.node.spec?.unschedulable !== true) return undefined;
      if (toleratedByAny(pod.pod.spec?.tolerations ?? [], UNSCHEDULABLE_TAINT)) return undefined;
      return unresolvable('node(s) were unschedulable');
    },
  };
}

/** NodeName: a pod naming a node fits only there. */
export function nodeName(): Plugin {
  return {
    name: PLUGIN.NodeName,
    events: [{ resource: 'Node', action: 'Add' }],
    filter(_state, pod, node) {
      const want = pod.pod.spec?.nodeName;
      if (want === undefined || want === '' || want === node.name) return undefined;
      return unresolvable("node(s) didn't match the requested node name");
    },
  };
}

/** NodePorts: host ports must be free on the node. */
export function nodePorts(): Plugin {
  return {
    name: PLUGIN.NodePorts,
    events: [
      { resource: 'Pod', action: 'Delete' },
      { resource: 'Node', action: 'Add' },
    ],
    filter(_state, pod, node) {
      for (const p of pod.hostPorts) {
        if (node.portInUse(p.ip, p.protocol, p.port)) {
          return unschedulable("node(s) didn't have free ports for the requested pod ports");
        }
      }
      return undefined;
    },
  };
}
