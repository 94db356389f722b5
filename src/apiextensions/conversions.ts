/**
 * The conversions of the served multi-version custom resources, by storage resource, and the
 * per-request view that applies them: a request to such a kind gets a resource context whose
 * store converts (converting-store.ts) and whose reads skip the watch cache (the cache holds
 * the storage version).
 */
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { ConvertingStore, type ConvertObjects } from './converting-store.js';

interface Entry {
  readonly storageApiVersion: string;
  readonly convert: ConvertObjects;
}

/** One server's custom resource conversions. */
export class CrdConversions {
  readonly #byResource = new Map<string, Entry>();

  /** Converts objects of `storageResource` with `convert`; stored in `storageApiVersion`. */
  set(storageResource: string, storageApiVersion: string, convert: ConvertObjects): void {
    this.#byResource.set(storageResource, { storageApiVersion, convert });
  }

  /** Stops converting `storageResource` (single-version, or deleted). */
  delete(storageResource: string): void {
    this.#byResource.delete(storageResource);
  }

  /** The context a request to `type` runs with: `ctx` itself unless the type converts. */
  contextFor(ctx: ResourceContext, type: ResourceType): ResourceContext {
    if (type.messageType !== '') return ctx;
    const entry = this.#byResource.get(type.storageResource);
    if (entry === undefined) return ctx;
    return {
      ...ctx,
      store: new ConvertingStore(
        ctx.store,
        `/${type.storageResource}/`,
        type.apiVersion,
        entry.storageApiVersion,
        entry.convert,
      ),
      watchCaches: undefined,
    };
  }
}
