/**
 * The boundary between `etcd3` client errors and the storage errors of `storage/errors.ts`.
 *
 * The etcd3 client turns each gRPC status into an error class per status code (it drops the
 * numeric code itself), so classification here is by class, i.e. by gRPC code, never by message.
 * The one class the client picks from message text is its lease-not-found error (gRPC NOT_FOUND
 * carries no other detail); that is the client's matching, named in one place below.
 *
 * etcd answers both "compacted" and "future revision" with OUT_OF_RANGE; telling them apart
 * needs the current revision, which the store does (see `compaction.ts`), not this module.
 */
import {
  ClientClosedError,
  EtcdError,
  EtcdLeaseInvalidError,
  EtcdPermissionDeniedError,
  GRPCAbortedError,
  GRPCCancelledError,
  GRPCDeadlineExceededError,
  GRPCGenericError,
  GRPCInternalError,
  GRPCInvalidArgumentError,
  GRPCNotFoundError,
  GRPCOutOfRangeError,
  GRPCResourceExhastedError,
  GRPCUnauthenticatedError,
  GRPCUnavailableError,
  GRPCUnknownError,
} from 'etcd3';
import { isStorageError, UnavailableError } from '../errors.js';
import { MemberSkippedError } from './host-gate.js';

/** Why etcd refused a request in a way no storage error describes. */
export type EtcdRequestErrorReason = 'lease-not-found' | 'invalid-argument' | 'permission-denied' | 'other';

/**
 * etcd rejected a request for a reason outside the storage contract (an unknown or expired lease,
 * a request over etcd's size limit, missing permissions). Not a `StorageError`: callers treat it
 * as an internal error. `cause` holds the client's error.
 */
export class EtcdRequestError extends Error {
  constructor(
    readonly reason: EtcdRequestErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'EtcdRequestError';
  }
}

/** OUT_OF_RANGE: the revision is compacted or in the future (see the module comment). */
export function isOutOfRange(err: unknown): boolean {
  return err instanceof GRPCOutOfRangeError;
}

/**
 * The lease named in the request does not exist (expired or revoked). etcd sends NOT_FOUND; the
 * client maps that status to `EtcdLeaseInvalidError` by its message, or leaves the generic class.
 */
export function isLeaseNotFound(err: unknown): boolean {
  return err instanceof EtcdLeaseInvalidError || err instanceof GRPCNotFoundError;
}

/**
 * True when the request may succeed if tried again: the connection failed, the call timed out,
 * or etcd was between leaders. Only idempotent calls are retried on this.
 */
export function isTransient(err: unknown): boolean {
  return (
    err instanceof GRPCUnavailableError ||
    err instanceof GRPCDeadlineExceededError ||
    err instanceof GRPCCancelledError ||
    err instanceof GRPCAbortedError ||
    err instanceof GRPCResourceExhastedError ||
    err instanceof GRPCInternalError ||
    err instanceof GRPCUnknownError ||
    err instanceof MemberSkippedError ||
    // A generic gRPC error without a status code: the call failed below gRPC (socket, TLS).
    (err instanceof GRPCGenericError && err.constructor === GRPCGenericError)
  );
}

/**
 * Maps any error of an etcd call to what the store throws: storage errors pass through,
 * transient and closed-client errors become {@link UnavailableError}, requests etcd refused
 * become {@link EtcdRequestError}; anything else (a bug, not an etcd answer) is returned as it is.
 * `what` names the operation for the message.
 */
export function toStoreError(err: unknown, what: string): unknown {
  if (isStorageError(err) || err instanceof EtcdRequestError) return err;
  if (err instanceof ClientClosedError)
    return new UnavailableError(`etcd ${what}: the store is closed`, { cause: err });
  if (isTransient(err)) return new UnavailableError(`etcd ${what}: etcd is unavailable`, { cause: err });
  if (isLeaseNotFound(err))
    return new EtcdRequestError('lease-not-found', `etcd ${what}: lease not found`, { cause: err });
  if (err instanceof GRPCInvalidArgumentError) {
    return new EtcdRequestError('invalid-argument', `etcd ${what}: request rejected by etcd`, { cause: err });
  }
  if (err instanceof EtcdPermissionDeniedError || err instanceof GRPCUnauthenticatedError) {
    return new EtcdRequestError('permission-denied', `etcd ${what}: permission denied`, { cause: err });
  }
  if (err instanceof GRPCGenericError || err instanceof EtcdError) {
    return new EtcdRequestError('other', `etcd ${what} failed`, { cause: err });
  }
  return err;
}
