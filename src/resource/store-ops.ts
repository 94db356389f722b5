/**
 * Reading objects as stored now and the write options every verb shares (event leases).
 * Storage errors that carry no resource name are mapped here, with the object's identity, to the
 * API errors clients expect.
 */
import { isStorageError } from '../../storage/errors.js';
import { conflict, notFound, type ApiError } from '../api/errors.js';
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

/** True for a storage error of the given code. */
export function isStorageCode(err: unknown, code: string): boolean {
  return isStorageError(err) && err.code === code;
}
