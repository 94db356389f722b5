/**
 * The reflector: keeps a sink in step with a resource by list-then-watch, as client-go's.
 *
 * States and transitions:
 * - `list`: page through a consistent list (500 per page), hand the items to `sink.replace` with
 *   the list's resourceVersion (RV) → `watch`. (With `watchList`: one watch with
 *   `sendInitialEvents=true` whose initial events end at a bookmark marked
 *   `k8s.io/initial-events-end` plays the list's part; a server that refuses it falls back to
 *   lists for good.)
 * - `watch`: watch from the last RV with bookmarks; each event goes to the sink and advances the
 *   RV. The server ending the watch (timeout) or the connection dropping → `watch` again from the
 *   last RV (nothing is missed, nothing re-listed). A 410 Gone/Expired → `list` (the RV is too
 *   old). Any other failure → `backoff`.
 * - `backoff`: 800 ms doubling to 30 s with jitter, reset by a watch that delivered events →
 *   `watch` when an RV is known, else `list`.
 */
import type { TypedObject } from './client.js';
import { isGone } from './errors.js';
import { sleep } from './rate-limit.js';
import { groupResource } from './resources.js';
import type { ListOptions, ResourceClient, WatchOptions } from './resource-client.js';
import type { WatchEventType } from './watch.js';
import { formatApiVersion } from '../api/group-version.js';

/** Where a reflector delivers what it sees. */
export interface ReflectorSink<T> {
  /** The whole state at `resourceVersion` (after a list, or a WatchList's initial events). */
  replace(items: T[], resourceVersion: string): void;
  /** One change from the watch. */
  apply(type: Exclude<WatchEventType, 'BOOKMARK'>, obj: T): void;
}

/** Options of a {@link Reflector}. */
export interface ReflectorOptions<T = unknown> {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** List page size (default 500, as client-go). */
  pageSize?: number;
  /** Try a WatchList (`sendInitialEvents`) instead of lists (default false). */
  watchList?: boolean;
  /** The lower bound of each watch's random server-side timeout (default 300 s). */
  minWatchTimeoutSeconds?: number;
  /** Failures are reported here (default console.error). */
  log?: (message: string, err: unknown) => void;
  /**
   * Applied to every object as it arrives (each list page, each watch event), before the sink
   * sees it: a list's untrimmed pages are not all held until its last page.
   */
  transform?: (obj: T) => T;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';
const BACKOFF_BASE_MS = 800;
const BACKOFF_MAX_MS = 30_000;

/** List-then-watch of one resource into a sink. */
export class Reflector<T extends TypedObject> {
  readonly #rc: ResourceClient<T>;
  readonly #sink: ReflectorSink<T>;
  readonly #opts: ReflectorOptions<T>;
  readonly #transform: (obj: T) => T;
  readonly #selectors: ListOptions;
  #rv = '';
  #watchList: boolean;

  constructor(rc: ResourceClient<T>, sink: ReflectorSink<T>, opts: ReflectorOptions<T> = {}) {
    this.#rc = rc;
    this.#sink = sink;
    this.#opts = opts;
    this.#transform = opts.transform ?? ((obj) => obj);
    this.#watchList = opts.watchList === true;
    const s: ListOptions = {};
    if (opts.namespace !== undefined && opts.namespace !== '') s.namespace = opts.namespace;
    if (opts.labelSelector !== undefined) s.labelSelector = opts.labelSelector;
    if (opts.fieldSelector !== undefined) s.fieldSelector = opts.fieldSelector;
    this.#selectors = s;
  }

  /** The RV of the last list, event or bookmark seen ('' before the first list). */
  get lastSyncResourceVersion(): string {
    return this.#rv;
  }

  #log(message: string, err: unknown): void {
    (this.#opts.log ?? ((m, e) => console.error(m, e)))(
      `reflector ${groupResource(this.#rc.ref)}: ${message}`,
      err,
    );
  }

  /** Runs until `signal` aborts; never throws. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      try {
        let delivered: number;
        if (this.#rv === '' && this.#watchList) {
          delivered = await this.#watch(signal, true);
        } else {
          if (this.#rv === '') await this.#list(signal);
          delivered = await this.#watch(signal, false);
        }
        if (delivered > 0) failures = 0;
        else if (!signal.aborted) await this.#backoff(failures++, signal); // a watch that ends at once
      } catch (err) {
        if (signal.aborted) break;
        if (isGone(err)) {
          this.#rv = ''; // too old: relist
          continue;
        }
        if (this.#watchList && this.#rv === '' && isRefusedWatchList(err)) {
          this.#watchList = false;
          continue;
        }
        this.#log(`list or watch failed (retry ${failures + 1})`, err);
        await this.#backoff(failures++, signal);
      }
    }
  }

  async #backoff(n: number, signal: AbortSignal): Promise<void> {
    const ms = Math.min(BACKOFF_BASE_MS * 2 ** n, BACKOFF_MAX_MS) * (1 + Math.random());
    await sleep(ms, signal).catch(() => undefined);
  }

  async #list(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv = '';
    // A List's items carry no kind; fill it so handlers (and the transform) see whole objects.
    const kind = this.#rc.ref.kind;
    const apiVersion = formatApiVersion(this.#rc.ref.group, this.#rc.ref.version);
    do {
      if (signal.aborted) return;
      const page = await this.#rc.list({
        ...this.#selectors,
        limit: this.#opts.pageSize ?? 500,
        ...(cont === undefined ? {} : { continue: cont }),
      });
      for (const item of page.items) {
        item.kind ??= kind;
        item.apiVersion ??= apiVersion;
        items.push(this.#transform(item));
      }
      rv = page.metadata.resourceVersion ?? '';
      cont = page.metadata.continue;
    } while (cont !== undefined && cont !== '');
    this.#sink.replace(items, rv);
    this.#rv = rv;
  }

  /** One watch until it ends; returns how many events and bookmarks it delivered. */
  async #watch(signal: AbortSignal, initial: boolean): Promise<number> {
    // Aborted while the list was in flight: the abort event has fired already, so a watch opened
    // now would run to its timeout.
    if (signal.aborted) return 0;
    const minTimeout = this.#opts.minWatchTimeoutSeconds ?? 300;
    const opts: WatchOptions = {
      ...this.#selectors,
      allowWatchBookmarks: true,
      timeoutSeconds: Math.floor(minTimeout * (1 + Math.random())),
    };
    if (initial) {
      opts.sendInitialEvents = true;
      opts.resourceVersionMatch = 'NotOlderThan';
      opts.resourceVersion = '';
    } else {
      opts.resourceVersion = this.#rv;
    }
    const watch = this.#rc.watch(opts);
    const onAbort = (): void => watch.close();
    signal.addEventListener('abort', onAbort, { once: true });
    let delivered = 0;
    let pending: T[] | undefined = initial ? [] : undefined;
    try {
      for await (const ev of watch) {
        const rv = ev.object.metadata?.resourceVersion;
        if (ev.type === 'BOOKMARK') {
          if (pending !== undefined && ev.object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true') {
            this.#sink.replace(pending, rv ?? '');
            pending = undefined;
          }
        } else if (pending !== undefined) {
          pending.push(this.#transform(ev.object));
        } else {
          this.#sink.apply(ev.type, this.#transform(ev.object));
        }
        if (rv !== undefined && rv !== '' && pending === undefined) this.#rv = rv;
        delivered++;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      watch.close();
    }
    return pending === undefined ? delivered : 0;
  }
}

/** A server without WatchList answers the parameters with 400 or 422, or 403 for the verb. */
function isRefusedWatchList(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 400 || code === 422;
}
