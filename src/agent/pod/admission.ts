/**
 * Node admission, kubelet's predicate admit handler: a pod that reaches the node (bound by a
 * scheduler, or named to it by `spec.nodeName` with no scheduler at all) and does not fit it is
 * rejected before anything of it runs. The worker then fails the pod with the reason and
 * "Pod was rejected: <message>", and a Warning event with the same reason says why.
 *
 * The checks and their order are kubelet's (`AdmissionCheck`, then NoExecute taints), over the
 * scheduler's node and pod accounting as kubelet's are; only the first failure is reported:
 * 1. resources: the pod count, cpu (millicores), memory and ephemeral storage (bytes), then
 *    extended resources the node has, against allocatable less the other admitted pods'
 *    requests: `OutOfpods`, `OutOfcpu`, `OutOfmemory`, `OutOfephemeral-storage`,
 *    `OutOf<name>`;
 * 2. the nodeSelector and required node affinity against the node's labels (`NodeAffinity`);
 * 3. host ports in use by another admitted pod (`NodePorts`);
 * 4. a NoExecute taint of the node the pod does not tolerate (`TaintToleration`).
 *
 * Before these, as kubelet's sysctl admit handler runs before its predicates, the agent checks the
 * pod's sysctls (src/agent/pod/sysctls.ts, `SysctlForbidden`), static pods included.
 *
 * The agent asks this of API pods only: a static pod is the node's own, never refused here
 * (kubelet checks it too, and makes room for a critical one by evicting others).
 */
import type { Node, Pod } from '../../api/types/core-v1.js';
import { NodeInfo } from '../../scheduler/node-info.js';
import { PodInfo } from '../../scheduler/pod-info.js';
import { requiredNodePredicate } from '../../scheduler/plugins/node-affinity.js';
import { firstUntolerated } from '../../scheduler/plugins/taints.js';
import { isScalarResourceName } from '../../scheduler/resources.js';

/** Why a pod may not run on this node. */
export interface Rejection {
  /** The event's and the status's reason (`OutOfcpu`, `NodeAffinity`, ...). */
  readonly reason: string;
  /** The event's message; the status's message is "Pod was rejected: " and this. */
  readonly message: string;
}

const NO_EXECUTE: ReadonlySet<string> = new Set(['NoExecute']);

/** The pod, checked against `node` and the pods already admitted there (`others`). */
export function admitPod(pod: Pod, node: Node, others: readonly Pod[]): Rejection | undefined {
  const info = new NodeInfo(node.metadata.name ?? '');
  info.setNode(node);
  for (const other of others) info.addPod(new PodInfo(other));
  const candidate = new PodInfo(pod);
  return (
    insufficientResource(candidate, info) ??
    (requiredNodePredicate(pod)?.(node) === false
      ? predicate('NodeAffinity', "node(s) didn't match Pod's node affinity/selector")
      : undefined) ??
    (candidate.hostPorts.some((p) => info.portInUse(p.ip, p.protocol, p.port))
      ? predicate('NodePorts', "node(s) didn't have free ports for the requested pod ports")
      : undefined) ??
    (firstUntolerated(info.taints, pod.spec?.tolerations ?? [], NO_EXECUTE)
      ? predicate('TaintToleration', "node(s) had taints that the pod didn't tolerate")
      : undefined)
  );
}

function predicate(name: string, description: string): Rejection {
  return { reason: name, message: `Predicate ${name} failed: ${description}` };
}

function outOf(name: string, requested: number, used: number, capacity: number): Rejection {
  return {
    reason: `OutOf${name}`,
    message: `Node didn't have enough resource: ${name}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  };
}

/** The first resource the pod needs more of than the node has left, in kube's Fits order. */
function insufficientResource(pod: PodInfo, node: NodeInfo): Rejection | undefined {
  const want = pod.requests;
  const alloc = node.allocatable;
  const used = node.requested;
  if (node.pods.size + 1 > alloc.allowedPodNumber)
    return outOf('pods', 1, node.pods.size, alloc.allowedPodNumber);
  for (const name of ['cpu', 'memory', 'ephemeral-storage']) {
    const w = want.get(name);
    if (w > 0 && w > alloc.get(name) - used.get(name)) return outOf(name, w, used.get(name), alloc.get(name));
  }
  for (const name of [...(want.scalar?.keys() ?? [])].sort()) {
    const w = want.getScalar(name);
    // An extended resource the node does not report at all is a cluster-level one, not the node's
    // to refuse: kubelet drops those requests before the check. Hugepages are always the node's.
    if (w === 0 || (isExtended(name) && alloc.scalar?.has(name) !== true)) continue;
    if (w > alloc.getScalar(name) - used.getScalar(name))
      return outOf(name, w, used.getScalar(name), alloc.getScalar(name));
  }
  return undefined;
}

/** An extended resource: a scalar resource with a domain (hugepages and volume limits are not). */
function isExtended(name: string): boolean {
  return isScalarResourceName(name) && name.includes('/');
}
