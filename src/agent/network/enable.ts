/**
 * Switching an agent's cluster networking on: the one call the single-node cluster makes.
 */
import type { AgentConfig } from '../config.js';

/** kube's usual DNS Service address in Capstan's default Service range (10.0.0.0/24). */
export const DEFAULT_CLUSTER_DNS = '10.0.0.10';

/** Options of {@link enableClusterNetworking}. */
export interface ClusterNetworkingOptions {
  /** The kube-dns ClusterIP, inside the server's Service range (default: the config's first `clusterDNS`, else 10.0.0.10). */
  readonly clusterDNS?: string;
  /** One kubeconfig per component (default: the agent's): `kube-proxy`, `kube-dns`, `netpol`. */
  readonly proxyKubeconfig?: string;
  readonly clusterDNSKubeconfig?: string;
  readonly networkPolicyKubeconfig?: string;
}

/**
 * The agent configuration with the Service proxy, the cluster DNS (as `kube-dns` at
 * `clusterDNS`, domain `cluster.local` unless set) and NetworkPolicy enforcement switched on.
 * The DNS's credentials must be allowed to apply Services and EndpointSlices in `kube-system`.
 */
export function enableClusterNetworking(
  config: AgentConfig,
  opts: ClusterNetworkingOptions = {},
): AgentConfig {
  const dns = opts.clusterDNS ?? config.clusterDNS[0] ?? DEFAULT_CLUSTER_DNS;
  return {
    ...config,
    clusterDNS: [dns, ...config.clusterDNS.filter((a) => a !== dns)],
    clusterDomain: config.clusterDomain || 'cluster.local',
    runProxy: true,
    runClusterDNS: true,
    runNetworkPolicy: true,
    proxyKubeconfig: opts.proxyKubeconfig ?? config.proxyKubeconfig,
    clusterDNSKubeconfig: opts.clusterDNSKubeconfig ?? config.clusterDNSKubeconfig,
    networkPolicyKubeconfig: opts.networkPolicyKubeconfig ?? config.networkPolicyKubeconfig,
  };
}
