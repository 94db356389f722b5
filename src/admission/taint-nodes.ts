/**
 * kube's TaintNodesByCondition: a new Node gets the `node.kubernetes.io/not-ready:NoSchedule`
 * taint (the node lifecycle controller removes it once the node is Ready).
 */
import type { AdmissionPlugin } from './types.js';
import { isCore, objectList, specOf } from './pod-spec.js';

const NOT_READY = 'node.kubernetes.io/not-ready';

export function taintNodesByCondition(): AdmissionPlugin {
  return {
    name: 'TaintNodesByCondition',
    handles: (a) => isCore(a, 'Node') && a.operation === 'CREATE' && a.subresource === undefined,
    admit: (a) => {
      if (a.object === undefined) return;
      const spec = specOf(a.object, true);
      const taints = objectList(spec['taints']);
      if (taints.some((t) => t['key'] === NOT_READY && t['effect'] === 'NoSchedule')) return;
      spec['taints'] = [...taints, { key: NOT_READY, effect: 'NoSchedule' }];
    },
  };
}
