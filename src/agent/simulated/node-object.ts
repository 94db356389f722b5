/**
 * The Node object a simulated node registers and the status it reports, as a kubelet v1.33
 * would: the well-known labels, capacity = allocatable, the four conditions with kubelet's
 * reasons and messages, InternalIP and Hostname addresses, the kubelet endpoint, nodeInfo.
 */
import { createHash } from 'node:crypto';
import type { Node, NodeCondition, NodeStatus } from '../../api/types/core-v1.js';
import { SIM } from './annotations.js';
import { nodeInternalIp } from './ip-pool.js';
import type { SimulatedNodesOptions } from './options.js';
import { rfc3339 } from './pod-status.js';

/** The name of the node in `slot`. */
export function nodeName(options: SimulatedNodesOptions, slot: number): string {
  return `${options.nodeNamePrefix}${slot}`;
}

/** The Node to create for `slot` (status is posted separately, as kubelet does). */
export function nodeForRegistration(options: SimulatedNodesOptions, slot: number): Node {
  const name = nodeName(options, slot);
  const node: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        ...options.labels,
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        [SIM.nodeLabel]: 'true',
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: {},
  };
  if (options.taints.length > 0) node.spec = { taints: options.taints.map((t) => ({ ...t })) };
  return node;
}

function uuidOf(text: string): string {
  const h = createHash('sha256').update(text).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

function condition(
  type: string,
  status: 'True' | 'False',
  reason: string,
  message: string,
  old: readonly NodeCondition[],
  now: string,
): NodeCondition {
  const prev = old.find((c) => c.type === type);
  return {
    type,
    status,
    lastHeartbeatTime: now,
    lastTransitionTime:
      prev?.status === status && prev.lastTransitionTime !== undefined ? prev.lastTransitionTime : now,
    reason,
    message,
  };
}

/** What a node's status depends on besides its options. */
export interface NodeStatusInput {
  readonly slot: number;
  readonly ready: boolean;
  /** The node as last seen (for transition times); undefined before registration. */
  readonly current: Node | undefined;
  /** Boot time of this agent (for bootID), ms. */
  readonly bootMs: number;
}

/** The status a simulated node posts at `nowMs`. */
export function nodeStatus(
  options: SimulatedNodesOptions,
  input: NodeStatusInput,
  nowMs: number,
): NodeStatus {
  const name = nodeName(options, input.slot);
  const now = rfc3339(nowMs);
  const old = input.current?.status?.conditions ?? [];
  const resources = {
    cpu: options.cpu,
    'ephemeral-storage': options.ephemeralStorage,
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: options.memory,
    pods: String(options.pods),
  };
  return {
    capacity: resources,
    allocatable: { ...resources },
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
        old,
        now,
      ),
      condition(
        'DiskPressure',
        'False',
        'KubeletHasNoDiskPressure',
        'kubelet has no disk pressure',
        old,
        now,
      ),
      condition(
        'PIDPressure',
        'False',
        'KubeletHasSufficientPID',
        'kubelet has sufficient PID available',
        old,
        now,
      ),
      input.ready
        ? condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', old, now)
        : condition(
            'Ready',
            'False',
            'KubeletNotReady',
            `simulated node told to report NotReady (annotation ${SIM.ready}=false)`,
            old,
            now,
          ),
    ],
    addresses: [
      { type: 'InternalIP', address: nodeInternalIp(input.slot) },
      { type: 'Hostname', address: name },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: createHash('sha256').update(`machine/${name}`).digest('hex').slice(0, 32),
      systemUUID: uuidOf(`system/${name}`),
      bootID: uuidOf(`boot/${name}/${input.bootMs}`),
      kernelVersion: '6.1.0-capstan-simulated',
      osImage: 'Capstan simulated node',
      containerRuntimeVersion: 'sim://1.0.0',
      kubeletVersion: options.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
  };
}

/** Whether the posted status differs from the current one in anything but heartbeat times. */
export function nodeStatusChanged(current: Node | undefined, next: NodeStatus): boolean {
  const cur = current?.status;
  if (cur === undefined) return true;
  const strip = (conds: readonly NodeCondition[] | undefined): string =>
    JSON.stringify(
      (conds ?? [])
        .map((c) => [c.type, c.status, c.reason, c.message])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  const mine = new Set((next.conditions ?? []).map((c) => c.type));
  const curMine = (cur.conditions ?? []).filter((c) => mine.has(c.type));
  return (
    strip(curMine) !== strip(next.conditions) ||
    !sameMap(cur.capacity, next.capacity) ||
    !sameMap(cur.allocatable, next.allocatable) ||
    JSON.stringify(cur.addresses) !== JSON.stringify(next.addresses) ||
    cur.nodeInfo?.kubeletVersion !== next.nodeInfo?.kubeletVersion
  );
}

function sameMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => a?.[k] === b?.[k]);
}
