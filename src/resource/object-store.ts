/**
 * What the resource handlers read, watch and start writes from: one store of a server's objects
 * that keeps the resourceVersion rules (read-plan.ts) and decides by itself where each answer
 * comes from (the watch cache or storage: cached-store.ts), so handlers never choose. Writes
 * themselves go to the raw {@link Store} (`ctx.store`), guarded by the mod revision of the copy
 * {@link ObjectStore.guaranteedUpdate} handed out.
 */
import { ConflictError, type NotFoundError } from '../../storage/errors.js';
import type { KeySpan, KeyValue } from '../../storage/interface.js';
import type { KubeObject } from '../api/object.js';
import type { ResourceType } from '../registry/types.js';
import type { ListMetaValues, ObjectSource, Representation } from '../representation/types.js';
import type { CacheScope } from '../watchcache/scope.js';
import type { Target } from './context.js';
import type { ListPlan, WatchPlan } from './read-plan.js';
import type { Selection } from './selection.js';

/** One stored object: its key-value (bytes, revisions) and its parse (with resourceVersion). */
export interface StoredObject {
  /**
   * `lease` is 0 on the copy {@link ObjectStore.guaranteedUpdate} starts from when it is the watch
   * cache's, and `createRevision` is 0 there unless the cache had it from a watch event.
   */
  readonly kv: KeyValue;
  /** A private parse, in the form of the asked type's version: the caller may change it. */
  readonly obj: KubeObject;
}

/** A collection read: its list metadata and its objects (cached versions or stored bytes). */
export interface CollectionRead {
  readonly meta: ListMetaValues;
  readonly sources: Iterable<ObjectSource>;
}

/** The selected items of one storage list read, and where it ended. */
export interface ListPage {
  readonly items: readonly KeyValue[];
  readonly revision: bigint;
  readonly continue?: string;
  /** Items after this page (only when the read was unfiltered). */
  readonly remaining?: number;
}

/** The keys a watch covers (a collection, or one key) with its selectors, and their span. */
export type WatchScope = CacheScope & { readonly span: KeySpan };

/** An open watch: its events as frames of the request's representation; `close` is idempotent. */
export interface EventStream {
  frames(): AsyncIterable<Uint8Array>;
  close(): void;
}

/** An attempt that lost a race with another writer (the store's compare failed): try again. */
export const RACED: unique symbol = Symbol('raced');

/**
 * A write that lost a race and learned from it the object as it is now: `current` is the
 * key-value the failed compare found (undefined: the key is gone). The next attempt starts from
 * it without reading storage again, as kube's GuaranteedUpdate retries from its transaction's
 * failure branch.
 */
export interface RacedWith {
  readonly racedWith: KeyValue | undefined;
}

/** The outcome of an attempt whose write failed with `err`: see {@link RacedWith}. */
export function racedWith(err: ConflictError | NotFoundError): RacedWith {
  return { racedWith: err instanceof ConflictError ? err.current : undefined };
}

/**
 * How one attempt of {@link ObjectStore.guaranteedUpdate} ended, besides throwing (a thrown
 * error is the answer, whatever copy the attempt saw):
 * - `done`: the answer (written, or final whatever the copy);
 * - `unchanged`: nothing to write — its function makes the answer on a current copy (on a
 *   copy that may be stale it is never called);
 * - `rejected`: the attempt refused the object (preconditions, admission, validation) — the
 *   error on a current copy;
 * - {@link RACED}: the write lost a race; the next attempt reads the object again;
 * - {@link RacedWith}: the write lost a race and the next attempt starts from the state it found.
 */
export type WriteOutcome<T> =
  | { readonly done: T }
  | { readonly unchanged: () => T }
  | { readonly rejected: unknown }
  | RacedWith
  | typeof RACED;

/** One attempt of a write on the object's copy (undefined: absent); `attempt` counts from 1. */
export type WriteAttempt<T> = (stored: StoredObject | undefined, attempt: number) => Promise<WriteOutcome<T>>;

/** The objects of a server as the resource handlers see them. */
export interface ObjectStore {
  /**
   * The JSON bytes (resourceVersion set) of one object, or undefined when absent: not older than
   * `minRevision`, or Most Recent (a consistent read) when it is undefined.
   * @throws ApiError 504 for a resourceVersion the server does not reach in time.
   */
  item(type: ResourceType, key: string, minRevision: bigint | undefined): Promise<Buffer | undefined>;

  /**
   * The selected objects of the collection of `target` under `plan`.
   * @throws ApiError 410 (compacted revision or expired continue token), 504 (revision not reached).
   */
  collection(target: Target, selection: Selection, plan: ListPlan): Promise<CollectionRead>;

  /**
   * One page of the collection of `target` under `plan`, read from storage as stored key-values:
   * what deletecollection deletes.
   * @throws ApiError as {@link collection}; the store's errors of `range`.
   */
  page(target: Target, selection: Selection, plan: ListPlan): Promise<ListPage>;

  /**
   * Opens a watch of `scope` under `plan`, its events encoded by `rep`. A start older than the
   * retained history is one `ERROR` frame (410). `kind`/`apiVersion` of bookmarks are `type`'s.
   * @throws ApiError 504 for a revision not reached in time; storage errors of the initial read.
   */
  watch(type: ResourceType, scope: WatchScope, plan: WatchPlan, rep: Representation): Promise<EventStream>;

  /** The object as stored now (a consistent read), or undefined when absent. */
  current(type: ResourceType, key: string): Promise<StoredObject | undefined>;

  /**
   * Runs `attempt` until it ends (kube's GuaranteedUpdate): the first copy may be the watch
   * cache's (not for a dry run, which writes nothing that a compare could refuse); the caller
   * writes with a compare on the copy's mod revision, so a stale copy loses the race. An attempt
   * on a copy that may be stale and is `rejected` or `unchanged` runs again on storage's copy;
   * {@link RACED} runs again on storage's copy. The caller bounds its attempts (it may answer
   * {@link RACED} as often as it likes).
   */
  guaranteedUpdate<T>(
    type: ResourceType,
    key: string,
    options: { readonly dryRun: boolean },
    attempt: WriteAttempt<T>,
  ): Promise<T>;
}
