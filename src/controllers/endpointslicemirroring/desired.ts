/**
 * What the mirrored EndpointSlices of an Endpoints should hold (kube's mirroring `desiredCalc`):
 * per repacked subset and address family, one group keyed by address type and ports, with one
 * endpoint per valid address (ready or not), at most `maxPerSubset` addresses per subset.
 * Addresses that are not IPs are skipped and counted.
 */
import { isIPv6 } from 'node:net';
import type { EndpointAddress, Endpoints } from '../../api/types/core-v1.js';
import type { Endpoint, EndpointPort } from '../../api/types/discovery-v1.js';
import { groupKey } from '../endpointslice/desired.js';
import { repackSubsets } from './repack.js';

type AddressType = 'IPv4' | 'IPv6';

/** The endpoints of one address type and port list, keyed by endpoint identity. */
export interface MirrorGroup {
  readonly addressType: AddressType;
  readonly ports: EndpointPort[];
  readonly endpoints: Map<string, Endpoint>;
}

/** The desired state and what was left out. */
export interface DesiredMirror {
  /** By {@link groupKey}; a group may be empty (its slices are then deleted). */
  readonly groups: Map<string, MirrorGroup>;
  readonly invalidAddresses: number;
  /** Addresses left out, invalid ones included. */
  readonly skippedAddresses: number;
}

/**
 * An IP as Go's sloppy parser reads it (IPv4 octets may have leading zeros) and prints it, with
 * its family (an IPv4-mapped IPv6 address is IPv4); undefined when it is not an IP.
 */
export function canonicalIP(ip: string): { text: string; type: AddressType } | undefined {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4 !== null) {
    const octets = v4.slice(1).map((o) => Number.parseInt(o, 10));
    return octets.every((o) => o <= 255) ? { text: octets.join('.'), type: 'IPv4' } : undefined;
  }
  if (!isIPv6(ip) || ip.includes('%')) return undefined;
  const text = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text);
  if (mapped !== null) {
    const hi = Number.parseInt(mapped[1] ?? '0', 16);
    const lo = Number.parseInt(mapped[2] ?? '0', 16);
    return { text: [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.'), type: 'IPv4' };
  }
  return { text, type: 'IPv6' };
}

/** An endpoint's identity (kube's endpoint hash: addresses, hostname, target namespace and name). */
export function endpointIdentity(ep: Endpoint): string {
  return JSON.stringify([
    [...(ep.addresses ?? [])].sort(),
    ep.hostname ?? '',
    ep.targetRef?.namespace ?? '',
    ep.targetRef?.name ?? '',
  ]);
}

function toEndpoint(address: EndpointAddress, ip: string, ready: boolean): Endpoint {
  return {
    addresses: [ip],
    conditions: { ready },
    ...(address.targetRef === undefined ? {} : { targetRef: address.targetRef }),
    ...(address.nodeName === undefined ? {} : { nodeName: address.nodeName }),
    ...((address.hostname ?? '') === '' ? {} : { hostname: address.hostname }),
  };
}

/** The desired mirror of `endpoints`. */
export function desiredMirror(endpoints: Endpoints, maxPerSubset: number): DesiredMirror {
  const groups = new Map<string, MirrorGroup>();
  let invalidAddresses = 0;
  let skippedAddresses = 0;
  for (const subset of repackSubsets(endpoints.subsets ?? [])) {
    const ports: EndpointPort[] = (subset.ports ?? []).map((p) => ({
      name: p.name ?? '',
      port: p.port ?? 0,
      protocol: p.protocol ?? 'TCP',
      ...(p.appProtocol === undefined ? {} : { appProtocol: p.appProtocol }),
    }));
    const byType = new Map<AddressType, MirrorGroup>();
    for (const addressType of ['IPv4', 'IPv6'] as const) {
      const key = groupKey(addressType, ports);
      const group = groups.get(key) ?? { addressType, ports, endpoints: new Map<string, Endpoint>() };
      groups.set(key, group);
      byType.set(addressType, group);
    }
    const all = [
      ...(subset.addresses ?? []).map((a) => [a, true] as const),
      ...(subset.notReadyAddresses ?? []).map((a) => [a, false] as const),
    ];
    let added = 0;
    for (const [address, ready] of all) {
      if (added >= maxPerSubset) break;
      const ip = canonicalIP(address.ip ?? '');
      if (ip === undefined) {
        invalidAddresses++;
        continue;
      }
      const ep = toEndpoint(address, ip.text, ready);
      byType.get(ip.type)?.endpoints.set(endpointIdentity(ep), ep);
      added++;
    }
    skippedAddresses += all.length - added;
  }
  return { groups, invalidAddresses, skippedAddresses };
}
