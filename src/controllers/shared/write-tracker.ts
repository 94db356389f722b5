/**
 * What a controller's syncs wrote, until its cache shows it (kube's endpointSliceTracker, by
 * resourceVersion): a sync that finds its cache {@link WriteTracker.behind} waits rather than
 * acting on stale objects (a slow cache would otherwise make it create a second set).
 */
import { splitKey } from './meta.js';

/** What one sync wrote, by object name: the resourceVersion written, or `null` for a delete. */
export type Writes = Map<string, string | null>;

/** Reads an object of the cache by namespace and name. */
export type CacheLookup = (
  namespace: string,
  name: string,
) => { metadata: { resourceVersion?: string } } | undefined;

/** The writes of each key's last sync, kept until the cache shows them. */
export class WriteTracker {
  readonly #written = new Map<string, Writes>();
  readonly #lookup: CacheLookup;

  constructor(lookup: CacheLookup) {
    this.#lookup = lookup;
  }

  /** Remembers what the last sync of `key` (`namespace/name`) wrote; nothing written, nothing kept. */
  record(key: string, writes: Writes): void {
    if (writes.size > 0) this.#written.set(key, writes);
  }

  /** True while the cache does not yet show every write of the last sync of `key`. */
  behind(key: string): boolean {
    const writes = this.#written.get(key);
    if (writes === undefined) return false;
    const { namespace } = splitKey(key);
    for (const [name, rv] of writes) {
      const cached = this.#lookup(namespace, name);
      const seen =
        rv === null
          ? cached === undefined
          : cached !== undefined && BigInt(cached.metadata.resourceVersion ?? '0') >= BigInt(rv);
      if (!seen) return true;
      writes.delete(name);
    }
    this.#written.delete(key);
    return false;
  }
}
