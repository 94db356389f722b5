/**
 * The cluster networking an agent runs in-process when asked: the Service proxy (src/proxy),
 * the cluster DNS (src/dns), NetworkPolicy enforcement (src/netpol) and the routes to the other
 * nodes' pod CIDRs (pod-routes.ts, with the agent's own identity), each its own client of
 * the API with its own credentials and user agent, so the API sees (and authorizes, and
 * audits) each as a component of its own, as kube-proxy, CoreDNS and k3s's policy controller.
 *
 * The DNS listens on the node's pod gateway (the first address of its pod CIDR, on the pod
 * bridge, which is made first if the CNI plugin has not made it yet), port 53, and is published
 * as the `kube-dns` Service at the first `clusterDNS` address (kube-dns.ts), which the proxy
 * routes to it. Names outside the cluster are forwarded to the nameservers of `--resolv-conf`.
 */
import type { ClientConfig } from '../../client/index.js';
import { Client } from '../../client/index.js';
import { startClusterDns, type ClusterDns } from '../../dns/cluster-dns.js';
import { hostUpstreams } from '../../dns/forward.js';
import { startNetworkPolicies, type NetworkPolicyEnforcer } from '../../netpol/enforcer.js';
import { startProxy, type Proxy } from '../../proxy/proxier.js';
import { ensureBridge, gatewayOf } from './bridge.js';
import { ensureKubeDns } from './kube-dns.js';
import { startPodRoutes, type PodRoutes } from './pod-routes.js';

/** One component's API access. */
export interface ComponentAccess {
  /** Its server and credentials (its own identity). */
  readonly config: ClientConfig;
}

/** Options of {@link startNodeNetwork}. */
export interface NodeNetworkOptions {
  readonly nodeName: string;
  readonly nodeIP: string;
  readonly podCIDR: string;
  /** The pod bridge (the CNI conf's). */
  readonly bridge: string;
  readonly clusterDNS: readonly string[];
  readonly clusterDomain: string;
  /** The DNS forwarder's upstreams come from this file's nameservers (kubelet's `--resolv-conf`). */
  readonly resolvConf: string;
  readonly proxy?: ComponentAccess;
  readonly dns?: ComponentAccess;
  readonly networkPolicy?: ComponentAccess;
  /** The host-gw routes to the other nodes' pod CIDRs (pod-routes.ts); the agent's own identity. */
  readonly podRoutes?: ComponentAccess;
  readonly tuning?: NodeNetworkTuning;
  readonly log?: (line: string) => void;
}

/** Settings without flags, for tests and the single-node cluster. */
export interface NodeNetworkTuning {
  /** The proxy's nftables table (default `capstan-proxy`). */
  readonly proxyTable?: string;
  /** The enforcer's nftables table (default `capstan-netpol`). */
  readonly networkPolicyTable?: string;
  /** The proxy's `--cluster-cidr`. */
  readonly clusterCidr?: string;
  /** The DNS port on the pod gateway (default 53). */
  readonly dnsPort?: number;
  /** Least time between rule syncs (default 1 s). */
  readonly minSyncPeriodMs?: number;
  /** The ip command of the pod routes (default `['ip']`). */
  readonly ipCommand?: readonly string[];
  /** Remove the nftables tables (and the pod routes) on stop. */
  readonly removeRulesOnStop?: boolean;
}

/** The running components. */
export interface NodeNetwork {
  readonly proxy: Proxy | undefined;
  readonly dns: ClusterDns | undefined;
  readonly networkPolicy: NetworkPolicyEnforcer | undefined;
  readonly podRoutes: PodRoutes | undefined;
  stop(): Promise<void>;
}

/** Starts the components asked for; on a failure stops those already started and throws. */
export async function startNodeNetwork(opts: NodeNetworkOptions): Promise<NodeNetwork> {
  const log = opts.log ?? ((line: string) => console.error(line));
  let proxy: Proxy | undefined;
  let dns: ClusterDns | undefined;
  let networkPolicy: NetworkPolicyEnforcer | undefined;
  let podRoutes: PodRoutes | undefined;
  const t = opts.tuning ?? {};
  const removeRules = t.removeRulesOnStop === true;
  const stop = async (): Promise<void> => {
    const steps: [string, (() => Promise<void>) | undefined][] = [
      ['dns', dns && (() => (dns as ClusterDns).close())],
      [
        'network policy',
        networkPolicy && (() => (networkPolicy as NetworkPolicyEnforcer).close({ removeRules })),
      ],
      ['proxy', proxy && (() => (proxy as Proxy).close({ removeRules }))],
      ['pod routes', podRoutes && (() => (podRoutes as PodRoutes).close({ removeRoutes: removeRules }))],
    ];
    for (const [what, step] of steps) {
      try {
        await step?.();
      } catch (err) {
        log(`agent: stopping the ${what}: ${(err as Error).message}`);
      }
    }
  };
  try {
    if (opts.proxy !== undefined) {
      const p = opts.proxy;
      proxy = await startProxy(
        { ...p.config, userAgent: p.config.userAgent ?? 'capstan-proxy/v1.33 (linux)' },
        {
          nodeName: opts.nodeName,
          ...(t.proxyTable === undefined ? {} : { table: t.proxyTable }),
          ...(t.clusterCidr === undefined ? {} : { clusterCidr: t.clusterCidr }),
          ...(t.minSyncPeriodMs === undefined ? {} : { minSyncPeriodMs: t.minSyncPeriodMs }),
          log,
        },
      );
    }
    if (opts.networkPolicy !== undefined) {
      const n = opts.networkPolicy;
      networkPolicy = await startNetworkPolicies(
        { ...n.config, userAgent: n.config.userAgent ?? 'capstan-netpol/v1.33 (linux)' },
        {
          nodeName: opts.nodeName,
          nodeIps: [opts.nodeIP, ...(opts.podCIDR === '' ? [] : [gatewayOf(opts.podCIDR).address])],
          ...(t.networkPolicyTable === undefined ? {} : { table: t.networkPolicyTable }),
          ...(t.minSyncPeriodMs === undefined ? {} : { minSyncPeriodMs: t.minSyncPeriodMs }),
          log,
        },
      );
    }
    if (opts.podRoutes !== undefined) {
      const r = opts.podRoutes;
      podRoutes = await startPodRoutes(
        { ...r.config, userAgent: r.config.userAgent ?? 'capstan-routes/v1.33 (linux)' },
        { nodeName: opts.nodeName, ...(t.ipCommand === undefined ? {} : { ipCommand: t.ipCommand }), log },
      );
    }
    if (opts.dns !== undefined) dns = await startDns(opts, opts.dns, log);
  } catch (err) {
    await stop();
    throw err;
  }
  return { proxy, dns, networkPolicy, podRoutes, stop };
}

async function startDns(
  opts: NodeNetworkOptions,
  access: NonNullable<NodeNetworkOptions['dns']>,
  log: (line: string) => void,
): Promise<ClusterDns> {
  const clusterIP = opts.clusterDNS[0];
  if (clusterIP === undefined) throw new Error('the cluster DNS needs a clusterDNS address (--cluster-dns)');
  if (opts.podCIDR === '')
    throw new Error('the cluster DNS needs the node pod CIDR (it listens on its gateway)');
  const address = await ensureBridge(opts.bridge, opts.podCIDR);
  const config = { ...access.config, userAgent: access.config.userAgent ?? 'capstan-dns/v1.33 (linux)' };
  const port = opts.tuning?.dnsPort ?? 53;
  const dns = await startClusterDns(config, {
    clusterDomain: opts.clusterDomain,
    host: address,
    port,
    upstreams: hostUpstreams(opts.resolvConf),
    log,
  });
  const client = new Client(config);
  try {
    await ensureKubeDns(client, { clusterIP, nodeName: opts.nodeName, address, port: dns.port });
  } catch (err) {
    // The DNS still answers on its own address; pods reach it only once the Service exists.
    log(`agent: ${(err as Error).message}`);
  } finally {
    await client.close();
  }
  return dns;
}
