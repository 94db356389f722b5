/**
 * A watch served by storage for one request (no watch cache: `--watch-cache=false`, a type whose
 * cache is off, a cache still warming, or history from before the cache started), and the watch
 * frames both kinds of watch share (ERROR, BOOKMARK).
 */
import { CompactedError } from '../../storage/errors.js';
import type { KeySpan, KeyValue, Store, Watch } from '../../storage/interface.js';
import { storageApiError } from '../api/storage-errors.js';
import { expired, internalError } from '../api/errors.js';
import { decodeStored, type KubeObject } from '../api/object.js';
import type { ResourceType } from '../registry/types.js';
import { StoredSource, ValueSource } from '../representation/source.js';
import type { Representation, WatchEventType } from '../representation/types.js';
import { awaitStoreRevision } from './freshness.js';
import type { EventStream } from './object-store.js';
import { INITIAL_EVENTS_END_ANNOTATION, type WatchPlan } from './read-plan.js';
import type { ObjectFilter } from '../watchcache/scope.js';
import { blueprintAnnotation, LIST_BLUEPRINT_ANNOTATION } from '../representation/list-blueprint.js';

/** An `ERROR` event with the Status of `err` (a compacted start: kube's 410 `Expired`). */
export function errorFrame(rep: Representation, err: unknown): Uint8Array {
  const apiError =
    err instanceof CompactedError
      ? expired(`too old resource version: ${err.requestedRevision} (${err.compactedRevision})`)
      : (storageApiError(err) ?? internalError());
  return rep.event('ERROR', new ValueSource(apiError.toStatus() as unknown as KubeObject));
}

function bookmarkFrame(
  rep: Representation,
  type: ResourceType,
  revision: bigint,
  initialEnd: boolean,
): Uint8Array {
  const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
  if (initialEnd) metadata['annotations'] = initialEventsEndAnnotations(rep);
  const { kind, apiVersion } = type;
  return rep.event('BOOKMARK', new ValueSource({ kind, apiVersion, metadata }));
}

/**
 * The annotations of the initial-events-end bookmark: the end mark and, where `rep` has one, the
 * list blueprint (kube v1.33's WatchList).
 */
export function initialEventsEndAnnotations(rep: Representation): Record<string, string> {
  const blueprint = rep.listBlueprint?.();
  return {
    [INITIAL_EVENTS_END_ANNOTATION]: 'true',
    ...(blueprint === undefined ? {} : { [LIST_BLUEPRINT_ANNOTATION]: blueprintAnnotation(blueprint) }),
  };
}

/** One stored version as a watch event in `rep`. */
function storedFrame(
  rep: Representation,
  type: WatchEventType,
  value: Uint8Array,
  revision: bigint,
): Uint8Array {
  return rep.event(type, new StoredSource(value, revision));
}

/** A storage watch of one request, with its initial state read from storage. */
class StorageWatch implements EventStream {
  readonly #type: ResourceType;
  readonly #selection: ObjectFilter;
  readonly #watch: Watch;
  readonly #initial: readonly KeyValue[];
  readonly #initialEnd: bigint | undefined;
  readonly #bookmarks: boolean;
  readonly #rep: Representation;

  constructor(
    rep: Representation,
    type: ResourceType,
    selection: ObjectFilter,
    watch: Watch,
    initial: readonly KeyValue[],
    initialEnd: bigint | undefined,
    bookmarks: boolean,
  ) {
    this.#type = type;
    this.#selection = selection;
    this.#watch = watch;
    this.#initial = initial;
    this.#initialEnd = initialEnd;
    this.#bookmarks = bookmarks;
    this.#rep = rep;
  }

  close(): void {
    this.#watch.close();
  }

  #selected(kv: KeyValue, revision: bigint): boolean {
    return this.#selection.everything || this.#selection.matches(decodeStored(kv.value, revision));
  }

  async *frames(): AsyncGenerator<Uint8Array> {
    const everything = this.#selection.everything;
    const rep = this.#rep;
    try {
      for (const kv of this.#initial) {
        if (this.#selected(kv, kv.modRevision)) yield storedFrame(rep, 'ADDED', kv.value, kv.modRevision);
      }
      if (this.#initialEnd !== undefined) yield bookmarkFrame(rep, this.#type, this.#initialEnd, true);
      for await (const ev of this.#watch) {
        if (ev.type === 'progress') {
          if (this.#bookmarks) yield bookmarkFrame(rep, this.#type, ev.revision, false);
          continue;
        }
        if (ev.type === 'delete') {
          if (this.#selected(ev.prevKv, ev.revision))
            yield storedFrame(rep, 'DELETED', ev.prevKv.value, ev.revision);
          continue;
        }
        const now = everything || this.#selected(ev.kv, ev.kv.modRevision);
        const before = ev.prevKv !== undefined && (everything || this.#selected(ev.prevKv, ev.revision));
        if (now) yield storedFrame(rep, before ? 'MODIFIED' : 'ADDED', ev.kv.value, ev.kv.modRevision);
        else if (before && ev.prevKv !== undefined)
          yield storedFrame(rep, 'DELETED', ev.prevKv.value, ev.revision);
      }
    } catch (err) {
      // Errors after the headers went out travel in-band, as kube-apiserver's ERROR events.
      yield errorFrame(rep, err);
    } finally {
      this.close();
    }
  }
}

/** How {@link openStorageWatch} reaches storage. */
export interface StorageWatchOptions {
  readonly store: Store;
  /** Progress interval of a watch with bookmarks (ms). */
  readonly bookmarkIntervalMs: number;
  /** How long a start at a revision not reached yet waits before 504 (ms). */
  readonly freshnessTimeoutMs: number;
}

/**
 * A storage watch of `span` under `plan`: from a revision, only the changes after it; else the
 * state at the current revision (or, with a revision, not older than it) first.
 * @throws ApiError 504 for a revision the store does not reach in time; errors of the read.
 */
export async function openStorageWatch(
  o: StorageWatchOptions,
  rep: Representation,
  type: ResourceType,
  plan: WatchPlan,
  selection: ObjectFilter,
  span: KeySpan,
): Promise<EventStream> {
  const watchOptions = plan.bookmarks ? { progressIntervalMs: o.bookmarkIntervalMs } : {};
  if (typeof plan.from === 'bigint' && !plan.initialEvents) {
    const watch = o.store.watch(span, { ...watchOptions, fromRevision: plan.from + 1n });
    return new StorageWatch(rep, type, selection, watch, [], undefined, plan.bookmarks);
  }
  if (typeof plan.from === 'bigint' && plan.from !== 0n) {
    await awaitStoreRevision(o.store, plan.from, o.freshnessTimeoutMs);
  }
  const state = await o.store.range(span);
  const watch = o.store.watch(span, { ...watchOptions, fromRevision: state.revision + 1n });
  const initial = plan.initialEvents ? state.items : [];
  const end = plan.initialEventsEnd ? state.revision : undefined;
  return new StorageWatch(rep, type, selection, watch, initial, end, plan.bookmarks);
}
