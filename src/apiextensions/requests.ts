/**
 * What a request to a custom resource runs with, by storage resource: multi-version kinds get a
 * resource context whose store converts (converting-store.ts) and whose reads skip the watch
 * cache (the cache holds the storage version); a kind whose CRD is being deleted refuses
 * creates as kube does (405 `create not allowed while custom resource definition is
 * terminating`).
 */
import { ApiError } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import type { ResourceContext } from '../resource/context.js';
import { ConvertingStore, type ConvertObjects } from './converting-store.js';

interface Entry {
  readonly storageApiVersion: string;
  readonly convert: ConvertObjects;
}

/** One server's custom resource request rules. */
export class CrdRequests {
  readonly #byResource = new Map<string, Entry>();
  readonly #terminating = new Set<string>();

  /** Converts objects of `storageResource` with `convert`; stored in `storageApiVersion`. */
  set(storageResource: string, storageApiVersion: string, convert: ConvertObjects): void {
    this.#byResource.set(storageResource, { storageApiVersion, convert });
  }

  /** Stops converting `storageResource` (single-version, or deleted). */
  delete(storageResource: string): void {
    this.#byResource.delete(storageResource);
  }

  /** Marks `storageResource`'s CRD as being deleted (true) or not. */
  setTerminating(storageResource: string, terminating: boolean): void {
    if (terminating) this.#terminating.add(storageResource);
    else this.#terminating.delete(storageResource);
  }

  /**
   * The context a `method` request to `type` runs with: `ctx` itself unless the type converts.
   * @throws ApiError 405 for a create of a kind whose CRD is terminating.
   */
  contextFor(ctx: ResourceContext, type: ResourceType, method: string): ResourceContext {
    if (type.messageType !== '') return ctx;
    if (method === 'POST' && this.#terminating.has(type.storageResource)) {
      throw new ApiError(
        'MethodNotAllowed',
        'create not allowed while custom resource definition is terminating',
        { ...(type.group === '' ? {} : { group: type.group }), kind: type.plural },
      );
    }
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
