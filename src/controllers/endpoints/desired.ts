/**
 * The Endpoints object a Service should have, as kube's endpoints controller computes it: one
 * address per pod (in the service's first IP family), ready or not ready, repacked into subsets
 * that share a port list, and truncated to {@link MAX_CAPACITY} addresses.
 */
import type {
  EndpointAddress,
  EndpointPort,
  EndpointSubset,
  Endpoints,
  Pod,
  Service,
} from '../../api/types/core-v1.js';
import { findPort, isPodReady, podIPs, shouldPodBeInEndpoints } from '../pods/pod-state.js';
import { HEADLESS_LABEL, sameJson } from '../endpointslice/plan.js';
import { LAST_CHANGE_TRIGGER_TIME } from '../endpointslice/trigger-time.js';

/** Endpoints hold at most this many addresses (ready and not ready together). */
export const MAX_CAPACITY = 1000;
/** Set to `truncated` on Endpoints cut to {@link MAX_CAPACITY}. */
export const OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';
/** Tells the EndpointSlice mirroring controller to leave these Endpoints alone. */
export const SKIP_MIRROR_LABEL = 'endpointslice.kubernetes.io/skip-mirror';

interface Entry {
  readonly address: EndpointAddress;
  readonly ready: boolean;
  readonly ports: EndpointPort[];
}

function familyOf(service: Service): 'IPv4' | 'IPv6' {
  const first = service.spec?.ipFamilies?.[0];
  if (first === 'IPv6' || first === 'IPv4') return first;
  return (service.spec?.clusterIP ?? '').includes(':') ? 'IPv6' : 'IPv4';
}

function addressOf(service: Service, pod: Pod): EndpointAddress | undefined {
  const want = familyOf(service);
  const ip = podIPs(pod).find((a) => (a.includes(':') ? 'IPv6' : 'IPv4') === want);
  if (ip === undefined) return undefined;
  const address: EndpointAddress = {
    ip,
    targetRef: {
      kind: 'Pod',
      namespace: pod.metadata.namespace ?? '',
      name: pod.metadata.name ?? '',
      uid: pod.metadata.uid ?? '',
    },
  };
  const nodeName = pod.spec?.nodeName ?? '';
  if (nodeName !== '') address.nodeName = nodeName;
  const hostname = pod.spec?.hostname ?? '';
  if (
    hostname !== '' &&
    pod.spec?.subdomain === service.metadata.name &&
    pod.metadata.namespace === service.metadata.namespace
  ) {
    address.hostname = hostname;
  }
  return address;
}

function portKey(p: EndpointPort): string {
  return `${p.name ?? ''}/${p.port ?? 0}/${p.protocol ?? 'TCP'}/${p.appProtocol ?? ''}`;
}

function byAddress(a: EndpointAddress, b: EndpointAddress): number {
  const x = `${a.ip ?? ''}/${a.targetRef?.uid ?? ''}`;
  const y = `${b.ip ?? ''}/${b.targetRef?.uid ?? ''}`;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The subsets of `service` over the pods its selector matched (kube's sync plus RepackSubsets). */
export function desiredSubsets(service: Service, pods: readonly Pod[]): EndpointSubset[] {
  const publish = service.spec?.publishNotReadyAddresses === true;
  const servicePorts = service.spec?.ports ?? [];
  const headlessNoPorts = servicePorts.length === 0 && service.spec?.clusterIP === 'None';
  const entries: Entry[] = [];
  for (const pod of pods) {
    if (!shouldPodBeInEndpoints(pod, publish)) continue;
    const address = addressOf(service, pod);
    if (address === undefined) continue;
    const ready = publish || isPodReady(pod);
    if (headlessNoPorts) {
      entries.push({ address, ready, ports: [] });
      continue;
    }
    const ports: EndpointPort[] = [];
    for (const sp of servicePorts) {
      const port = findPort(pod, sp);
      if (port === undefined) continue; // this pod lacks the named port: not an endpoint for it
      const ep: EndpointPort = { port, protocol: sp.protocol ?? 'TCP' };
      if (sp.name !== undefined && sp.name !== '') ep.name = sp.name;
      if (sp.appProtocol !== undefined) ep.appProtocol = sp.appProtocol;
      ports.push(ep);
    }
    if (ports.length > 0) entries.push({ address, ready, ports });
  }
  // Repack: addresses sharing a port list share a subset.
  const subsets = new Map<
    string,
    { ports: EndpointPort[]; ready: EndpointAddress[]; notReady: EndpointAddress[] }
  >();
  for (const e of entries) {
    const ports = [...e.ports].sort((a, b) => (portKey(a) < portKey(b) ? -1 : 1));
    const key = ports.map(portKey).join(',');
    let s = subsets.get(key);
    if (s === undefined) {
      s = { ports, ready: [], notReady: [] };
      subsets.set(key, s);
    }
    (e.ready ? s.ready : s.notReady).push(e.address);
  }
  return [...subsets.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, s]) => {
      const subset: EndpointSubset = {};
      if (s.ready.length > 0) subset.addresses = s.ready.sort(byAddress);
      if (s.notReady.length > 0) subset.notReadyAddresses = s.notReady.sort(byAddress);
      if (s.ports.length > 0) subset.ports = s.ports;
      return subset;
    });
}

/**
 * Cuts subsets to `max` addresses (kube's `truncateEndpoints`): ready addresses are kept first;
 * each subset gives up a share proportional to its size. Returns whether anything was cut.
 */
export function truncateSubsets(subsets: EndpointSubset[], max = MAX_CAPACITY): boolean {
  const ready = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  const notReady = subsets.reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0);
  if (ready + notReady <= max) return false;
  const cutReady = ready > max;
  const total = cutReady ? ready : notReady;
  const toRemove = cutReady ? ready - max : ready + notReady - max;
  let remaining = toRemove;
  for (const [i, s] of subsets.entries()) {
    const list = cutReady ? s.addresses : s.notReadyAddresses;
    if (cutReady) delete s.notReadyAddresses;
    if (list === undefined) continue;
    let n = i === subsets.length - 1 ? remaining : Math.round((list.length * toRemove) / total);
    n = Math.min(n, remaining, list.length);
    list.length -= n;
    remaining -= n;
    if (list.length === 0) {
      if (cutReady) delete s.addresses;
      else delete s.notReadyAddresses;
    }
  }
  return true;
}

/**
 * The Endpoints object for `service`, or `undefined` when `current` already says it. Labels
 * are the service's plus the skip-mirror label (and the headless label for headless services);
 * other annotations on `current` are kept.
 */
export function desiredEndpoints(
  service: Service,
  pods: readonly Pod[],
  current: Endpoints | undefined,
  triggerTime: string | undefined,
): Endpoints | undefined {
  const subsets = desiredSubsets(service, pods);
  const truncated = truncateSubsets(subsets);
  const labels: Record<string, string> = { ...(service.metadata.labels ?? {}), [SKIP_MIRROR_LABEL]: 'true' };
  if (service.spec?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
  else delete labels[HEADLESS_LABEL];
  const annotations: Record<string, string> = { ...(current?.metadata.annotations ?? {}) };
  const capacityRight = truncated
    ? annotations[OVER_CAPACITY] === 'truncated'
    : annotations[OVER_CAPACITY] === undefined;
  if (
    current !== undefined &&
    sameJson(current.subsets ?? [], subsets) &&
    sameJson(current.metadata.labels ?? {}, labels) &&
    capacityRight
  ) {
    return undefined;
  }
  if (triggerTime !== undefined) annotations[LAST_CHANGE_TRIGGER_TIME] = triggerTime;
  else delete annotations[LAST_CHANGE_TRIGGER_TIME];
  if (truncated) annotations[OVER_CAPACITY] = 'truncated';
  else delete annotations[OVER_CAPACITY];
  const metadata = {
    ...(current?.metadata ?? {}),
    name: service.metadata.name ?? '',
    namespace: service.metadata.namespace ?? '',
    labels,
    annotations,
  };
  return { apiVersion: 'v1', kind: 'Endpoints', metadata, subsets };
}
