/**
 * kube's canonical form of Endpoints subsets (`RepackSubsets`), which the mirroring controller
 * works from: every address is listed once per port (an address both ready and not ready counts
 * as ready), and ports offered by the same addresses share one subset. Addresses are keyed by
 * IP and target UID. Order: addresses by IP then UID; ports in first-seen order (kube orders
 * them by a hash, which carries no meaning).
 */
import type { EndpointAddress, EndpointPort, EndpointSubset } from '../../api/types/core-v1.js';

/** A port with no number: the sentinel for a subset without ports. */
const NO_PORT = '<none>';

function portKey(p: EndpointPort): string {
  return JSON.stringify([p.name ?? '', p.port ?? 0, p.protocol ?? '', p.appProtocol ?? null]);
}

function addressKey(a: EndpointAddress): string {
  return `${a.ip ?? ''}/${a.targetRef?.uid ?? ''}`;
}

/** The subsets of `subsets` repacked as kube does. */
export function repackSubsets(subsets: readonly EndpointSubset[]): EndpointSubset[] {
  const addresses = new Map<string, EndpointAddress>();
  const ports = new Map<string, EndpointPort | undefined>();
  const readyByPort = new Map<string, Map<string, boolean>>();
  const record = (port: string, a: EndpointAddress, ready: boolean): void => {
    const key = addressKey(a);
    if (!addresses.has(key)) addresses.set(key, a);
    const set = readyByPort.get(port) ?? new Map<string, boolean>();
    readyByPort.set(port, set);
    if (set.get(key) !== true) set.set(key, ready);
  };
  for (const subset of subsets) {
    const subsetPorts = subset.ports ?? [];
    const keys = subsetPorts.length === 0 ? [NO_PORT] : subsetPorts.map(portKey);
    subsetPorts.forEach((p, i) => {
      const k = keys[i] ?? '';
      if (!ports.has(k)) ports.set(k, p);
    });
    if (subsetPorts.length === 0 && !ports.has(NO_PORT)) ports.set(NO_PORT, undefined);
    for (const k of keys) {
      if (!readyByPort.has(k)) readyByPort.set(k, new Map());
      for (const a of subset.addresses ?? []) record(k, a, true);
      for (const a of subset.notReadyAddresses ?? []) record(k, a, false);
    }
  }
  // Ports offered by the same addresses (with the same readiness) form one subset.
  const groups = new Map<string, { set: Map<string, boolean>; ports: EndpointPort[] }>();
  for (const [k, set] of readyByPort) {
    const id = [...set.entries()]
      .map(([a, r]) => `${a}=${String(r)}`)
      .sort()
      .join(',');
    const group = groups.get(id) ?? { set, ports: [] };
    groups.set(id, group);
    const port = ports.get(k);
    if (port !== undefined && (port.port ?? 0) > 0) group.ports.push(port);
  }
  const byAddress = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  const out: EndpointSubset[] = [];
  const ordered = [...groups].sort(([a], [b]) => byAddress(a, b)).map(([, g]) => g);
  for (const { set, ports: groupPorts } of ordered) {
    const keys = [...set.keys()].sort(byAddress);
    const ready = keys.filter((k) => set.get(k) === true).map((k) => addresses.get(k) ?? {});
    const notReady = keys.filter((k) => set.get(k) === false).map((k) => addresses.get(k) ?? {});
    if (ready.length === 0 && notReady.length === 0) continue;
    out.push({
      ...(ready.length > 0 ? { addresses: ready } : {}),
      ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}),
      ...(groupPorts.length > 0 ? { ports: groupPorts } : {}),
    });
  }
  return out;
}
