/**
 * What the namespace controller deletes, as client-go's `ServerPreferredNamespacedResources`
 * filtered by the `delete` verb: every namespaced resource (custom resources included) of each
 * group's preferred version. Group versions that fail to answer are reported, not fatal (kube's
 * `ErrGroupDiscoveryFailed`): the rest is still deleted.
 */
import { resourceRef, type Client, type ResourceRef } from '../../client/index.js';

interface ApiResource {
  name?: string;
  namespaced?: boolean;
  kind?: string;
  verbs?: string[];
}

interface ApiGroup {
  name?: string;
  preferredVersion?: { version?: string };
  versions?: { version?: string }[];
}

/** A deletable namespaced resource and the verbs discovery lists for it. */
export interface NamespacedResource {
  readonly ref: ResourceRef;
  readonly verbs: ReadonlySet<string>;
}

/** The discovered resources, and the group versions whose discovery failed (with why). */
export interface NamespacedDiscovery {
  readonly resources: readonly NamespacedResource[];
  readonly failed: ReadonlyMap<string, string>;
}

async function getJson<T>(client: Client, path: string, signal: AbortSignal): Promise<T> {
  const res = await client.request({ method: 'GET', path, accept: 'application/json', signal });
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return JSON.parse(res.body.toString('utf8')) as T;
}

/**
 * Reads discovery.
 * @throws Error when `/api` or `/apis` cannot be read (nothing is known then).
 */
export async function discoverNamespaced(client: Client, signal: AbortSignal): Promise<NamespacedDiscovery> {
  const versions: { group: string; version: string; path: string }[] = [];
  const core = await getJson<{ versions?: string[] }>(client, '/api', signal);
  const coreVersion = core.versions?.[0];
  if (coreVersion !== undefined)
    versions.push({ group: '', version: coreVersion, path: `/api/${coreVersion}` });
  const groups = await getJson<{ groups?: ApiGroup[] }>(client, '/apis', signal);
  for (const g of groups.groups ?? []) {
    const preferred = g.preferredVersion?.version ?? g.versions?.[0]?.version;
    if (g.name === undefined || preferred === undefined) continue;
    versions.push({ group: g.name, version: preferred, path: `/apis/${g.name}/${preferred}` });
  }
  const resources: NamespacedResource[] = [];
  const failed = new Map<string, string>();
  await Promise.all(
    versions.map(async (gv) => {
      let list: { resources?: ApiResource[] };
      try {
        list = await getJson<{ resources?: ApiResource[] }>(client, gv.path, signal);
      } catch (err) {
        const id = gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
        failed.set(id, err instanceof Error ? err.message : String(err));
        return;
      }
      for (const r of list.resources ?? []) {
        if (r.name === undefined || r.kind === undefined || r.name.includes('/') || r.namespaced !== true)
          continue;
        const verbs = new Set(r.verbs ?? []);
        if (!verbs.has('delete')) continue;
        resources.push({ ref: resourceRef(gv.group, gv.version, r.name, r.kind, true), verbs });
      }
    }),
  );
  // A stable order: core first, then by group and resource (deletion order does not matter).
  resources.sort((a, b) =>
    a.ref.group === b.ref.group
      ? a.ref.resource.localeCompare(b.ref.resource)
      : a.ref.group.localeCompare(b.ref.group),
  );
  return { resources, failed };
}
