/**
 * Discovery as client-go's `ServerPreferredResources`: every resource (subresources left out) of
 * each group's preferred version, with the verbs the server lists for it. Group versions that
 * fail to answer are reported, not fatal (kube's `ErrGroupDiscoveryFailed`): an aggregated API
 * that is down leaves the rest usable.
 */
import { setMaxListeners } from 'node:events';
import type { Client } from './client.js';
import { resourceRef, type ResourceRef } from './resources.js';
import { formatApiVersion } from '../api/group-version.js';

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

/** A resource and the verbs discovery lists for it. */
export interface DiscoveredResource {
  readonly ref: ResourceRef;
  readonly verbs: ReadonlySet<string>;
}

/** The discovered resources, and the group versions (`v1`, `apps/v1`) that failed, with why. */
export interface PreferredResources {
  readonly resources: readonly DiscoveredResource[];
  readonly failed: ReadonlyMap<string, string>;
}

async function getJson<T>(client: Client, path: string, signal: AbortSignal): Promise<T> {
  const res = await client.request({ method: 'GET', path, accept: 'application/json', signal });
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return JSON.parse(res.body.toString('utf8')) as T;
}

/**
 * Reads `/api`, `/apis` and each preferred group version's resource list, in parallel.
 * @throws Error when `/api` or `/apis` cannot be read (nothing is known then).
 */
export async function serverPreferredResources(
  client: Client,
  signal: AbortSignal,
): Promise<PreferredResources> {
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
  const resources: DiscoveredResource[] = [];
  const failed = new Map<string, string>();
  // One request per group version at once (thirty and more), each listening on the caller's
  // signal until it ends: expected, not a leak (node warns past ten).
  setMaxListeners(0, signal);
  await Promise.all(
    versions.map(async (gv) => {
      let list: { resources?: ApiResource[] };
      try {
        list = await getJson<{ resources?: ApiResource[] }>(client, gv.path, signal);
      } catch (err) {
        failed.set(formatApiVersion(gv.group, gv.version), err instanceof Error ? err.message : String(err));
        return;
      }
      for (const r of list.resources ?? []) {
        if (r.name === undefined || r.kind === undefined || r.name.includes('/')) continue;
        resources.push({
          ref: resourceRef(gv.group, gv.version, r.name, r.kind, r.namespaced === true),
          verbs: new Set(r.verbs ?? []),
        });
      }
    }),
  );
  return { resources, failed };
}
