/**
 * What the namespace controller deletes, as client-go's `ServerPreferredNamespacedResources`
 * filtered by the `delete` verb: every namespaced resource (custom resources included) of each
 * group's preferred version. Group versions that fail to answer are reported, not fatal (kube's
 * `ErrGroupDiscoveryFailed`): the rest is still deleted.
 */
import { serverPreferredResources, type Client, type DiscoveredResource } from '../../client/index.js';

/** A deletable namespaced resource and the verbs discovery lists for it. */
export type NamespacedResource = DiscoveredResource;

/** The discovered resources, and the group versions whose discovery failed (with why). */
export interface NamespacedDiscovery {
  readonly resources: readonly NamespacedResource[];
  readonly failed: ReadonlyMap<string, string>;
}

/**
 * Reads discovery.
 * @throws Error when `/api` or `/apis` cannot be read (nothing is known then).
 */
export async function discoverNamespaced(client: Client, signal: AbortSignal): Promise<NamespacedDiscovery> {
  const { resources: all, failed } = await serverPreferredResources(client, signal);
  const resources = all.filter((r) => r.ref.namespaced && r.verbs.has('delete'));
  // A stable order: core first, then by group and resource (deletion order does not matter).
  resources.sort((a, b) =>
    a.ref.group === b.ref.group
      ? a.ref.resource.localeCompare(b.ref.resource)
      : a.ref.group.localeCompare(b.ref.group),
  );
  return { resources, failed };
}
