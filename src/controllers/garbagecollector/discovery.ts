/**
 * The resources the garbage collector watches, as kube's `GetDeletableResources`: every
 * resource of every group's preferred version that supports list, watch and delete (custom
 * resources included), minus events (never owners nor dependents worth tracking, as kube's
 * ignore list). Also maps an owner reference's `apiVersion`/`kind` to a resource.
 */
import { serverPreferredResources, type Client, type ResourceRef } from '../../client/index.js';

const IGNORED = new Set(['events', 'events.k8s.io/events']);

/** The discovered resources. */
export interface Discovered {
  /** Deletable resources to watch. */
  readonly deletable: readonly ResourceRef[];
  /** Resolves `apiVersion` and `kind` (any version of the group) to the preferred version's resource. */
  resolve(apiVersion: string, kind: string): ResourceRef | undefined;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/**
 * Reads discovery. A group version that fails to answer is skipped (kube does the same with
 * aggregated APIs that are down) and reported through `onPartial`.
 * @throws Error when `/api` or `/apis` cannot be read.
 */
export async function discoverDeletable(
  client: Client,
  signal: AbortSignal,
  onPartial: (groupVersion: string, why: string) => void,
): Promise<Discovered> {
  const { resources, failed } = await serverPreferredResources(client, signal);
  for (const [gv, why] of failed) onPartial(gv, why);
  const deletable: ResourceRef[] = [];
  const byKind = new Map<string, ResourceRef>();
  for (const { ref, verbs } of resources) {
    byKind.set(`${ref.group}/${ref.kind}`, ref);
    const id = ref.group === '' ? ref.resource : `${ref.group}/${ref.resource}`;
    if (IGNORED.has(id)) continue;
    if (verbs.has('list') && verbs.has('watch') && verbs.has('delete')) deletable.push(ref);
  }
  return {
    deletable,
    resolve: (apiVersion, kind) => byKind.get(`${groupOf(apiVersion)}/${kind}`),
  };
}
