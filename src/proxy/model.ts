/**
 * What the proxy programs, computed from Services and EndpointSlices as kube-proxy does: one
 * {@link ProxiedPort} per (service, port) with a ClusterIP, its node port, traffic policies,
 * session affinity and the endpoints traffic may go to.
 *
 * Endpoints: the ready ones; when a service has none ready, the serving-and-terminating ones
 * (kube-proxy's fallback, so a rolling update loses no traffic). Headless and ExternalName
 * services, and services without a ClusterIP, get nothing. Only IPv4 is proxied.
 */
import { isIPv4 } from 'node:net';
import type { Service } from '../api/types/core-v1.js';
import type { EndpointSlice } from '../api/types/discovery-v1.js';

/** One endpoint of a port. */
export interface ProxiedEndpoint {
  readonly ip: string;
  readonly port: number;
  /** On this node (for the Local traffic policies). */
  readonly local: boolean;
}

/** One service port as the proxy programs it. */
export interface ProxiedPort {
  /** `ns/name/proto/portName`, stable across syncs (kube's service port name). */
  readonly id: string;
  readonly clusterIPs: readonly string[];
  readonly protocol: 'tcp' | 'udp' | 'sctp';
  readonly port: number;
  readonly nodePort?: number;
  /** ClientIP session affinity timeout in seconds, when on. */
  readonly affinitySeconds?: number;
  /** externalTrafficPolicy: Local (node ports keep the client's address, local endpoints only). */
  readonly externalLocal: boolean;
  /** internalTrafficPolicy: Local (cluster IPs reach local endpoints only). */
  readonly internalLocal: boolean;
  readonly endpoints: readonly ProxiedEndpoint[];
}

/** The slices of one service, by slice name. */
export type SlicesOfService = ReadonlyMap<string, EndpointSlice>;

/** The service key of a slice (`ns/name`), from its `kubernetes.io/service-name` label. */
export function serviceKeyOfSlice(slice: EndpointSlice): string | undefined {
  const name = slice.metadata.labels?.['kubernetes.io/service-name'];
  return name === undefined ? undefined : `${slice.metadata.namespace ?? ''}/${name}`;
}

function protocolOf(p: string | undefined): ProxiedPort['protocol'] | undefined {
  const v = (p ?? 'TCP').toLowerCase();
  return v === 'tcp' || v === 'udp' || v === 'sctp' ? v : undefined;
}

/** The proxied ports of one service on `nodeName`. */
export function proxiedPorts(
  svc: Service,
  slices: SlicesOfService | undefined,
  nodeName: string,
): ProxiedPort[] {
  const spec = svc.spec;
  if (spec === undefined || spec.type === 'ExternalName') return [];
  const clusterIPs = (spec.clusterIPs ?? (spec.clusterIP === undefined ? [] : [spec.clusterIP])).filter(
    (ip) => isIPv4(ip),
  );
  if (clusterIPs.length === 0) return [];
  const ns = svc.metadata.namespace ?? '';
  const name = svc.metadata.name ?? '';
  const affinity =
    spec.sessionAffinity === 'ClientIP'
      ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? 10800)
      : undefined;
  const out: ProxiedPort[] = [];
  for (const p of spec.ports ?? []) {
    const protocol = protocolOf(p.protocol);
    const port = p.port ?? 0;
    if (protocol === undefined || port < 1 || port > 65535) continue;
    const portName = p.name ?? '';
    out.push({
      id: `${ns}/${name}/${protocol}/${portName}`,
      clusterIPs,
      protocol,
      port,
      ...(p.nodePort !== undefined && p.nodePort > 0 ? { nodePort: p.nodePort } : {}),
      ...(affinity === undefined ? {} : { affinitySeconds: affinity }),
      externalLocal: spec.externalTrafficPolicy === 'Local',
      internalLocal: spec.internalTrafficPolicy === 'Local',
      endpoints: endpointsOf(slices, portName, protocol, nodeName),
    });
  }
  return out;
}

function endpointsOf(
  slices: SlicesOfService | undefined,
  portName: string,
  protocol: string,
  nodeName: string,
): ProxiedEndpoint[] {
  const ready: ProxiedEndpoint[] = [];
  const terminating: ProxiedEndpoint[] = [];
  const seen = new Set<string>();
  for (const slice of slices?.values() ?? []) {
    if (slice.addressType !== 'IPv4') continue;
    const sp = (slice.ports ?? []).find(
      (q) => (q.name ?? '') === portName && (q.protocol ?? 'TCP').toLowerCase() === protocol,
    );
    const port = sp?.port;
    if (port === undefined || port < 1 || port > 65535) continue;
    for (const e of slice.endpoints ?? []) {
      const ip = e.addresses?.[0];
      if (ip === undefined || !isIPv4(ip)) continue; // a foreign or malformed address is skipped
      const key = `${ip}:${port}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const ep = { ip, port, local: e.nodeName === nodeName };
      const c = e.conditions ?? {};
      if (c.ready !== false) ready.push(ep);
      else if (c.serving === true && c.terminating === true) terminating.push(ep);
    }
  }
  const chosen = ready.length > 0 ? ready : terminating;
  return chosen.sort((a, b) => (a.ip === b.ip ? a.port - b.port : a.ip < b.ip ? -1 : 1));
}
