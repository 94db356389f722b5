/**
 * Reading objects from the store and the write options every verb shares (event leases).
 * Storage errors that carry no resource name are mapped here, with the object's identity, to the
 * API errors clients expect.
 */
import type { KeyValue } from '../../storage/interface.js';
import { isStorageError } from '../../storage/errors.js';
import { conflict, notFound, type ApiError } from '../api/errors.js';
import type { ResourceType } from '../registry/types.js';
import { qualified, type ResourceContext } from './context.js';
import { objectKey } from './keys.js';
import { decodeStored, type KubeObject } from '../api/object.js';
import { conversionTo } from '../conversion/index.js';

/** Kube's optimistic-concurrency message (`OptimisticLockErrorMsg`). */
export const OPTIMISTIC_LOCK_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/** One stored object: its key-value (bytes, revisions) and its parse (with resourceVersion). */
export interface StoredObject {
  /** From the watch cache (`lease` and `createRevision` are then unknown, 0): may be stale. */
  readonly kv: KeyValue;
  readonly obj: KubeObject;
  /** True when read from the watch cache rather than storage. */
  readonly cached: boolean;
}

/**
 * The stored object, or undefined when absent. Reads at the current revision; with `cached`,
 * the type's ready watch cache answers when it holds the object — the object may then be stale,
 * which a write guarded by its mod revision finds out (kube's GuaranteedUpdate starts from its
 * cache the same way). An object the cache lacks is read from storage.
 */
export async function readObject(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
  options: { readonly cached?: boolean } = {},
): Promise<StoredObject | undefined> {
  const key = objectKey(type, namespace, name);
  if (options.cached === true) {
    const cache = ctx.watchCaches?.for(type);
    const version = cache?.ready === true ? cache.get(key) : undefined;
    if (version !== undefined) {
      const kv: KeyValue = {
        key,
        value: version.value,
        createRevision: 0n,
        modRevision: version.revision,
        lease: 0n,
      };
      return { kv, obj: inThisVersion(type, decodeStored(kv.value, kv.modRevision)), cached: true };
    }
  }
  const { kv } = await ctx.store.get(key);
  if (kv === undefined) return undefined;
  return { kv, obj: inThisVersion(type, decodeStored(kv.value, kv.modRevision)), cached: false };
}

function inThisVersion(type: ResourceType, obj: KubeObject): KubeObject {
  // An object stored by another version of the kind (core/events.k8s.io Events), in this one's form.
  const convert = conversionTo(type);
  return convert === undefined ? obj : convert(obj);
}

/** Like {@link readObject}, but a missing object is the 404 of `type`/`name`. */
export async function mustReadObject(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
): Promise<StoredObject> {
  const found = await readObject(ctx, type, namespace, name);
  if (found === undefined) throw notFound(qualified(type, name));
  return found;
}

/** The 409 of a stale resourceVersion. */
export function staleConflict(type: ResourceType, name: string): ApiError {
  return conflict(qualified(type, name), OPTIMISTIC_LOCK_MESSAGE);
}

/** The lease an object of `type` is written with (events carry `--event-ttl`), if any. */
export async function leaseFor(ctx: ResourceContext, type: ResourceType): Promise<bigint | undefined> {
  return ctx.strategies.of(type).eventTTL ? ctx.eventLeases.leaseFor() : undefined;
}

/** True for a storage error of the given code. */
export function isStorageCode(err: unknown, code: string): boolean {
  return isStorageError(err) && err.code === code;
}
