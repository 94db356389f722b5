/**
 * The watch cache of one resource type: one storage watch over the type's key span, the current
 * state, an event window, and the client watchers fed from it.
 *
 * States (transitions in parentheses):
 * - `idle` (start()) → `warming`: list the state at the store's current revision R and watch
 *   from R + 1, as kube's cacher does: the cost is the live objects, never the retained history
 *   (replaying 100,000 events of a write burst made the first list after it 10× slower). The
 *   window starts empty at R ({@link TypeCache.startRevision}); a client resuming a version
 *   before R is served by storage (src/resource/cached-store.ts), which still holds that history.
 * - `warming` (the state is read) → `ready`: reads and watches may be served from here. Before
 *   that, callers go to storage.
 * - `ready` (storage watch fails, e.g. compacted under a stalled cache, or backend unavailable)
 *   → `warming` again after a back-off; every client watcher is ended first (clients resume).
 * - any (close()) → `closed`.
 *
 * Everything that touches state is synchronous between awaits, so a snapshot plus a watcher
 * registration in one call see exactly the same revision.
 */
import type { KeySpan, Store, Watch, WatchEvent } from '../../storage/interface.js';
import { CacheEvent } from './cache-event.js';
import { CacheState } from './cache-state.js';
import { EventWindow, type EventWindowBounds } from './event-window.js';
import { JSON_FRAMES, type WatchFrames } from './frames.js';
import { ObjectVersion } from './object-version.js';
import type { CacheScope } from './scope.js';
import { CacheWatcher } from './watcher.js';

/**
 * Snapshots kept for paged lists (kube's continue tokens resume at the first page's revision):
 * each is an array of references to shared versions, so a few cost little; the oldest goes first.
 */
const RETAINED_SNAPSHOTS = 16;

/**
 * Objects per storage read while warming. Each page is decoded and taken in one synchronous
 * step, so the server answers other requests between pages: one read of a type with 100,000
 * objects held a server's event loop for seconds (its health checks and leases included).
 */
const WARM_PAGE = 500;

/** Settings of a {@link TypeCache}. */
export interface TypeCacheOptions {
  readonly store: Store;
  /**
   * The store's current revision for consistent reads (src/watchcache/revision-probe.ts, one
   * shared by the server's caches); unset: the store's `currentRevision`.
   */
  readonly currentRevision?: () => Promise<bigint>;
  /** The key prefix of the type (`/configmaps/`). */
  readonly prefix: string;
  readonly window: EventWindowBounds;
  /** Queue bound of each client watcher. */
  readonly watcherCapacity: number;
  /** Idle progress interval of the storage watch and bookmark interval of watchers (ms). */
  readonly bookmarkIntervalMs: number;
  /** Failures of the storage watch (for the server log). */
  readonly onError?: (err: unknown) => void;
  readonly now?: () => number;
  /** Objects per storage read while warming (default {@link WARM_PAGE}). */
  readonly warmPageSize?: number;
}

export type TypeCachePhase = 'idle' | 'warming' | 'ready' | 'closed';

/** Counters for tests and benchmarks. */
export interface TypeCacheStats {
  /** Client watchers ended because their queue overflowed. */
  overflows: number;
  /** Warm-ups started. */
  warmups: number;
  /** Snapshots kept for paged lists, and continued pages that found theirs. */
  retainedSnapshots: number;
  snapshotHits: number;
}

/** How a client watch starts (see {@link TypeCache.openWatcher}). */
export interface OpenWatcherParams {
  readonly scope: CacheScope;
  /** `now`: at the cache's revision; a revision: events after it. */
  readonly from: 'now' | bigint;
  /** With `now`: send the state as ADDED events first. */
  readonly initialEvents: boolean;
  readonly initialEventsEnd: boolean;
  /** The annotations of the initial-events-end bookmark (default: the end mark alone). */
  readonly initialEventsEndAnnotations?: Readonly<Record<string, string>>;
  readonly bookmarks: boolean;
  /** kind and apiVersion of bookmark objects (types of several versions share one cache). */
  readonly kind: string;
  readonly apiVersion: string;
  /** The stream's encoders; default JSON lines from this cache's encode-once JSON. */
  readonly frames?: WatchFrames;
}

interface Waiter {
  readonly revision: bigint;
  readonly resolve: (fresh: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

/** The watch cache of one resource type. */
export class TypeCache {
  readonly #o: TypeCacheOptions;
  readonly #span: KeySpan;
  readonly #now: () => number;
  #phase: TypeCachePhase = 'idle';
  #state = new CacheState();
  #window: EventWindow;
  #revision = 0n;
  #startRevision = 0n;
  /** True while a warm-up reads the type's state from storage. */
  #listing = false;
  /** Snapshots paged lists started from, by revision (insertion order: oldest first). */
  readonly #retained = new Map<bigint, readonly ObjectVersion[]>();
  #watch: Watch | undefined;
  readonly #watchers = new Set<CacheWatcher>();
  #waiters: Waiter[] = [];
  #progressPending = false;
  #progressRetry: NodeJS.Timeout | undefined;
  #bookmarkTimer: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #wakeRetry: (() => void) | undefined;
  readonly stats: TypeCacheStats = {
    overflows: 0,
    warmups: 0,
    retainedSnapshots: 0,
    snapshotHits: 0,
  };
  readonly #forget = (watcher: CacheWatcher): void => {
    this.#watchers.delete(watcher);
    if (watcher.overflowed) this.stats.overflows++;
  };

  constructor(options: TypeCacheOptions) {
    this.#o = options;
    this.#span = { prefix: options.prefix };
    this.#now = options.now ?? Date.now;
    this.#window = new EventWindow(options.window, 0n);
  }

  get phase(): TypeCachePhase {
    return this.#phase;
  }

  /** True when reads and watches may be served from the cache. */
  get ready(): boolean {
    return this.#phase === 'ready';
  }

  /** Every change with a revision up to this one is applied. */
  get revision(): bigint {
    return this.#revision;
  }

  /** The oldest revision a watch may start from. */
  get oldest(): bigint {
    return this.#window.oldest;
  }

  /**
   * The revision the current warm-up listed the state at: the cache never saw the changes up to
   * it, so a watch from before it is storage's to serve (it is not "too old" for the cache).
   */
  get startRevision(): bigint {
    return this.#startRevision;
  }

  get watcherCount(): number {
    return this.#watchers.size;
  }

  /** Starts warming (idempotent; no-op once closed). */
  start(): void {
    if (this.#phase !== 'idle') return;
    this.#phase = 'warming';
    this.#bookmarkTimer = setInterval(() => this.#bookmarkAll(), this.#o.bookmarkIntervalMs);
    this.#bookmarkTimer.unref();
    void this.#run();
  }

  async #run(): Promise<void> {
    let backoff = 100;
    while (!this.#closed()) {
      try {
        await this.#session();
        backoff = 100;
      } catch (err) {
        if (this.#closed()) return;
        this.#o.onError?.(err);
      }
      if (this.#closed()) return;
      this.#unready();
      await new Promise<void>((resolve) => {
        this.#wakeRetry = resolve;
        this.#retry = setTimeout(resolve, backoff);
        this.#retry.unref();
      });
      backoff = Math.min(backoff * 2, 5000);
    }
  }

  /** One warm-up plus the life of one storage watch; returns or throws when the watch ends. */
  async #session(): Promise<void> {
    this.#phase = 'warming';
    this.stats.warmups++;
    // A progress request of an earlier storage watch died with it; a new session keeps no
    // snapshots (their pages are then read from storage).
    this.#progressPending = false;
    this.#retained.clear();
    const { store } = this.#o;
    this.#listing = true;
    let listed;
    try {
      listed = await this.#listState();
    } finally {
      this.#listing = false;
    }
    if (listed === undefined) return;
    const { revision: start, items } = listed;
    this.#state = new CacheState(items);
    this.#window = new EventWindow(this.#o.window, start);
    this.#revision = start;
    this.#startRevision = start;
    const watch = store.watch(this.#span, {
      fromRevision: start + 1n,
      progressIntervalMs: this.#o.bookmarkIntervalMs,
      // The state holds every key's current version, so the previous ones are never read.
      previousValues: false,
    });
    this.#watch = watch;
    this.#phase = 'ready';
    this.#resolveWaiters();
    for await (const ev of watch) {
      this.#handle(ev);
      this.#resolveWaiters();
    }
  }

  /**
   * The type's state read from storage page by page, every page at the first one's revision (a
   * compaction past it in between fails the read, and the session starts again); undefined once
   * the cache is closed.
   */
  async #listState(): Promise<{ revision: bigint; items: ObjectVersion[] } | undefined> {
    const limit = this.#o.warmPageSize ?? WARM_PAGE;
    const items: ObjectVersion[] = [];
    let page = await this.#o.store.range(this.#span, { limit });
    const revision = page.revision;
    for (;;) {
      if (this.#closed()) return undefined;
      for (const kv of page.items) items.push(new ObjectVersion(kv.key, kv.value, kv.modRevision));
      if (page.continue === undefined) return { revision, items };
      page = await this.#o.store.range(this.#span, { continue: page.continue, limit });
    }
  }

  #handle(ev: WatchEvent): void {
    if (ev.type === 'progress') {
      if (ev.revision > this.#revision) this.#revision = ev.revision;
      this.#progressPending = false;
      // Waiters for a revision the store has not reached yet: ask again a little later (an
      // immediate re-request would spin, since an idle store answers at once).
      if (this.#waiters.some((w) => w.revision > this.#revision) && this.#progressRetry === undefined) {
        this.#progressRetry = setTimeout(() => {
          this.#progressRetry = undefined;
          if (this.#waiters.length > 0) this.#requestProgress();
        }, 50);
        this.#progressRetry.unref();
      }
      return;
    }
    const key = ev.kv.key;
    const prev = this.#state.get(key);
    const now = this.#now();
    let event: CacheEvent | undefined;
    if (ev.type === 'put') {
      const version = new ObjectVersion(key, ev.kv, ev.kv.modRevision);
      this.#state.put(version);
      event = new CacheEvent('put', ev.revision, version, prev, now);
    } else if (prev !== undefined) {
      // The state has every live key (listed, then followed event by event): a delete of a key it
      // lacks deleted nothing it ever showed, and the watch carries no previous value to show.
      this.#state.delete(key);
      event = new CacheEvent('delete', ev.revision, prev.at(ev.revision), prev, now);
    }
    if (ev.revision > this.#revision) this.#revision = ev.revision;
    if (event === undefined) return;
    this.#window.push(event, now);
    for (const watcher of this.#watchers) watcher.offer(event);
    // Every watcher has been offered the change (offer is synchronous) and has decided its
    // selections on both versions. The replaced version keeps only its stored bytes from here
    // on; the new one drops its parse, which the next change makes again if a selector asks.
    prev?.forgetDerived();
    event.object.forgetObject();
  }

  #requestProgress(): void {
    if (this.#progressPending || this.#watch === undefined) return;
    this.#progressPending = true;
    this.#watch.requestProgress();
  }

  #resolveWaiters(): void {
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.revision <= this.#revision) {
        clearTimeout(w.timer);
        w.resolve(true);
      } else still.push(w);
    }
    this.#waiters = still;
  }

  /** A method, not a field read, so that TypeScript does not narrow the phase across awaits. */
  #closed(): boolean {
    return this.#phase === 'closed';
  }

  #bookmarkAll(): void {
    if (this.#phase !== 'ready') return;
    for (const watcher of this.#watchers) watcher.bookmark(this.#revision);
  }

  /** Ends client watchers and pending waits (a failed storage watch or close). */
  #unready(): void {
    if (this.#phase !== 'closed') this.#phase = 'warming';
    this.#watch?.close();
    this.#watch = undefined;
    for (const watcher of [...this.#watchers]) watcher.end();
    for (const w of this.#waiters) {
      clearTimeout(w.timer);
      w.resolve(false);
    }
    this.#waiters = [];
  }

  /**
   * Resolves true once the cache is ready and has applied every change up to `revision`, or
   * false after `timeoutMs` (or when the cache stops being usable meanwhile). Asks the storage
   * watch for a progress notification so that an idle type catches up with writes elsewhere.
   */
  waitFresh(revision: bigint, timeoutMs: number): Promise<boolean> {
    if (this.ready && this.#revision >= revision) return Promise.resolve(true);
    if (this.#phase === 'closed' || timeoutMs <= 0) return Promise.resolve(false);
    this.#requestProgress();
    return this.#wait(revision, timeoutMs);
  }

  /**
   * Resolves true once the cache is ready. While a warm-up is reading the type's state, a caller
   * that would otherwise read that same state from storage waits for it instead (one scan of the
   * type, not one per request: ten lists right after a restart cost one warm-up), at most
   * `timeoutMs`; false at once when the cache is neither ready nor listing.
   */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    if (!this.#listing || timeoutMs <= 0) return Promise.resolve(false);
    return this.#wait(0n, timeoutMs);
  }

  /** A waiter resolved by {@link #resolveWaiters} (true) or by the timeout or {@link #unready} (false). */
  #wait(revision: bigint, timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w.timer !== timer);
        resolve(false);
      }, timeoutMs);
      timer.unref();
      this.#waiters.push({ revision, resolve, timer });
    });
  }

  /**
   * Resolves true once the cache holds the store's current state (a linearizable read of the
   * store's revision, then {@link waitFresh} for it); false when it cannot within `timeoutMs`,
   * in which case the caller reads storage.
   */
  async waitConsistent(timeoutMs: number): Promise<boolean> {
    if (!this.ready) return false;
    const current = await (this.#o.currentRevision?.() ?? this.#o.store.currentRevision());
    return this.waitFresh(current, timeoutMs);
  }

  /** The whole type's versions in key order at {@link revision} (immutable). Only when ready. */
  snapshot(): { readonly items: readonly ObjectVersion[]; readonly revision: bigint } {
    return { items: this.#state.snapshot(), revision: this.#revision };
  }

  /**
   * The current snapshot, kept (a bounded number of them) so that later pages of a paged list
   * read the same state: see {@link snapshotAt}.
   */
  retainSnapshot(): { readonly items: readonly ObjectVersion[]; readonly revision: bigint } {
    const snap = this.snapshot();
    this.stats.retainedSnapshots++;
    this.#retained.delete(snap.revision);
    this.#retained.set(snap.revision, snap.items);
    for (const revision of this.#retained.keys()) {
      if (this.#retained.size <= RETAINED_SNAPSHOTS) break;
      this.#retained.delete(revision);
    }
    return snap;
  }

  /** A snapshot {@link retainSnapshot} kept at `revision`, or undefined (then storage serves). */
  snapshotAt(revision: bigint): readonly ObjectVersion[] | undefined {
    const items = this.#retained.get(revision);
    if (items !== undefined) this.stats.snapshotHits++;
    return items;
  }

  /** One key's current version. */
  get(key: string): ObjectVersion | undefined {
    return this.#state.get(key);
  }

  /**
   * Registers a client watcher (synchronously, so its start state and its first live event are
   * adjacent). Returns `expired` when `params.from` is older than the window (the caller sends
   * kube's 410 ERROR event). Only when ready.
   */
  openWatcher(params: OpenWatcherParams): CacheWatcher | 'expired' {
    let startRevision: bigint;
    let backlog: CacheEvent[] | undefined;
    let initial: readonly ObjectVersion[] | undefined;
    if (params.from === 'now') {
      startRevision = this.#revision;
      if (params.initialEvents) initial = this.#state.snapshot();
    } else {
      backlog = this.#window.since(params.from);
      if (backlog === undefined) return 'expired';
      startRevision = params.from;
    }
    const watcher = new CacheWatcher({
      scope: params.scope,
      capacity: this.#o.watcherCapacity,
      bookmarks: params.bookmarks,
      kind: params.kind,
      apiVersion: params.apiVersion,
      startRevision,
      ...(initial === undefined ? {} : { initial }),
      initialEventsEnd: params.initialEventsEnd,
      ...(params.initialEventsEndAnnotations === undefined
        ? {}
        : { initialEventsEndAnnotations: params.initialEventsEndAnnotations }),
      ...(backlog === undefined ? {} : { backlog }),
      frames: params.frames ?? JSON_FRAMES,
      onEnd: this.#forget,
    });
    this.#watchers.add(watcher);
    return watcher;
  }

  /** Stops the storage watch and ends every client watcher. Idempotent. */
  close(): void {
    if (this.#phase === 'closed') return;
    this.#phase = 'closed';
    clearInterval(this.#bookmarkTimer);
    clearTimeout(this.#retry);
    clearTimeout(this.#progressRetry);
    this.#wakeRetry?.();
    this.#unready();
  }
}
