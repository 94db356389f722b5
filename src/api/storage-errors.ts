/**
 * Storage failures in API terms: what a storage error that escapes a handler means to a client.
 * Handlers map NotFound, AlreadyExists and Conflict themselves (they know the object's name);
 * this covers the rest, for the error handler and for errors that end a watch stream.
 */
import { InvalidContinueError, isStorageError, RevisionTooLargeError } from '../../storage/errors.js';
import {
  ApiError,
  badRequest,
  expired,
  internalError,
  serviceUnavailable,
  tooLargeResourceVersion,
} from './errors.js';

/**
 * The ApiError of `err` when it is one or a storage error; `undefined` for anything else (the
 * caller decides: a fastify client error keeps its 4xx, the rest is a 500).
 */
export function storageApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof RevisionTooLargeError) {
    return tooLargeResourceVersion(err.requestedRevision, err.currentRevision);
  }
  if (err instanceof InvalidContinueError) {
    // kube's words: its store's prefix, then its token decoder's.
    return badRequest(`invalid continue token: continue key is not valid: ${err.reason}`);
  }
  if (!isStorageError(err)) return undefined;
  switch (err.code) {
    case 'STORAGE_COMPACTED':
      return expired(`The resourceVersion for the provided list is too old.`);
    case 'STORAGE_UNAVAILABLE':
      return serviceUnavailable('storage is unavailable');
    case 'STORAGE_LEASE_NOT_FOUND':
      // An event lease revoked behind our back; kube-apiserver answers etcd's refusal the same way.
      return internalError('storage lease not found');
    default:
      // NotFound, AlreadyExists and Conflict carry no resource name here: handlers must map
      // them with context. Reaching this line is a handler bug.
      return internalError('unexpected storage outcome');
  }
}
