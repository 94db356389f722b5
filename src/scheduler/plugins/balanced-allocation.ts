/**
 * NodeResourcesBalancedAllocation: prefers nodes where, with the pod placed, the used fractions
 * of cpu and memory (or the configured resources) are close to each other: score =
 * (1 − standard deviation of the fractions) × 100. Pods requesting nothing are skipped.
 */
import { MAX_NODE_SCORE, type Plugin } from '../framework/types.js';
import { SKIP } from '../framework/status.js';
import { PLUGIN } from './names.js';
import { DEFAULT_RESOURCES, allocatableAndRequested, type ResourceSpec } from './node-resources-fit.js';

/** The plugin; args as kube's NodeResourcesBalancedAllocationArgs. */
export function balancedAllocation(args: Record<string, unknown>): Plugin {
  const resources = (args['resources'] as ResourceSpec[] | undefined) ?? DEFAULT_RESOURCES;
  return {
    name: PLUGIN.NodeResourcesBalancedAllocation,
    events: [
      { resource: 'Pod', action: 'Delete' },
      { resource: 'Node', action: 'Add' },
      { resource: 'Node', action: 'Update' },
    ],
    preScore(_state, pod) {
      for (const r of resources) if (pod.requests.get(r.name) > 0) return undefined;
      return SKIP;
    },
    score(_state, pod, node) {
      const fractions: number[] = [];
      for (const r of resources) {
        const [alloc, req] = allocatableAndRequested(node, pod, r.name, false);
        if (alloc === 0) continue;
        fractions.push(Math.min(1, req / alloc));
      }
      let std = 0;
      if (fractions.length === 2) {
        std = Math.abs((fractions[0] as number) - (fractions[1] as number)) / 2;
      } else if (fractions.length > 2) {
        const mean = fractions.reduce((a, b) => a + b, 0) / fractions.length;
        std = Math.sqrt(fractions.reduce((a, f) => a + (f - mean) ** 2, 0) / fractions.length);
      }
      return Math.trunc((1 - std) * MAX_NODE_SCORE);
    },
  };
}
