/**
 * Where NamespaceLifecycle looks a namespace up on every create of namespaced content. A storage
 * read per create is a LevelDB get, or on etcd a linearizable round trip, and was the largest
 * single cost of a create. Like kube-apiserver's admission plugin (which reads a namespace
 * informer), an *active* namespace seen in the namespaces watch cache admits the create without
 * reading storage; everything else is decided by a storage read:
 * - missing from the cache (maybe created a moment ago): storage, so a fresh namespace is never
 *   refused;
 * - terminating in the cache: storage, for the exact answer;
 * - deleted through this server within the last {@link FORCE_LIVE_LOOKUP_MS} (kube's
 *   `forceLiveLookupTTL`, 30 s): storage, so that DELETE namespace then create on the same server
 *   is refused even while the cache still shows the namespace active.
 *
 * What stays as in kube: a namespace marked terminating through another replica may admit a create
 * on this one until this replica's cache sees the mark (the namespace controller deletes such
 * content when it empties the namespace).
 */
import type { ResourceType } from '../registry/types.js';
import type { ObjectVersion } from '../watchcache/object-version.js';
import { isJsonObject } from '../api/object.js';

/** How long after a local namespace DELETE its lookups go to storage (kube: 30 s). */
export const FORCE_LIVE_LOOKUP_MS = 30_000;

/** What the lookups need of the watch caches (`WatchCaches` has it; tests give fakes). */
export interface NamespaceCacheSource {
  for(
    type: ResourceType,
  ): { readonly ready: boolean; get(key: string): ObjectVersion | undefined } | undefined;
}

/** The per-server namespace lookup state of NamespaceLifecycle (one per resource context). */
export class NamespaceAdmission {
  readonly #caches: NamespaceCacheSource | undefined;
  readonly #now: () => number;
  /** Namespace name → time (ms) until which lookups go to storage. */
  readonly #forceLive = new Map<string, number>();

  /** @param caches the server's watch caches (none: always storage). */
  constructor(caches: NamespaceCacheSource | undefined, now: () => number = Date.now) {
    this.#caches = caches;
    this.#now = now;
  }

  /** Records a DELETE of `name` through this server (see the module comment). */
  deleted(name: string): void {
    const now = this.#now();
    // Drop expired entries here, so that the map stays as small as the recent deletes.
    for (const [ns, until] of this.#forceLive) if (until <= now) this.#forceLive.delete(ns);
    this.#forceLive.set(name, now + FORCE_LIVE_LOOKUP_MS);
  }

  /**
   * True when the namespaces cache shows `key` (the namespace's storage key) active and no
   * recent local DELETE of `name` asks for a live lookup; false means "read storage".
   */
  activeInCache(namespaces: ResourceType, name: string, key: string): boolean {
    const until = this.#forceLive.get(name);
    if (until !== undefined) {
      if (until > this.#now()) return false;
      this.#forceLive.delete(name);
    }
    const cache = this.#caches?.for(namespaces);
    if (cache?.ready !== true) return false;
    const version = cache.get(key);
    if (version === undefined) return false;
    // The version's own parse, shared by every create in the namespace (read only here).
    const ns = version.object();
    if (ns.metadata.deletionTimestamp) return false;
    const phase = isJsonObject(ns['status']) ? ns['status']['phase'] : undefined;
    return phase !== 'Terminating';
  }
}
