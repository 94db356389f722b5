/**
 * NodeResourcesFit: the pod's requests must fit in what the node has left (allocatable minus the
 * requests of the pods there), pods count against allocatable `pods`; the score is
 * LeastAllocated (default), MostAllocated or RequestedToCapacityRatio over the configured
 * resources. A request larger than the node's whole allocatable is unresolvable (preemption
 * cannot help), as in kube 1.33.
 */
import { MAX_NODE_SCORE, type Plugin } from '../framework/types.js';
import { Code, type MaybeStatus } from '../framework/status.js';
import type { NodeInfo } from '../node-info.js';
import type { PodInfo } from '../pod-info.js';
import { isScalarResourceName, type Resource } from '../resources.js';
import { PLUGIN } from './names.js';

/** One resource of a scoring strategy. */
export interface ResourceSpec {
  readonly name: string;
  readonly weight: number;
}

/** The default scored resources: cpu and memory, weight 1 each. */
export const DEFAULT_RESOURCES: readonly ResourceSpec[] = [
  { name: 'cpu', weight: 1 },
  { name: 'memory', weight: 1 },
];

interface Insufficient {
  readonly reason: string;
  readonly unresolvable: boolean;
}

function check(name: string, want: number, alloc: number, used: number, out: Insufficient[]): void {
  if (want > 0 && want > alloc - used)
    out.push({ reason: `Insufficient ${name}`, unresolvable: want > alloc });
}

/** Why the pod does not fit the node's free resources (empty when it fits). */
export function insufficientResources(
  pod: PodInfo,
  node: NodeInfo,
  ignored: (name: string) => boolean = () => false,
): Insufficient[] {
  const out: Insufficient[] = [];
  if (node.pods.size + 1 > node.allocatable.allowedPodNumber) {
    out.push({ reason: 'Too many pods', unresolvable: false });
  }
  const r = pod.requests;
  const a = node.allocatable;
  const u = node.requested;
  check('cpu', r.milliCPU, a.milliCPU, u.milliCPU, out);
  check('memory', r.memory, a.memory, u.memory, out);
  check('ephemeral-storage', r.ephemeralStorage, a.ephemeralStorage, u.ephemeralStorage, out);
  if (r.scalar !== undefined) {
    for (const name of [...r.scalar.keys()].sort()) {
      const want = r.getScalar(name);
      if (want === 0 || ignored(name)) continue;
      check(name, want, a.getScalar(name), u.getScalar(name), out);
    }
  }
  return out;
}

/**
 * True when the pod asks for no extended resource and fits the node by pod count, cpu, memory
 * and ephemeral storage: the common case, decided without building {@link insufficientResources}'
 * list (the filter runs for hundreds of nodes per pod).
 */
export function fitsPlainly(pod: PodInfo, node: NodeInfo): boolean {
  const r = pod.requests;
  const a = node.allocatable;
  const u = node.requested;
  return (
    r.scalar === undefined &&
    node.pods.size + 1 <= a.allowedPodNumber &&
    fitsOne(r.milliCPU, a.milliCPU, u.milliCPU) &&
    fitsOne(r.memory, a.memory, u.memory) &&
    fitsOne(r.ephemeralStorage, a.ephemeralStorage, u.ephemeralStorage)
  );
}

/** The negation of {@link check}'s shortfall test. */
function fitsOne(want: number, alloc: number, used: number): boolean {
  return !(want > 0 && want > alloc - used);
}

/** The status for a list of insufficient resources. */
export function fitStatus(list: readonly Insufficient[]): MaybeStatus {
  if (list.length === 0) return undefined;
  const code = list.some((i) => i.unresolvable) ? Code.UnschedulableAndUnresolvable : Code.Unschedulable;
  return { code, reasons: list.map((i) => i.reason) };
}

/** The node's allocatable and requested amount of a resource, counting the pod. */
export function allocatableAndRequested(
  node: NodeInfo,
  pod: PodInfo,
  name: string,
  nonZero: boolean,
): [number, number] {
  const alloc = node.allocatable.get(name);
  const podReq: Resource = nonZero ? pod.nonZeroRequests : pod.requests;
  const nodeReq: Resource =
    nonZero && (name === 'cpu' || name === 'memory') ? node.nonZeroRequested : node.requested;
  return [alloc, nodeReq.get(name) + podReq.get(name)];
}

type Scorer = (requested: number, allocatable: number) => number;

const leastAllocated: Scorer = (req, alloc) =>
  req > alloc ? 0 : Math.trunc(((alloc - req) * MAX_NODE_SCORE) / alloc);
const mostAllocated: Scorer = (req, alloc) => (req > alloc ? 0 : Math.trunc((req * MAX_NODE_SCORE) / alloc));

interface Shape {
  readonly utilization: number;
  readonly score: number;
}

function ratioScorer(shape: readonly Shape[]): Scorer {
  // Shape scores are 0..10 in the config; scaled to 0..100.
  const pts = [...shape].sort((x, y) => x.utilization - y.utilization);
  return (req, alloc) => {
    const p = alloc === 0 ? 100 : Math.trunc((req * 100) / alloc);
    let prev: Shape | undefined;
    for (const s of pts) {
      if (p <= s.utilization) {
        if (prev === undefined) return s.score * 10;
        const frac = (p - prev.utilization) / (s.utilization - prev.utilization);
        return Math.trunc((prev.score + (s.score - prev.score) * frac) * 10);
      }
      prev = s;
    }
    return (prev?.score ?? 0) * 10;
  };
}

/** The plugin; args as kube's NodeResourcesFitArgs. */
export function nodeResourcesFit(args: Record<string, unknown>): Plugin {
  const ignoredNames = new Set((args['ignoredResources'] as string[] | undefined) ?? []);
  const ignoredGroups = new Set((args['ignoredResourceGroups'] as string[] | undefined) ?? []);
  const ignored = (name: string): boolean =>
    isScalarResourceName(name) && (ignoredNames.has(name) || ignoredGroups.has(name.split('/')[0] ?? ''));
  const strategy = (args['scoringStrategy'] as Record<string, unknown> | undefined) ?? {};
  const resources = (strategy['resources'] as ResourceSpec[] | undefined) ?? DEFAULT_RESOURCES;
  const type = (strategy['type'] as string | undefined) ?? 'LeastAllocated';
  const shape = (strategy['requestedToCapacityRatio'] as { shape?: Shape[] } | undefined)?.shape ?? [];
  const scorer =
    type === 'MostAllocated'
      ? mostAllocated
      : type === 'RequestedToCapacityRatio'
        ? ratioScorer(shape)
        : leastAllocated;
  return {
    name: PLUGIN.NodeResourcesFit,
    events: [
      { resource: 'Pod', action: 'Delete' },
      { resource: 'Node', action: 'Add' },
      { resource: 'Node', action: 'Update' },
      { resource: 'Pod', action: 'Update' },
    ],
    filter(_state, pod, node) {
      return fitsPlainly(pod, node) ? undefined : fitStatus(insufficientResources(pod, node, ignored));
    },
    score(_state, pod, node) {
      let total = 0;
      let weights = 0;
      for (const r of resources) {
        const [alloc, req] = allocatableAndRequested(node, pod, r.name, true);
        if (alloc === 0) continue;
        total += scorer(req, alloc) * r.weight;
        weights += r.weight;
      }
      return weights === 0 ? 0 : Math.trunc(total / weights);
    },
  };
}
