/**
 * Reading objects as stored now, the answer a write gives without storing (dry runs), and the
 * write options every verb shares (event leases).
 * Storage errors that carry no resource name are mapped here, with the object's identity, to the
 * API errors clients expect.
 */
import { isStorageError } from '../../storage/errors.js';
import type { KeyValue, UpdateOptions } from '../../storage/interface.js';
import { conflict, notFound, type ApiError } from '../api/errors.js';
import { withResourceVersion, type KubeObject } from '../api/object.js';
import type { ResourceType } from '../registry/types.js';
import { qualified, type ResourceContext } from './context.js';
import { objectKey } from './keys.js';
import type { StoredObject } from './object-store.js';

/** Kube's optimistic-concurrency message (`OptimisticLockErrorMsg`). */
export const OPTIMISTIC_LOCK_MESSAGE =
  'the object has been modified; please apply your changes to the latest version and try again';

/**
 * The object as stored now (a consistent read), or undefined when absent; in the form of
 * `type`'s version.
 */
export function readObject(
  ctx: ResourceContext,
  type: ResourceType,
  namespace: string | undefined,
  name: string,
): Promise<StoredObject | undefined> {
  return ctx.objects.current(type, objectKey(type, namespace, name));
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

/**
 * The options of an update of `current` (the version the caller read): the compare on its mod
 * revision, and the lease to write. A type with an event TTL gets the event lease (none named when
 * TTLs are off: the key keeps what it has); every other type is written with no lease (`0n`), as
 * kube writes it, which its keys never had anyway. With the lease named and the version's create
 * revision known, a store need not read either back (`UpdateOptions.createRevision`).
 */
export async function updateOptions(
  ctx: ResourceContext,
  type: ResourceType,
  current: KeyValue,
): Promise<UpdateOptions> {
  const lease = ctx.strategies.of(type).eventTTL ? await ctx.eventLeases.leaseFor() : 0n;
  return {
    ifModRevision: current.modRevision,
    ...(lease === undefined ? {} : { lease }),
    // 0 when unknown (a copy from the watch cache's listing).
    ...(current.createRevision > 0n ? { createRevision: current.createRevision } : {}),
  };
}

/** True for a storage error of the given code. */
export function isStorageCode(err: unknown, code: string): boolean {
  return isStorageError(err) && err.code === code;
}

/**
 * What a read would give of `obj` at `revision` had it been stored: the answer of a write that
 * stores nothing (a dry run, an update that deletes), as kube passes such answers through its
 * storage codec too.
 */
export function answerAsRead(ctx: ResourceContext, obj: KubeObject, revision: bigint): Buffer {
  return withResourceVersion(ctx.storedForm(ctx.encode(obj)), revision);
}
