/**
 * NetworkPolicy semantics (networking.k8s.io/v1), as a pure computation: for each pod on this
 * node, whether it is isolated for ingress and for egress, and the traffic its policies allow.
 *
 * - A pod is isolated for a direction when a policy in its namespace selects it and lists that
 *   direction in `policyTypes` (default: Ingress, plus Egress when the policy has egress rules).
 * - Allowed traffic is the union of the rules of every policy selecting it: a rule with no
 *   peers allows any address, a rule with no ports any port; peers are pods (by pod selector in
 *   the policy's namespace, by namespace selector, or both) and ipBlocks with exceptions.
 * - Named ports resolve against the destination pod's container ports: for ingress that is the
 *   pod itself; for egress each peer pod (so an egress rule with a named port and an ipBlock
 *   peer cannot be enforced, and is reported as such).
 */
import type { Namespace, Pod } from '../api/types/core-v1.js';
import type { LabelSelector } from '../api/types/meta-v1.js';
import type { NetworkPolicy, NetworkPolicyPeer, NetworkPolicyPort } from '../api/types/networking-v1.js';

/** One allowed port: a protocol with a port or range; no port: every port of the protocol. */
export interface AllowedPort {
  readonly protocol: 'tcp' | 'udp' | 'sctp';
  readonly port?: number;
  readonly endPort?: number;
}

/** One allow rule: peers (undefined: any address) and ports (undefined: any). */
export interface AllowRule {
  readonly ips?: readonly string[];
  readonly blocks?: readonly { readonly cidr: string; readonly except: readonly string[] }[];
  readonly ports?: readonly AllowedPort[];
}

/** What the policies say of one local pod. */
export interface PodPolicy {
  readonly ip: string;
  readonly ingress?: readonly AllowRule[];
  readonly egress?: readonly AllowRule[];
}

/** A policy part that cannot be enforced, for an event on the policy. */
export interface Unenforceable {
  readonly policy: NetworkPolicy;
  readonly message: string;
}

/** True when `labels` match `selector` (an empty selector matches everything). */
export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (selector === undefined) return true;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const key = e.key ?? '';
    const has = Object.hasOwn(l, key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(l[key] ?? '')) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[key] ?? '')) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

function protocolOf(p: string | undefined): AllowedPort['protocol'] {
  const v = (p ?? 'TCP').toLowerCase();
  return v === 'udp' ? 'udp' : v === 'sctp' ? 'sctp' : 'tcp';
}

/** The pod's container port of this name and protocol. */
function namedPort(pod: Pod, name: string, protocol: string): number | undefined {
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? [])
      if (p.name === name && protocolOf(p.protocol) === protocol) return p.containerPort;
  }
  return undefined;
}

/** Inputs of {@link computePolicies}. */
export interface PolicyWorld {
  readonly pods: readonly Pod[];
  readonly namespaces: readonly Namespace[];
  readonly policies: readonly NetworkPolicy[];
  /** Pods on this node (by name, with an IP) are the ones enforced here. */
  readonly nodeName: string;
}

const podIp = (p: Pod): string | undefined => p.status?.podIP ?? undefined;
const running = (p: Pod): boolean =>
  podIp(p) !== undefined && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/** The policies of every local pod, and what cannot be enforced. */
export function computePolicies(world: PolicyWorld): { pods: PodPolicy[]; unenforceable: Unenforceable[] } {
  const nsLabels = new Map(world.namespaces.map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}]));
  const livePods = world.pods.filter(running);
  const unenforceable: Unenforceable[] = [];
  const reported = new Set<string>();
  const report = (policy: NetworkPolicy, message: string): void => {
    const key = `${policy.metadata.namespace ?? ''}/${policy.metadata.name ?? ''}:${message}`;
    if (!reported.has(key)) unenforceable.push({ policy, message });
    reported.add(key);
  };

  const peerPods = (policy: NetworkPolicy, peer: NetworkPolicyPeer): Pod[] => {
    if (peer.namespaceSelector === undefined) {
      return livePods.filter(
        (p) =>
          p.metadata.namespace === policy.metadata.namespace &&
          matchesSelector(peer.podSelector, p.metadata.labels ?? {}),
      );
    }
    return livePods.filter(
      (p) =>
        matchesSelector(peer.namespaceSelector, nsLabels.get(p.metadata.namespace ?? '')) &&
        matchesSelector(peer.podSelector, p.metadata.labels ?? {}),
    );
  };

  const rulesOf = (
    policy: NetworkPolicy,
    rules: readonly { peers?: NetworkPolicyPeer[]; ports?: NetworkPolicyPort[] }[],
    portsPod: Pod | undefined,
  ): AllowRule[] => {
    const out: AllowRule[] = [];
    for (const r of rules) {
      const named = (r.ports ?? []).some((p) => typeof p.port === 'string');
      const resolvePorts = (target: Pod | undefined): AllowedPort[] | undefined => {
        if (r.ports === undefined || r.ports.length === 0) return undefined;
        const ports: AllowedPort[] = [];
        for (const p of r.ports) {
          const protocol = protocolOf(p.protocol);
          if (p.port === undefined) ports.push({ protocol });
          else if (typeof p.port === 'number')
            ports.push({
              protocol,
              port: p.port,
              ...(p.endPort === undefined ? {} : { endPort: p.endPort }),
            });
          else {
            const n = target === undefined ? undefined : namedPort(target, p.port, protocol);
            if (n !== undefined) ports.push({ protocol, port: n });
          }
        }
        return ports;
      };
      const peers = r.peers ?? [];
      if (peers.length === 0) {
        if (named && portsPod === undefined)
          report(policy, 'an egress rule with a named port and no peers cannot be enforced');
        const ports = resolvePorts(portsPod);
        if (ports === undefined || ports.length > 0) out.push(ports === undefined ? {} : { ports });
        continue;
      }
      const blocks = peers.flatMap((p) =>
        p.ipBlock === undefined ? [] : [{ cidr: p.ipBlock.cidr ?? '', except: p.ipBlock.except ?? [] }],
      );
      if (blocks.length > 0) {
        if (named && portsPod === undefined)
          report(policy, 'an egress rule with a named port and an ipBlock cannot be enforced');
        const ports = resolvePorts(portsPod);
        if (ports === undefined || ports.length > 0)
          out.push({ blocks, ...(ports === undefined ? {} : { ports }) });
      }
      const pods = peers.filter((p) => p.ipBlock === undefined).flatMap((p) => peerPods(policy, p));
      if (portsPod !== undefined || !named) {
        const ips = pods.map((p) => podIp(p) as string);
        const ports = resolvePorts(portsPod);
        if (ips.length > 0 && (ports === undefined || ports.length > 0))
          out.push({ ips, ...(ports === undefined ? {} : { ports }) });
      } else {
        // egress with named ports: each peer pod with its own port numbers
        for (const pod of pods) {
          const ports = resolvePorts(pod);
          if (ports !== undefined && ports.length > 0) out.push({ ips: [podIp(pod) as string], ports });
        }
      }
    }
    return out;
  };

  const pods: PodPolicy[] = [];
  for (const pod of livePods) {
    if (pod.spec?.nodeName !== world.nodeName || pod.spec?.hostNetwork === true) continue;
    const selecting = world.policies.filter(
      (np) =>
        np.metadata.namespace === pod.metadata.namespace &&
        matchesSelector(np.spec?.podSelector ?? {}, pod.metadata.labels ?? {}),
    );
    if (selecting.length === 0) continue;
    let ingress: AllowRule[] | undefined;
    let egress: AllowRule[] | undefined;
    for (const np of selecting) {
      const types =
        np.spec?.policyTypes ?? (np.spec?.egress !== undefined ? ['Ingress', 'Egress'] : ['Ingress']);
      if (types.includes('Ingress')) {
        const rules = (np.spec?.ingress ?? []).map((r) => ({
          ...(r.from === undefined ? {} : { peers: r.from }),
          ...(r.ports === undefined ? {} : { ports: r.ports }),
        }));
        ingress = [...(ingress ?? []), ...rulesOf(np, rules, pod)];
      }
      if (types.includes('Egress')) {
        const rules = (np.spec?.egress ?? []).map((r) => ({
          ...(r.to === undefined ? {} : { peers: r.to }),
          ...(r.ports === undefined ? {} : { ports: r.ports }),
        }));
        egress = [...(egress ?? []), ...rulesOf(np, rules, undefined)];
      }
    }
    pods.push({
      ip: podIp(pod) as string,
      ...(ingress === undefined ? {} : { ingress }),
      ...(egress === undefined ? {} : { egress }),
    });
  }
  return { pods, unenforceable };
}
