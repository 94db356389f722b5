/**
 * The resources the garbage collector watches, as kube's `GetDeletableResources`: every
 * resource of every group's preferred version that supports list, watch and delete (custom
 * resources included), minus events (never owners nor dependents worth tracking, as kube's
 * ignore list). Also maps an owner reference's `apiVersion`/`kind` to a resource.
 */
import type { Client, ResourceRef } from '../../client/index.js';
import { resourceRef } from '../../client/index.js';

interface ApiResource {
  name?: string;
  namespaced?: boolean;
  kind?: string;
  verbs?: string[];
}

interface ApiGroup {
  name?: string;
  preferredVersion?: { groupVersion?: string; version?: string };
  versions?: { groupVersion?: string; version?: string }[];
}

const IGNORED = new Set(['events', 'events.k8s.io/events']);

/** The discovered resources. */
export interface Discovered {
  /** Deletable resources to watch. */
  readonly deletable: readonly ResourceRef[];
  /** Resolves `apiVersion` and `kind` (of any served version of the group) to a resource. */
  resolve(apiVersion: string, kind: string): ResourceRef | undefined;
}

async function getJson<T>(client: Client, path: string, signal: AbortSignal): Promise<T> {
  const res = await client.request({ method: 'GET', path, accept: 'application/json', signal });
  if (res.status !== 200) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return JSON.parse(res.body.toString('utf8')) as T;
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/**
 * Reads discovery. A group version that fails to answer is skipped (kube does the same with
 * aggregated APIs that are down) and reported through `onPartial`.
 */
export async function discoverDeletable(
  client: Client,
  signal: AbortSignal,
  onPartial: (groupVersion: string, err: unknown) => void,
): Promise<Discovered> {
  const versions: { group: string; version: string; path: string }[] = [];
  const core = await getJson<{ versions?: string[] }>(client, '/api', signal);
  for (const v of core.versions ?? []) versions.push({ group: '', version: v, path: `/api/${v}` });
  const groups = await getJson<{ groups?: ApiGroup[] }>(client, '/apis', signal);
  for (const g of groups.groups ?? []) {
    const preferred = g.preferredVersion?.version ?? g.versions?.[0]?.version;
    if (g.name === undefined || preferred === undefined) continue;
    versions.push({ group: g.name, version: preferred, path: `/apis/${g.name}/${preferred}` });
  }
  const deletable: ResourceRef[] = [];
  const byKind = new Map<string, ResourceRef>();
  await Promise.all(
    versions.map(async (gv) => {
      let list: { resources?: ApiResource[] };
      try {
        list = await getJson<{ resources?: ApiResource[] }>(client, gv.path, signal);
      } catch (err) {
        onPartial(gv.path, err);
        return;
      }
      for (const r of list.resources ?? []) {
        if (r.name === undefined || r.kind === undefined || r.name.includes('/')) continue;
        const ref = resourceRef(gv.group, gv.version, r.name, r.kind, r.namespaced === true);
        byKind.set(`${gv.group}/${r.kind}`, ref);
        const verbs = r.verbs ?? [];
        const id = gv.group === '' ? r.name : `${gv.group}/${r.name}`;
        if (IGNORED.has(id)) continue;
        if (verbs.includes('list') && verbs.includes('watch') && verbs.includes('delete'))
          deletable.push(ref);
      }
    }),
  );
  return {
    deletable,
    resolve: (apiVersion, kind) => byKind.get(`${groupOf(apiVersion)}/${kind}`),
  };
}
