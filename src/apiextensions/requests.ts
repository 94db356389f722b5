/**
 * What a request to a custom resource runs with, by storage resource: multi-version kinds, and
 * kinds whose schemas have defaults, get a resource context whose store converts to the
 * request's version and applies the schema's defaults to what it reads (converting-store.ts:
 * kube defaults on read from storage too), and whose reads skip the watch cache (the cache holds
 * stored objects as they are); a kind whose CRD is being deleted refuses
 * creates as kube does (405 `create not allowed while custom resource definition is
 * terminating`).
 */
import { ApiError } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import { storageOnlyContext, type ResourceContext } from '../resource/context.js';
import type { KubeObject } from '../api/object.js';
import { ConvertingStore, type ConvertObjects } from './converting-store.js';

/** How one storage resource's objects are read and written. */
export interface CrdStorageRules {
  /** The storage version's apiVersion. */
  readonly storageApiVersion: string;
  /** Conversion between versions. */
  readonly convert: ConvertObjects;
  /** Defaulting of an object read from storage (in place), when the schemas have defaults. */
  readonly readDefaults?: (obj: KubeObject) => void;
}

/** One server's custom resource request rules. */
export class CrdRequests {
  readonly #byResource = new Map<string, CrdStorageRules>();
  readonly #terminating = new Set<string>();

  /** Reads and writes objects of `storageResource` by `rules`. */
  set(storageResource: string, rules: CrdStorageRules): void {
    this.#byResource.set(storageResource, rules);
  }

  /** Stops converting and defaulting `storageResource` (nothing to do, or deleted). */
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
    const store = new ConvertingStore(
      ctx.store,
      `/${type.storageResource}/`,
      type.apiVersion,
      entry.storageApiVersion,
      entry.convert,
      entry.readDefaults,
    );
    return storageOnlyContext(ctx, store);
  }
}
