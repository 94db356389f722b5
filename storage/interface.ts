/**
 * The storage contract: an MVCC revision log over string keys and byte values.
 *
 * Every backend (the embedded log on abstract-level, remote etcd v3) implements {@link Store}
 * and passes the shared conformance suite in `test/storage/store.case.ts`. Callers never branch
 * on the backend class, only on {@link StoreCapabilities}.
 *
 * ## Revisions
 * - One increasing revision counter for the whole store. Every successful write (create, update,
 *   delete, lease-expiry delete) takes the next revision; failed writes take none.
 * - Revisions are `bigint` in code. Revision `0n` never names a state after the first write.
 *   A fresh store is at a small revision: `0n` for the embedded log; etcd starts at `1n`, and the
 *   etcd backend records its shared continue-token secret on first open (one more revision)
 *   unless it is given one. Callers compare revisions, never assume a starting value.
 * - A read "at revision R" sees exactly the writes with revision ≤ R.
 *
 * ## Compaction
 * `compact(R)` discards history strictly before R. Afterwards:
 * - reads at any revision ≥ R succeed and see the same data as before compaction;
 * - reads at a revision < R fail with {@link CompactedError};
 * - watches from a revision > R succeed; watches from a revision < R fail with `CompactedError`;
 *   a watch from exactly R is backend-defined (etcd may drop a delete made at exactly R), so
 *   callers watch from `listRevision + 1`, which is always > R for any readable list revision.
 * - continue tokens whose revision is < R fail with `CompactedError`.
 *
 * ## Keys and values
 * Keys are non-empty strings compared by their UTF-8 bytes (the order etcd and LevelDB use).
 * Values are opaque bytes; backends must not retain a caller's buffer after the call returns
 * unless they copied it, and callers must not mutate buffers they receive.
 */

/** A key's value at some revision, as etcd's `mvccpb.KeyValue`. */
export interface KeyValue {
  readonly key: string;
  /** Empty when the read was `keysOnly`. */
  readonly value: Uint8Array;
  /** Revision of the write that created this incarnation of the key. */
  readonly createRevision: bigint;
  /** Revision of the last write to the key (≤ the read revision). */
  readonly modRevision: bigint;
  /** Lease the key is attached to, or `0n`. */
  readonly lease: bigint;
}

/** A contiguous key span: every key with `prefix`, or every key in `[start, end)`. */
export type KeySpan = { readonly prefix: string } | { readonly start: string; readonly end: string };

export interface GetOptions {
  /** Read at this revision. Unset: the current revision (a linearizable read). */
  readonly revision?: bigint;
}

export interface GetResult {
  /** The key at the read revision, or undefined when absent. */
  readonly kv: KeyValue | undefined;
  /** The revision the read was made at (the store's current revision when none was asked). */
  readonly revision: bigint;
}

export interface RangeOptions {
  /**
   * Read at this revision. Unset: current revision. Ignored when `continue` is given (the token
   * carries the revision); giving both with different values is an {@link InvalidContinueError}.
   */
  readonly revision?: bigint;
  /** At most this many items (> 0). Unset: all. */
  readonly limit?: number;
  /** A token from an earlier {@link RangeResult.continue} over the same span. */
  readonly continue?: string;
  /** Items carry empty values. */
  readonly keysOnly?: boolean;
  /** No items, only {@link RangeResult.count}. */
  readonly countOnly?: boolean;
}

export interface RangeResult {
  /** Items in key order (empty with `countOnly`). */
  readonly items: readonly KeyValue[];
  /** The revision the range was read at; the same for every chunk of one paged read. */
  readonly revision: bigint;
  /** True when items beyond `limit` remain in the span at that revision. */
  readonly more: boolean;
  /**
   * Number of keys in the span at `revision` from the start of this chunk (this chunk's items
   * plus those after it), as etcd's RangeResponse.count does; `remaining = count - items.length`.
   */
  readonly count: number;
  /** Opaque token to pass as `continue` for the next chunk; present exactly when `more`. */
  readonly continue?: string;
}

/** Options of {@link Store.create}. */
export interface CreateOptions {
  /** Attach the key to this lease (from {@link Store.grantLease}); it is deleted when the lease expires. */
  readonly lease?: bigint;
}

/** Options of {@link Store.update}. */
export interface UpdateOptions {
  /**
   * The write applies only if the key's current mod revision equals this value; otherwise
   * {@link ConflictError} carrying the current key-value. Required: blind overwrites go
   * through {@link Store.txn} with `ifModRevision: undefined` deliberately.
   */
  readonly ifModRevision: bigint;
  /** Attach to this lease (`0n` detaches). Unset: keep the key's current lease. */
  readonly lease?: bigint;
  /**
   * The key's create revision at `ifModRevision`, when the caller read that version. Given with
   * `lease`, a store may take both from here for the result's key-value instead of reading them
   * back in the same write (etcd does). A wrong value is the caller's error: it is not checked,
   * and only the result would carry it.
   */
  readonly createRevision?: bigint;
}

export interface DeleteOptions {
  /** Delete only if the key's current mod revision equals this value (else ConflictError). */
  readonly ifModRevision?: bigint;
}

/** Outcome of a successful write. */
export interface WriteResult {
  /** The revision of the write (the store's new current revision when it was made). */
  readonly revision: bigint;
  /** For puts: the key as written. For deletes: the value that was deleted. */
  readonly kv: KeyValue;
}

/**
 * The small transaction: compare one key's mod revision, then put or delete it, atomically.
 * `ifModRevision: 0n` means "the key must not exist"; `undefined` means "no compare".
 * Create, update and delete are this transaction with a fixed compare.
 */
export interface TxnRequest {
  readonly key: string;
  readonly ifModRevision: bigint | undefined;
  readonly then:
    { readonly op: 'put'; readonly value: Uint8Array; readonly lease?: bigint } | { readonly op: 'delete' };
}

/** A change in a watched span. */
export type WatchEvent =
  | {
      readonly type: 'put';
      /** Equal to `kv.modRevision`. */
      readonly revision: bigint;
      readonly kv: KeyValue;
      /** The key before this write; undefined when the put created it. */
      readonly prevKv: KeyValue | undefined;
    }
  | {
      readonly type: 'delete';
      readonly revision: bigint;
      /** The key at the delete: `key`, empty `value`, `modRevision` = the delete's revision. */
      readonly kv: KeyValue;
      /**
       * The value that was deleted (always known), except in a watch opened with
       * `previousValues: false`, where a backend may give only the key, with an empty value and
       * revisions 0.
       */
      readonly prevKv: KeyValue;
    }
  | {
      /** Every event with revision ≤ `revision` in the span has been delivered. */
      readonly type: 'progress';
      readonly revision: bigint;
    };

export interface WatchOptions {
  /**
   * First revision to deliver. Unset: `currentRevision() + 1` at the time of the call (only
   * future changes). May be in the future. Older than retained history: the iterator throws
   * {@link CompactedError} on its first `next()`.
   */
  readonly fromRevision?: bigint;
  /**
   * Emit a `progress` event at about this interval while the watch is idle (milliseconds).
   * Unset: only on {@link Watch.requestProgress}.
   */
  readonly progressIntervalMs?: number;
  /**
   * False: the caller keeps its own state of every key and reads no previous values (the watch
   * cache), so a backend may leave them out: a put's `prevKv` is then undefined and a delete's
   * holds only the key. etcd then reads no previous value per event and watcher. Default true.
   */
  readonly previousValues?: boolean;
}

/**
 * A watch over a key span: an async iterator of events in revision order, never skipping or
 * repeating a revision's events. Several events may share one revision (etcd transactions).
 *
 * It ends (returns) after {@link Watch.close}; it throws {@link CompactedError} when its position
 * falls out of history, and {@link UnavailableError} when the backend cannot continue it. A slow
 * consumer never blocks writers: backends either buffer within bounds and then re-read from
 * history, or end the watch with `CompactedError` once the position is gone.
 */
export interface Watch extends AsyncIterable<WatchEvent> {
  /** Ask for a `progress` event once all events up to the current revision are delivered. */
  requestProgress(): void;
  /** Stop the watch; pending `next()` calls resolve with `done`. Idempotent. */
  close(): void;
}

/** What a backend can do; callers and tests branch on this, never on the class. */
export interface StoreCapabilities {
  /** Name for logs and metrics: `leveldb`, `memory`, `etcd3`. */
  readonly backend: string;
  /** Data survives `close()` and reopening the same location. */
  readonly persistent: boolean;
  /** An acknowledged write survives a process crash (synced to disk or replicated). */
  readonly durable: boolean;
  /** Several processes may share the store (writes by others appear in watches). */
  readonly shared: boolean;
}

/** What a continue token stands for (see `continue-token.ts`). */
export interface ContinuePosition {
  /** The revision every chunk of the paged read is made at. */
  readonly revision: bigint;
  /** The last key already returned; the next chunk starts strictly after it. */
  readonly lastKey: string;
  /** Live keys of the span after `lastKey` at `revision`, when the issuer knew it. */
  readonly remaining?: number;
}

/** The storage engine's one interface. */
export interface Store {
  readonly capabilities: StoreCapabilities;

  /** The latest revision (a linearizable read on remote backends). */
  currentRevision(): Promise<bigint>;
  /** The revision history was last compacted at (`0n` if never). */
  compactedRevision(): Promise<bigint>;

  /**
   * One key. With `revision` above the current revision: {@link RevisionTooLargeError};
   * below the compacted revision: {@link CompactedError}.
   */
  get(key: string, options?: GetOptions): Promise<GetResult>;

  /**
   * A span in key order, at one revision, optionally paged. Errors as {@link Store.get}, plus
   * {@link InvalidContinueError} for a token that is garbled, forged, of another span, or of an
   * unknown version, and `CompactedError` for a token whose revision is no longer retained.
   */
  range(span: KeySpan, options?: RangeOptions): Promise<RangeResult>;

  /**
   * The continue token {@link Store.range} would issue for the chunk after `position` in `span`:
   * a cache that serves pages of this store's data at a revision the store retains issues tokens
   * that this store (and every replica sharing it) resumes. Synchronous, no I/O.
   */
  sealContinue(span: KeySpan, position: ContinuePosition): string;

  /**
   * What a continue token issued for `span` (by {@link Store.range} or
   * {@link Store.sealContinue}) stands for. Synchronous, no I/O.
   * @throws InvalidContinueError as {@link Store.range} does for the same token.
   */
  openContinue(span: KeySpan, token: string): ContinuePosition;

  /**
   * Create a key that must not exist ({@link AlreadyExistsError} if it does). A `lease` the store
   * does not have (expired, revoked, never granted): `LeaseNotFoundError`, checked after the
   * existence check; like every failed write it takes no revision. The same holds for the lease
   * of {@link Store.update} and of a put in {@link Store.txn}.
   */
  create(key: string, value: Uint8Array, options?: CreateOptions): Promise<WriteResult>;

  /**
   * Replace the value of an existing key whose mod revision is `ifModRevision`.
   * Missing key: {@link NotFoundError}. Other mod revision: {@link ConflictError}.
   */
  update(key: string, value: Uint8Array, options: UpdateOptions): Promise<WriteResult>;

  /** Delete an existing key ({@link NotFoundError} if absent; ConflictError on a failed compare). */
  delete(key: string, options?: DeleteOptions): Promise<WriteResult>;

  /**
   * The atomic compare-then-write. A failed compare rejects with {@link ConflictError} (for
   * `ifModRevision: 0n` on an existing key: {@link AlreadyExistsError}); a delete of an absent
   * key with no compare: {@link NotFoundError}.
   */
  txn(request: TxnRequest): Promise<WriteResult>;

  /** Watch a span; see {@link Watch}. */
  watch(span: KeySpan, options?: WatchOptions): Watch;

  /**
   * Discard history before `revision` (see the module comment). `revision` above current:
   * RevisionTooLargeError; at or below the compacted revision: a no-op.
   */
  compact(revision: bigint): Promise<void>;

  /** A lease that expires `ttlSeconds` (≥ 1) from now; its keys are deleted on expiry. */
  grantLease(ttlSeconds: number): Promise<bigint>;
  /** Expire a lease now, deleting its keys. Unknown lease: no-op. */
  revokeLease(lease: bigint): Promise<void>;

  /** Resolves when the store can serve reads and writes; rejects with {@link UnavailableError}. */
  checkHealth(): Promise<void>;

  /** Release resources; open watches end. Idempotent. */
  close(): Promise<void>;
}
