/**
 * watch (GET on a collection with `watch=1|true`). Where a watch starts follows the spec's watch
 * row and `sendInitialEvents` (read-plan.ts); the events come from the type's watch cache when it
 * is ready (src/watchcache/), else from a storage watch of this request alone (`--watch-cache=false`,
 * a type whose cache is off, or a cache still warming).
 *
 * - resourceVersion unset / `0`: synthetic `ADDED` events for the state at the start (a
 *   consistent read of the latest revision / whatever the cache holds), then every change after
 *   it; `N`: every change after N, no synthetic events; N older than retained history (the cache
 *   window, or storage's compaction): one `ERROR` event with kube's 410 `Expired` Status.
 * - `sendInitialEvents=true` (with resourceVersionMatch=NotOlderThan and allowWatchBookmarks):
 *   the state at a version not older than N as ADDED events, then a BOOKMARK annotated
 *   `k8s.io/initial-events-end: "true"`, then changes.
 * - Label and field selectors apply to both the old and the new object of a change: entering the
 *   selection is `ADDED`, leaving it `DELETED` (its last selected state at the change's
 *   resourceVersion), staying in it `MODIFIED`.
 * - `allowWatchBookmarks`: `BOOKMARK` events (only `metadata.resourceVersion`) when idle.
 * - The stream ends after `timeoutSeconds`, or a random time in [min, 2 × min) of
 *   `--min-request-timeout`, or when the client goes away.
 *
 * Events are encoded by the request's representation (JSON lines, protobuf frames, Tables); JSON
 * objects are the stored bytes with the resourceVersion spliced in, encoded once per version for
 * all watchers of the cache (parsed only when a selector has to look inside).
 */
import { CompactedError } from '../../storage/errors.js';
import type { KeySpan, KeyValue, Watch } from '../../storage/interface.js';
import { storageApiError } from '../api/storage-errors.js';
import { expired, internalError } from '../api/errors.js';
import { JsonRepresentation } from '../representation/json.js';
import { StoredSource, ValueSource } from '../representation/source.js';
import type { Representation, WatchEventType } from '../representation/types.js';
import type { WatchFrames } from '../watchcache/frames.js';
import type { CacheScope } from '../watchcache/scope.js';
import type { ResourceContext, Target } from './context.js';
import { requireRevision } from './freshness.js';
import { collectionSpan, objectKey } from './keys.js';
import { decodeStored, type KubeObject } from '../api/object.js';
import type { Query } from './query.js';
import { INITIAL_EVENTS_END_ANNOTATION, planWatch, type WatchPlan } from './read-plan.js';
import { Selection } from './selection.js';
import { watchSource } from './reads.js';

/** An open watch stream: its events in the request's representation, and a way to end it (idempotent). */
export interface WatchStream {
  lines(): AsyncIterable<Uint8Array>;
  close(): void;
}

function errorFrame(rep: Representation, err: unknown): Uint8Array {
  const apiError =
    err instanceof CompactedError
      ? expired(`too old resource version: ${err.requestedRevision} (${err.compactedRevision})`)
      : (storageApiError(err) ?? internalError());
  return rep.event('ERROR', new ValueSource(apiError.toStatus() as unknown as KubeObject));
}

function bookmarkFrame(
  rep: Representation,
  target: Target,
  revision: bigint,
  initialEnd: boolean,
): Uint8Array {
  const metadata: Record<string, unknown> = { resourceVersion: String(revision) };
  if (initialEnd) metadata['annotations'] = { [INITIAL_EVENTS_END_ANNOTATION]: 'true' };
  const { kind, apiVersion } = target.type;
  return rep.event('BOOKMARK', new ValueSource({ kind, apiVersion, metadata }));
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

/** The cache's frame encoders for `rep`; undefined for plain JSON (the cache's shared JSON frames). */
function cacheFrames(rep: Representation): WatchFrames | undefined {
  if (rep instanceof JsonRepresentation) return undefined;
  return {
    object: (type, version) => rep.event(type, version),
    value: (type, value) => rep.event(type, new ValueSource(value as unknown as KubeObject)),
  };
}

/** The key range a watch covers: one key when the field selector pins a name, else the collection. */
function watchScope(target: Target, selection: Selection): CacheScope & { readonly span: KeySpan } {
  const name = selection.fields.singleName;
  if (name !== undefined && (!target.type.namespaced || target.namespace !== undefined)) {
    const key = objectKey(target.type, target.namespace, name);
    return { prefix: key, key, selection, span: { start: key, end: `${key}\u0000` } };
  }
  const span = collectionSpan(target.type, target.namespace);
  return { prefix: 'prefix' in span ? span.prefix : '', selection, span };
}

/** Milliseconds until the server ends the watch. */
function timeoutMs(ctx: ResourceContext, plan: WatchPlan): number {
  if (plan.timeoutSeconds !== undefined) return plan.timeoutSeconds * 1000;
  const min = ctx.minRequestTimeoutSeconds > 0 ? ctx.minRequestTimeoutSeconds : 1800;
  return Math.floor(min * (1 + Math.random()) * 1000);
}

/** A stream that ends itself after a timeout. */
class TimedStream implements WatchStream {
  readonly #source: () => AsyncIterable<Uint8Array>;
  readonly #stop: () => void;
  readonly #timer: NodeJS.Timeout;

  constructor(source: () => AsyncIterable<Uint8Array>, stop: () => void, ms: number) {
    this.#source = source;
    this.#stop = stop;
    this.#timer = setTimeout(() => this.close(), ms);
    this.#timer.unref();
  }

  lines(): AsyncIterable<Uint8Array> {
    return this.#source();
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#stop();
  }
}

/** A storage watch of one request (no cache), with its initial state read from storage. */
class StorageWatch {
  readonly #target: Target;
  readonly #selection: Selection;
  readonly #watch: Watch;
  readonly #initial: readonly KeyValue[];
  readonly #initialEnd: bigint | undefined;
  readonly #bookmarks: boolean;
  readonly #rep: Representation;

  constructor(
    rep: Representation,
    target: Target,
    selection: Selection,
    watch: Watch,
    initial: readonly KeyValue[],
    initialEnd: bigint | undefined,
    bookmarks: boolean,
  ) {
    this.#target = target;
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

  async *lines(): AsyncGenerator<Uint8Array> {
    const everything = this.#selection.everything;
    const rep = this.#rep;
    try {
      for (const kv of this.#initial) {
        if (this.#selected(kv, kv.modRevision)) yield storedFrame(rep, 'ADDED', kv.value, kv.modRevision);
      }
      if (this.#initialEnd !== undefined) yield bookmarkFrame(rep, this.#target, this.#initialEnd, true);
      for await (const ev of this.#watch) {
        if (ev.type === 'progress') {
          if (this.#bookmarks) yield bookmarkFrame(rep, this.#target, ev.revision, false);
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

async function openStorageWatch(
  rep: Representation,
  ctx: ResourceContext,
  target: Target,
  plan: WatchPlan,
  selection: Selection,
  span: KeySpan,
  ms: number,
): Promise<WatchStream> {
  const watchOptions = plan.bookmarks ? { progressIntervalMs: ctx.bookmarkIntervalMs } : {};
  let session: StorageWatch;
  if (typeof plan.from === 'bigint' && !plan.initialEvents) {
    const watch = ctx.store.watch(span, { ...watchOptions, fromRevision: plan.from + 1n });
    session = new StorageWatch(rep, target, selection, watch, [], undefined, plan.bookmarks);
  } else {
    if (typeof plan.from === 'bigint') await requireRevision(ctx, plan.from);
    const state = await ctx.store.range(span);
    const watch = ctx.store.watch(span, { ...watchOptions, fromRevision: state.revision + 1n });
    const initial = plan.initialEvents ? state.items : [];
    const end = plan.initialEventsEnd ? state.revision : undefined;
    session = new StorageWatch(rep, target, selection, watch, initial, end, plan.bookmarks);
  }
  return new TimedStream(
    () => session.lines(),
    () => session.close(),
    ms,
  );
}

/**
 * Opens a watch for `target` with the query's options. Errors found before any event (bad
 * options or selectors, a too-large version, storage failures of the initial read) are thrown,
 * so that they reach the client as a plain error response.
 */
export async function openWatch(
  ctx: ResourceContext,
  target: Target,
  query: Query,
  rep: Representation = new JsonRepresentation(target.type),
): Promise<WatchStream> {
  const plan = planWatch(query);
  const selection = Selection.fromQuery(
    query,
    target.type,
    ctx.strategies.find(target.type)?.selectableFields,
  );
  const scope = watchScope(target, selection);
  const ms = timeoutMs(ctx, plan);
  const source = await watchSource(ctx, target.type, plan);
  if (source === undefined) return openStorageWatch(rep, ctx, target, plan, selection, scope.span, ms);
  const { cache, from } = source;
  const frames = cacheFrames(rep);
  const watcher = cache.openWatcher({
    scope,
    from,
    initialEvents: plan.initialEvents,
    initialEventsEnd: plan.initialEventsEnd,
    bookmarks: plan.bookmarks,
    kind: target.type.kind,
    apiVersion: target.type.apiVersion,
    ...(frames === undefined ? {} : { frames }),
  });
  if (watcher === 'expired') {
    const requested = from as bigint;
    const frame = errorFrame(rep, new CompactedError(requested, cache.oldest));
    return new TimedStream(
      async function* () {
        yield frame;
      },
      () => undefined,
      ms,
    );
  }
  return new TimedStream(
    () => watcher.frames(),
    () => watcher.end(),
    ms,
  );
}
