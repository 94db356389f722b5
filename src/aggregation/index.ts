/**
 * API aggregation (kube-aggregator inside the server): APIServices, the proxy to the servers of
 * remote ones, and their part of discovery.
 */
import type { RemoteDiscovery, RemoteGroup } from '../http/discovery.js';
import type { Aggregator } from './availability.js';

export { Aggregator, type AggregatorDeps, type RemoteGroupVersion } from './availability.js';
export { aggregatorProxy, DEFAULT_IDENTITY_HEADERS, type IdentityHeaders } from './proxy.js';
export type { ProxyClientCert } from './backend.js';

/**
 * The remote groups for discovery: groups by their highest `groupPriorityMinimum` (then name),
 * versions by `versionPriority` (then name), as kube's aggregator orders them.
 */
export function remoteDiscovery(aggregator: Aggregator): RemoteDiscovery {
  return {
    get generation() {
      return aggregator.generation;
    },
    groups(): RemoteGroup[] {
      const byGroup = new Map<string, ReturnType<Aggregator['remotes']>[number][]>();
      for (const r of aggregator.remotes()) {
        const list = byGroup.get(r.spec.group) ?? [];
        list.push(r);
        byGroup.set(r.spec.group, list);
      }
      const priority = (g: string): number =>
        Math.max(...(byGroup.get(g) ?? []).map((r) => r.groupPriorityMinimum));
      return [...byGroup.keys()]
        .sort((a, b) => priority(b) - priority(a) || (a < b ? -1 : a > b ? 1 : 0))
        .map((name) => ({
          name,
          versions: [...(byGroup.get(name) ?? [])]
            .sort(
              (a, b) =>
                b.versionPriority - a.versionPriority ||
                (a.spec.version < b.spec.version ? -1 : a.spec.version > b.spec.version ? 1 : 0),
            )
            .map((r) => ({ version: r.spec.version, resources: r.available ? r.resources : undefined })),
        }));
    },
  };
}
