/**
 * watch (GET on a collection with `watch=1|true`), the basic version: one storage watch per
 * request (the watch cache of a later issue replaces this with one per resource type).
 *
 * - `resourceVersion` unset or `0`: synthetic `ADDED` events for the current state, then every
 *   change after it; `N`: every change after N; N compacted: one `ERROR` event carrying kube's
 *   410 `Expired` Status, then the end of the stream.
 * - Label and field selectors apply to both the old and the new object of a change: an object
 *   entering the selection is `ADDED`, leaving it `DELETED` (with its last selected state and the
 *   change's resourceVersion), staying in it `MODIFIED`.
 * - `allowWatchBookmarks`: `BOOKMARK` events (only `metadata.resourceVersion`) when idle.
 * - The stream ends after `timeoutSeconds`, or a random time in [min, 2 × min) of
 *   `--min-request-timeout`, or when the client goes away.
 *
 * Events are encoded by the request's representation (JSON lines, protobuf frames, Tables);
 * JSON objects are the stored bytes with the resourceVersion spliced in (parsed only when a
 * selector has to look inside).
 */
import { CompactedError } from '../../storage/errors.js';
import type { KeySpan, KeyValue, Watch } from '../../storage/interface.js';
import { toApiError } from '../http/error-handler.js';
import { expired } from '../http/errors.js';
import type { ResourceContext, Target } from './context.js';
import { collectionSpan, objectKey } from './keys.js';
import { decodeStored, type KubeObject } from './object.js';
import { StoredSource, ValueSource } from '../representation/source.js';
import type { Representation, WatchEventType } from '../representation/types.js';
import { boolParam, intParam, param, revisionParam, type Query } from './query.js';
import { Selection } from './selection.js';

/** One stored version as a watch event in `rep`. */
function frame(rep: Representation, type: WatchEventType, value: Uint8Array, revision: bigint): Uint8Array {
  return rep.event(type, new StoredSource(value, revision));
}

/** The span a watch reads: one key when the field selector pins a name, else the collection. */
function watchSpan(target: Target, selection: Selection): KeySpan {
  const name = selection.fields.singleName;
  if (name !== undefined && (!target.type.namespaced || target.namespace !== undefined)) {
    const key = objectKey(target.type, target.namespace, name);
    return { start: key, end: `${key}\u0000` };
  }
  return collectionSpan(target.type, target.namespace);
}

/** One open watch: its event lines, and a way to end it early (idempotent). */
export class WatchSession {
  readonly #target: Target;
  readonly #selection: Selection;
  readonly #watch: Watch;
  readonly #initial: readonly KeyValue[];
  readonly #bookmarks: boolean;
  readonly #timer: NodeJS.Timeout;

  /** Use {@link openWatch}. */
  constructor(
    target: Target,
    selection: Selection,
    watch: Watch,
    initial: readonly KeyValue[],
    bookmarks: boolean,
    timeoutMs: number,
  ) {
    this.#target = target;
    this.#selection = selection;
    this.#watch = watch;
    this.#initial = initial;
    this.#bookmarks = bookmarks;
    this.#timer = setTimeout(() => this.close(), timeoutMs);
    this.#timer.unref();
  }

  /** Ends the stream: the event iterator finishes after what it is writing. */
  close(): void {
    clearTimeout(this.#timer);
    this.#watch.close();
  }

  #selected(kv: KeyValue, revision: bigint): boolean {
    return this.#selection.everything || this.#selection.matches(decodeStored(kv.value, revision));
  }

  /** The events, each encoded by `rep`. Ends on close, timeout, or after an ERROR event. */
  async *events(rep: Representation): AsyncGenerator<Uint8Array> {
    const everything = this.#selection.everything;
    try {
      for (const kv of this.#initial) {
        if (this.#selected(kv, kv.modRevision)) yield frame(rep, 'ADDED', kv.value, kv.modRevision);
      }
      for await (const ev of this.#watch) {
        if (ev.type === 'progress') {
          if (this.#bookmarks) {
            const { kind, apiVersion } = this.#target.type;
            yield rep.event(
              'BOOKMARK',
              new ValueSource({ kind, apiVersion, metadata: { resourceVersion: String(ev.revision) } }),
            );
          }
          continue;
        }
        if (ev.type === 'delete') {
          if (this.#selected(ev.prevKv, ev.revision))
            yield frame(rep, 'DELETED', ev.prevKv.value, ev.revision);
          continue;
        }
        const now = everything || this.#selected(ev.kv, ev.kv.modRevision);
        const before = ev.prevKv !== undefined && (everything || this.#selected(ev.prevKv, ev.revision));
        if (now) yield frame(rep, before ? 'MODIFIED' : 'ADDED', ev.kv.value, ev.kv.modRevision);
        else if (before && ev.prevKv !== undefined) yield frame(rep, 'DELETED', ev.prevKv.value, ev.revision);
      }
    } catch (err) {
      // Errors after the headers went out travel in-band, as kube-apiserver's ERROR events.
      const apiError =
        err instanceof CompactedError
          ? expired(`too old resource version: ${err.requestedRevision} (${err.compactedRevision})`)
          : toApiError(err);
      yield rep.event('ERROR', new ValueSource(apiError.toStatus() as unknown as KubeObject));
    } finally {
      this.close();
    }
  }
}

/**
 * Opens a watch for `target` with the query's selectors and resourceVersion. Errors found before
 * any event (bad selectors, storage failures of the initial read) are thrown, so that they reach
 * the client as a plain error response.
 */
export async function openWatch(ctx: ResourceContext, target: Target, query: Query): Promise<WatchSession> {
  const selection = Selection.fromQuery(query, target.type);
  const bookmarks = boolParam(query, 'allowWatchBookmarks');
  const rv = revisionParam(param(query, 'resourceVersion'));
  const timeoutSeconds = intParam(query, 'timeoutSeconds');
  const min = ctx.minRequestTimeoutSeconds > 0 ? ctx.minRequestTimeoutSeconds : 1800;
  const timeoutMs =
    timeoutSeconds !== undefined && timeoutSeconds > 0
      ? timeoutSeconds * 1000
      : Math.floor(min * (1 + Math.random()) * 1000);
  const span = watchSpan(target, selection);
  const watchOptions = bookmarks ? { progressIntervalMs: ctx.bookmarkIntervalMs } : {};
  if (rv !== undefined && rv !== 0n) {
    const watch = ctx.store.watch(span, { ...watchOptions, fromRevision: rv + 1n });
    return new WatchSession(target, selection, watch, [], bookmarks, timeoutMs);
  }
  const state = await ctx.store.range(span);
  const watch = ctx.store.watch(span, { ...watchOptions, fromRevision: state.revision + 1n });
  return new WatchSession(target, selection, watch, state.items, bookmarks, timeoutMs);
}
