/**
 * watch (GET on a collection with `watch=1|true`). Where a watch starts follows the spec's watch
 * row and `sendInitialEvents` (read-plan.ts); the object store (`ctx.objects`, cached-store.ts)
 * serves the events, from the type's watch cache or from a storage watch of this request alone.
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
import { JsonRepresentation } from '../representation/json.js';
import type { Representation } from '../representation/types.js';
import type { ResourceContext, Target } from './context.js';
import { collectionSpan, objectKey } from './keys.js';
import type { EventStream, WatchScope } from './object-store.js';
import type { Query } from './query.js';
import { planWatch, type WatchPlan } from './read-plan.js';
import { readCollectionRequest } from './list-options.js';
import type { Selection } from './selection.js';

/** An open watch stream: its events in the request's representation, and a way to end it (idempotent). */
export interface WatchStream {
  lines(): AsyncIterable<Uint8Array>;
  close(): void;
}

/** The key range a watch covers: one key when the field selector pins a name, else the collection. */
function watchScope(target: Target, selection: Selection): WatchScope {
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
  readonly #events: EventStream;
  readonly #timer: NodeJS.Timeout;

  constructor(events: EventStream, ms: number) {
    this.#events = events;
    this.#timer = setTimeout(() => this.close(), ms);
    this.#timer.unref();
  }

  lines(): AsyncIterable<Uint8Array> {
    return this.#events.frames();
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#events.close();
  }
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
  const selectable = ctx.strategies.find(target.type)?.selectableFields;
  const { options, selection } = readCollectionRequest(query, target.type, selectable, true);
  const plan = planWatch(options);
  const scope = watchScope(target, selection);
  const ms = timeoutMs(ctx, plan);
  return new TimedStream(await ctx.objects.watch(target.type, scope, plan, rep), ms);
}
