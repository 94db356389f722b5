/**
 * Typed storage errors. Each class has a stable `code`; callers switch on `code` (or use
 * `instanceof`), never on messages. Backends wrap their client's errors at the boundary so that
 * nothing above `storage/` sees an etcd or LevelDB error.
 *
 * | code                        | meaning                                                   |
 * |-----------------------------|-----------------------------------------------------------|
 * | STORAGE_NOT_FOUND           | the key does not exist                                    |
 * | STORAGE_ALREADY_EXISTS      | create of a key that exists                               |
 * | STORAGE_CONFLICT            | a mod-revision compare failed; carries the current kv     |
 * | STORAGE_COMPACTED           | the revision is older than retained history               |
 * | STORAGE_REVISION_TOO_LARGE  | the revision has not been reached yet                     |
 * | STORAGE_INVALID_CONTINUE    | a continue token is garbled, forged or of another span    |
 * | STORAGE_UNAVAILABLE         | the backend cannot serve (closed, unreachable, timed out) |
 * | STORAGE_LEASE_NOT_FOUND     | a write named a lease that expired, was revoked or never was |
 */
import type { KeyValue } from './interface.js';

export type StorageErrorCode =
  | 'STORAGE_NOT_FOUND'
  | 'STORAGE_ALREADY_EXISTS'
  | 'STORAGE_CONFLICT'
  | 'STORAGE_COMPACTED'
  | 'STORAGE_REVISION_TOO_LARGE'
  | 'STORAGE_INVALID_CONTINUE'
  | 'STORAGE_UNAVAILABLE'
  | 'STORAGE_LEASE_NOT_FOUND';

export abstract class StorageError extends Error {
  abstract readonly code: StorageErrorCode;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class NotFoundError extends StorageError {
  readonly code = 'STORAGE_NOT_FOUND';
  constructor(readonly key: string) {
    super(`key ${JSON.stringify(key)} not found`);
  }
}

export class AlreadyExistsError extends StorageError {
  readonly code = 'STORAGE_ALREADY_EXISTS';
  constructor(
    readonly key: string,
    /** The existing key, when the backend knows it without another read. */
    readonly current?: KeyValue,
  ) {
    super(`key ${JSON.stringify(key)} already exists`);
  }
}

export class ConflictError extends StorageError {
  readonly code = 'STORAGE_CONFLICT';
  constructor(
    readonly key: string,
    readonly expectedModRevision: bigint | undefined,
    /** The key as it is now (undefined when it no longer exists). */
    readonly current: KeyValue | undefined,
    /** The store's revision when the compare failed. */
    readonly revision: bigint,
  ) {
    super(
      `key ${JSON.stringify(key)}: expected mod revision ${String(expectedModRevision)}, ` +
        `found ${current ? String(current.modRevision) : 'no key'}`,
    );
  }
}

export class CompactedError extends StorageError {
  readonly code = 'STORAGE_COMPACTED';
  constructor(
    readonly requestedRevision: bigint,
    readonly compactedRevision: bigint,
  ) {
    super(`revision ${requestedRevision} has been compacted (compacted revision ${compactedRevision})`);
  }
}

export class RevisionTooLargeError extends StorageError {
  readonly code = 'STORAGE_REVISION_TOO_LARGE';
  constructor(
    readonly requestedRevision: bigint,
    readonly currentRevision: bigint,
  ) {
    super(`revision ${requestedRevision} is newer than the current revision ${currentRevision}`);
  }
}

export class InvalidContinueError extends StorageError {
  readonly code = 'STORAGE_INVALID_CONTINUE';
  /** What is wrong with the token. */
  readonly reason: string;
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`invalid continue token: ${reason}`, options);
    this.reason = reason;
  }
}

export class UnavailableError extends StorageError {
  readonly code = 'STORAGE_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A put named a lease the store does not have (expired, revoked, or never granted). Checked
 * after the write's conditions: a write whose compare fails reports that failure instead.
 */
export class LeaseNotFoundError extends StorageError {
  readonly code = 'STORAGE_LEASE_NOT_FOUND';
  constructor(readonly lease: bigint) {
    super(`lease ${lease} not found`);
  }
}

/** True for errors of this module (and only them). */
export function isStorageError(err: unknown): err is StorageError {
  return err instanceof StorageError;
}
