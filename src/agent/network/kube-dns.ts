/**
 * The `kube-dns` Service in `kube-system`, for the cluster DNS the agent runs on the host: a
 * Service with kube's labels (`k8s-app: kube-dns`, `kubernetes.io/cluster-service`,
 * `kubernetes.io/name: CoreDNS`, as kubeadm's) and the ClusterIP of the agent's `clusterDNS`,
 * ports `dns` (53/UDP) and `dns-tcp` (53/TCP). It has no selector, as no DNS pod backs it: each
 * agent running the DNS publishes its own EndpointSlice (`kube-dns-<node>`, managed by
 * `capstan-agent`) naming the address the DNS listens on (the node's pod gateway), so the
 * Service proxy routes the ClusterIP to it. Both are written with server-side apply, so a
 * restart reconciles rather than duplicates; a Service of another ClusterIP is reported.
 */
import { ENDPOINT_SLICES, SERVICES, type Client } from '../../client/index.js';
import type { Service } from '../../api/types/core-v1.js';
import type { EndpointSlice } from '../../api/types/discovery-v1.js';

export const KUBE_DNS_NAMESPACE = 'kube-system';
export const KUBE_DNS_SERVICE = 'kube-dns';
const MANAGER = 'capstan-agent';

/** The Service (see the module comment). */
export function kubeDnsService(clusterIP: string): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: KUBE_DNS_SERVICE,
      namespace: KUBE_DNS_NAMESPACE,
      labels: {
        'k8s-app': 'kube-dns',
        'kubernetes.io/cluster-service': 'true',
        'kubernetes.io/name': 'CoreDNS',
      },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
      ],
    },
  };
}

/** This node's EndpointSlice of the Service: the DNS listening on `address` port `port`. */
export function kubeDnsSlice(nodeName: string, address: string, port: number): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name: `${KUBE_DNS_SERVICE}-${nodeName}`,
      namespace: KUBE_DNS_NAMESPACE,
      labels: {
        'kubernetes.io/service-name': KUBE_DNS_SERVICE,
        'endpointslice.kubernetes.io/managed-by': MANAGER,
        'k8s-app': 'kube-dns',
      },
    },
    addressType: 'IPv4',
    endpoints: [
      { addresses: [address], conditions: { ready: true, serving: true, terminating: false }, nodeName },
    ],
    ports: [
      { name: 'dns', port, protocol: 'UDP' },
      { name: 'dns-tcp', port, protocol: 'TCP' },
    ],
  };
}

/**
 * Applies the Service and this node's EndpointSlice.
 * @throws Error with context when the API refuses either (an existing `kube-dns` with another
 *   ClusterIP: its ClusterIP is immutable).
 */
export async function ensureKubeDns(
  client: Client,
  opts: { clusterIP: string; nodeName: string; address: string; port: number },
): Promise<void> {
  const apply = { type: 'apply' as const, fieldManager: MANAGER, force: true, namespace: KUBE_DNS_NAMESPACE };
  const services = client.resource<Service>(SERVICES);
  try {
    await services.patch(KUBE_DNS_SERVICE, kubeDnsService(opts.clusterIP), apply);
  } catch (err) {
    throw new Error(
      `ensuring Service ${KUBE_DNS_NAMESPACE}/${KUBE_DNS_SERVICE} at ${opts.clusterIP}: ${(err as Error).message}`,
    );
  }
  const slice = kubeDnsSlice(opts.nodeName, opts.address, opts.port);
  try {
    await client.resource<EndpointSlice>(ENDPOINT_SLICES).patch(slice.metadata.name ?? '', slice, apply);
  } catch (err) {
    throw new Error(
      `ensuring EndpointSlice ${KUBE_DNS_NAMESPACE}/${slice.metadata.name ?? ''}: ${(err as Error).message}`,
    );
  }
}
