/**
 * Reads of the objects service-account tokens depend on (ServiceAccounts, Secrets, Pods, Nodes)
 * without a storage round trip per request: like kube-apiserver's token getter (informer listers
 * with a live fallback), an object found in its type's ready watch cache is answered from there;
 * anything else (cache warming or off, object not cached yet) is read from storage, so a token
 * for an object created a moment ago is not refused.
 */
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { objectKey } from '../resource/keys.js';
import type { KubeObject } from '../api/object.js';
import { SharedDecodes } from '../resource/shared-decodes.js';

/** The core kinds tokens refer to. */
export type LookupKind = 'ServiceAccount' | 'Secret' | 'Pod' | 'Node' | 'ConfigMap';

/** Reads core objects by kind, namespace and name. */
export interface ObjectGetter {
  /** The object (shared and frozen: never modify it), or undefined when it does not exist. */
  get(kind: LookupKind, namespace: string | undefined, name: string): Promise<KubeObject | undefined>;
}

/** Looks up core objects through the watch caches, falling back to storage. */
export class ObjectLookup implements ObjectGetter {
  readonly #ctx: ResourceContext;
  readonly #types = new Map<LookupKind, ResourceType>();
  readonly #decoded = new SharedDecodes();

  constructor(ctx: ResourceContext) {
    this.#ctx = ctx;
  }

  /** The registry type of `kind` (core/v1). */
  type(kind: LookupKind): ResourceType {
    let t = this.#types.get(kind);
    if (t === undefined) {
      t = this.#ctx.registry.byKind('', 'v1', kind);
      if (t === undefined) throw new Error(`the registry serves no core/v1 ${kind}`);
      this.#types.set(kind, t);
    }
    return t;
  }

  /** The object, or undefined when it does not exist. */
  async get(kind: LookupKind, namespace: string | undefined, name: string): Promise<KubeObject | undefined> {
    const type = this.type(kind);
    const key = objectKey(type, type.namespaced ? namespace : undefined, name);
    const cache = this.#ctx.watchCaches?.for(type);
    if (cache?.ready === true) {
      const version = cache.get(key);
      if (version !== undefined) return this.#decoded.of(key, version.value, version.revision);
    }
    const { kv } = await this.#ctx.store.get(key);
    return kv === undefined ? undefined : this.#decoded.of(key, kv.value, kv.modRevision);
  }
}
