/**
 * The endpoints a Service should have, as kube's EndpointSlice controller computes them: per
 * address type and per set of resolved ports, one entry per pod that has an IP of that family.
 */
import type { Node, Pod, Service } from '../../api/types/core-v1.js';
import type { Endpoint, EndpointPort } from '../../api/types/discovery-v1.js';
import { findPort, isPodReady, isPodTerminating, podIPs, shouldPodBeInEndpoints } from '../pods/pod-state.js';

/** Node label carrying the zone copied to `endpoints[].zone`. */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** Endpoints sharing an address type and a port list. */
export interface EndpointGroup {
  readonly addressType: 'IPv4' | 'IPv6';
  readonly ports: EndpointPort[];
  /** Canonical key of `addressType` and `ports`. */
  readonly key: string;
  readonly endpoints: Endpoint[];
}

/** The address types a service's slices carry (kube's `getAddressTypesForService`). */
export function addressTypesOf(service: Service): ('IPv4' | 'IPv6')[] {
  const families = service.spec?.ipFamilies ?? [];
  if (families.length > 0) return families.filter((f) => f === 'IPv4' || f === 'IPv6');
  const ip = service.spec?.clusterIP ?? '';
  if (ip !== '' && ip !== 'None') return [ip.includes(':') ? 'IPv6' : 'IPv4'];
  return ['IPv4', 'IPv6'];
}

/** The canonical key of a group: address type and ports in a stable order. */
export function groupKey(addressType: string, ports: readonly EndpointPort[]): string {
  const parts = ports
    .map((p) => `${p.name ?? ''}/${p.protocol ?? 'TCP'}/${p.port ?? 0}/${p.appProtocol ?? ''}`)
    .sort();
  return `${addressType}|${parts.join(',')}`;
}

/** The ports a pod serves for a service; a target the pod lacks is left out. */
export function endpointPorts(service: Service, pod: Pod): EndpointPort[] {
  const out: EndpointPort[] = [];
  for (const sp of service.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    const ep: EndpointPort = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
    if (sp.appProtocol !== undefined) ep.appProtocol = sp.appProtocol;
    out.push(ep);
  }
  return out;
}

/** One pod as an endpoint of `service` at `ip` (kube's `podToEndpoint`). */
export function podToEndpoint(service: Service, pod: Pod, ip: string, node: Node | undefined): Endpoint {
  const serving = isPodReady(pod);
  const terminating = isPodTerminating(pod);
  const ep: Endpoint = {
    addresses: [ip],
    conditions: {
      // Never ready while terminating, unless the service publishes not-ready addresses.
      ready: service.spec?.publishNotReadyAddresses === true || (serving && !terminating),
      serving,
      terminating,
    },
    targetRef: {
      kind: 'Pod',
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name ?? '',
      uid: pod.metadata.uid ?? '',
    },
  };
  const nodeName = pod.spec?.nodeName ?? '';
  if (nodeName !== '') ep.nodeName = nodeName;
  const zone = node?.metadata.labels?.[ZONE_LABEL];
  if (zone !== undefined) ep.zone = zone;
  const hostname = pod.spec?.hostname ?? '';
  if (
    hostname !== '' &&
    pod.spec?.subdomain === service.metadata.name &&
    pod.metadata.namespace === service.metadata.namespace
  ) {
    ep.hostname = hostname;
  }
  return ep;
}

/** The desired groups, and whether a pod was left out for a node not (yet) known. */
export interface DesiredEndpoints {
  readonly groups: EndpointGroup[];
  /** A pod names a node the cache lacks: the service is synced again later. */
  readonly missingNode: boolean;
}

/**
 * The desired groups of `service` over the pods its selector matched. Terminal pods, pods
 * without an IP of a family, and (unless the service publishes not-ready addresses) pods whose
 * node is unknown are left out; a pod whose ports all fail to resolve lands in a group without
 * ports, as kube's does.
 */
export function desiredGroups(
  service: Service,
  pods: readonly Pod[],
  nodeOf: (name: string) => Node | undefined,
): DesiredEndpoints {
  const groups = new Map<string, EndpointGroup>();
  let missingNode = false;
  for (const addressType of addressTypesOf(service)) {
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod, true)) continue;
      const ip = podIPs(pod).find((a) => (a.includes(':') ? 'IPv6' : 'IPv4') === addressType);
      if (ip === undefined) continue;
      const node = nodeOf(pod.spec?.nodeName ?? '');
      if (node === undefined && service.spec?.publishNotReadyAddresses !== true) {
        missingNode = true;
        continue;
      }
      const ports = endpointPorts(service, pod);
      const key = groupKey(addressType, ports);
      let g = groups.get(key);
      if (g === undefined) {
        g = { addressType, ports, key, endpoints: [] };
        groups.set(key, g);
      }
      g.endpoints.push(podToEndpoint(service, pod, ip, node));
    }
  }
  return { groups: [...groups.values()], missingNode };
}
