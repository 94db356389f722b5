/**
 * One storage watch over one etcd watch stream, resumed by us (not by the etcd3 client's watch
 * manager, whose reconnects have lost events: microsoft/etcd3 #31, #72, #114).
 *
 * The watch keeps `position`: every event with a revision ≤ position is in the consumer's queue,
 * as far as ordered information from etcd shows (event responses and notifications that travel
 * with them). Whatever happens to the stream, it is re-created from `position + 1`, and events at
 * or below `position` are dropped, so nothing is skipped or repeated.
 *
 * States and transitions:
 * - `connecting`: opening a stream and sending the create request → `streaming` on `created`;
 * - `streaming`: events flow → `paused` when the consumer falls `bufferLimit` events behind;
 * - `paused`: the stream is dropped; once half the buffer is consumed → `connecting`;
 * - `backoff`: after a stream error or end, wait (50 ms doubling to 2 s, jittered) → `connecting`;
 *   failing without a `created` for `retryLimitMs` ends the watch with UnavailableError;
 * - `ended`: by close() or a terminal error (compacted position → CompactedError; etcd refused
 *   the watch → UnavailableError). Buffered events are still delivered before the error.
 * Every listener runs inside a guard: a throw ends the watch with an error, never goes uncaught.
 */
import { ClientClosedError, type IEvent, type IWatchRequest, type IWatchResponse } from 'etcd3';
import { CompactedError, UnavailableError } from '../errors.js';
import type { Watch, WatchEvent } from '../interface.js';
import { fromWire, headerRevision, toKeyValue, wire, type EtcdRange } from './codec.js';
import { EventQueue } from './event-queue.js';
import { ProgressTracker } from './watch-progress.js';

/** An etcd `Watch/Watch` stream, as the transport opens it (requests and responses in etcd3's shapes). */
export interface WatchStream {
  on(event: 'data', listener: (res: IWatchResponse) => void): unknown;
  on(event: 'error', listener: (err: unknown) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  write(request: IWatchRequest): void;
  /** Resets the stream; it emits nothing afterwards. */
  cancel(): void;
}
type State = 'connecting' | 'streaming' | 'paused' | 'backoff' | 'ended';

/** What a watch needs from its store. */
export interface WatchTransport {
  /** Opens a new etcd watch stream (its failures come as events, after the listeners are on). */
  open(): WatchStream;
  /** True when the server orders requested progress with events (see `server-version.ts`). */
  readonly progressOrdered: boolean;
  readonly bufferLimit: number;
  readonly retryLimitMs: number;
  /** The watch ended; the store forgets it. */
  ended(watch: EtcdWatch): void;
}

/** The span to watch; `undefined` for an empty span (then no change is ever delivered). */
export type WatchTarget = EtcdRange | undefined;

/** A key no caller can see changes of: the stand-in etcd target of an empty span. */
const NOTHING: EtcdRange = { key: Buffer.from([0]), rangeEnd: Buffer.from([0, 0]) };

class WatchCompactedPrevError extends Error {}

/** See the module comment. */
export class EtcdWatch implements Watch {
  readonly #transport: WatchTransport;
  readonly #target: EtcdRange;
  readonly #dropAll: boolean;
  readonly #previousValues: boolean;
  readonly #queue = new EventQueue();
  readonly #progress: ProgressTracker;
  #state: State = 'connecting';
  #position: bigint;
  #lastDelivered: bigint;
  #startRevision = 0n;
  /** The revision the current etcd watcher was created from (see {@link etcdStartRevision}). */
  #etcdStart = 0n;
  #stream: WatchStream | undefined;
  /** Bumped whenever a stream is dropped: listeners of older streams do nothing. */
  #generation = 0;
  #attempt = 0;
  #failingSince: number | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #intervalTimer: NodeJS.Timeout | undefined;
  #active = false;

  /**
   * @param fromRevision first revision to deliver (≥ 1).
   * @param progressIntervalMs emit progress while idle at about this interval (unset: never).
   * @param previousValues ask etcd for each event's previous value (`prev_kv`); without, a put
   *   has none and a delete's holds only the key.
   */
  constructor(
    transport: WatchTransport,
    target: WatchTarget,
    fromRevision: bigint,
    progressIntervalMs: number | undefined,
    previousValues = true,
  ) {
    this.#transport = transport;
    this.#previousValues = previousValues;
    this.#target = target ?? NOTHING;
    this.#dropAll = target === undefined;
    this.#position = fromRevision - 1n;
    this.#lastDelivered = this.#position;
    this.#progress = new ProgressTracker(transport.progressOrdered, {
      sendRequest: () => this.#sendProgressRequest(),
      emit: (revision, trusted) => this.#emitProgress(revision, trusted),
    });
    if (progressIntervalMs !== undefined && progressIntervalMs > 0) {
      this.#intervalTimer = setInterval(() => {
        if (!this.#active) this.#progress.request();
        this.#active = false;
      }, progressIntervalMs);
      this.#intervalTimer.unref();
    }
    this.#connect();
  }

  requestProgress(): void {
    if (this.#state !== 'ended') this.#progress.request();
  }

  close(): void {
    if (this.#state === 'ended') return;
    this.#stop();
    this.#queue.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent> {
    return {
      next: () => {
        const result = this.#queue.next();
        if (this.#state === 'paused' && this.#queue.size <= this.#transport.bufferLimit / 2) this.#connect();
        return result;
      },
      return: () => {
        this.close();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  #connect(): void {
    this.#state = 'connecting';
    const generation = ++this.#generation;
    let stream: WatchStream;
    try {
      stream = this.#transport.open();
    } catch (err) {
      this.#onFailure(err);
      return;
    }
    this.#attach(generation, stream);
  }

  #attach(generation: number, stream: WatchStream): void {
    stream.on('error', (err: unknown) => this.#guard(generation, () => this.#onFailure(err)));
    stream.on('data', (res: IWatchResponse) => this.#guard(generation, () => this.#onResponse(res)));
    stream.on('end', () =>
      this.#guard(generation, () => this.#onFailure(new Error('etcd closed the watch stream'))),
    );
    this.#stream = stream;
    this.#startRevision = this.#position + 1n;
    this.#etcdStart = etcdStartRevision(this.#position);
    try {
      stream.write({
        create_request: {
          key: this.#target.key,
          range_end: this.#target.rangeEnd,
          start_revision: wire(this.#etcdStart),
          prev_kv: this.#previousValues,
          progress_notify: true,
        },
      });
    } catch (err) {
      this.#onFailure(err);
    }
  }

  /** Runs a listener body for the current stream only; a throw ends the watch. */
  #guard(generation: number, body: () => void): void {
    if (generation !== this.#generation || this.#state === 'ended') return;
    try {
      body();
    } catch (err) {
      this.#fail(new UnavailableError('etcd watch: failed to process a response', { cause: err }));
    }
  }

  #onResponse(res: IWatchResponse): void {
    if (res.created) {
      if (res.canceled) {
        this.#fail(new UnavailableError(`etcd refused the watch: ${res.cancel_reason}`));
        return;
      }
      this.#state = 'streaming';
      this.#attempt = 0;
      this.#failingSince = undefined;
      this.#progress.onCreated(this.#etcdStart, headerRevision(res.header));
      return;
    }
    if (res.canceled) {
      if (res.compact_revision !== '0') {
        this.#fail(new CompactedError(this.#startRevision, fromWire(res.compact_revision)));
      } else {
        this.#fail(new UnavailableError(`etcd cancelled the watch: ${res.cancel_reason}`));
      }
      return;
    }
    const revision = headerRevision(res.header);
    if (res.events.length > 0) {
      this.#onEvents(res.events, revision);
    } else if (res.watch_id === '-1') {
      this.#progress.onAnswer(revision);
    } else {
      // A periodic progress_notify for this watcher: ordered with its events.
      if (revision > this.#position) this.#position = revision;
      this.#progress.onOrdered(revision);
    }
  }

  #onEvents(events: readonly IEvent[], headerRev: bigint): void {
    for (const ev of events) {
      const revision = fromWire(ev.kv.mod_revision);
      if (revision <= this.#position || this.#dropAll) continue;
      let event: WatchEvent;
      try {
        event = this.#previousValues ? toWatchEvent(ev, revision) : withoutPrevious(ev, revision);
      } catch (err) {
        if (!(err instanceof WatchCompactedPrevError)) throw err;
        // etcd could not read the previous value: history below this revision is gone.
        this.#fail(new CompactedError(revision - 1n, revision));
        return;
      }
      this.#queue.push(event);
      this.#active = true;
      if (revision > this.#lastDelivered) this.#lastDelivered = revision;
      this.#position = revision;
    }
    const replayDone = !mayBeCutReplay(events);
    const last = events[events.length - 1];
    const reached = replayDone || last === undefined ? headerRev : fromWire(last.kv.mod_revision);
    if (reached > this.#position) this.#position = reached;
    this.#progress.onEvents(reached, replayDone);
    if (this.#queue.size >= this.#transport.bufferLimit) {
      this.#dropStream();
      this.#state = 'paused';
    }
  }

  #emitProgress(revision: bigint, trusted: boolean): void {
    if (this.#state === 'ended') return;
    const at = revision > this.#lastDelivered ? revision : this.#lastDelivered;
    if (trusted && revision > this.#position) this.#position = revision;
    this.#lastDelivered = at;
    this.#active = true;
    this.#queue.push({ type: 'progress', revision: at });
  }

  #sendProgressRequest(): boolean {
    const stream = this.#stream;
    if (this.#state !== 'streaming' || stream === undefined) return false;
    try {
      stream.write({ progress_request: {} });
      return true;
    } catch {
      return false; // the stream is failing; its error listener reconnects, which re-sends
    }
  }

  #onFailure(err: unknown): void {
    this.#dropStream();
    if (this.#state === 'ended') return;
    if (err instanceof ClientClosedError) {
      this.#fail(new UnavailableError('etcd watch: the store is closed', { cause: err }));
      return;
    }
    const now = Date.now();
    this.#failingSince ??= now;
    if (now - this.#failingSince >= this.#transport.retryLimitMs) {
      this.#fail(new UnavailableError('etcd watch: cannot reach etcd', { cause: err }));
      return;
    }
    this.#state = 'backoff';
    const delay = Math.min(2_000, 50 * 2 ** this.#attempt) * (0.5 + Math.random() / 2);
    this.#attempt = Math.min(this.#attempt + 1, 16);
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#state === 'backoff') this.#connect();
    }, delay);
  }

  #dropStream(): void {
    this.#generation += 1;
    const stream = this.#stream;
    this.#stream = undefined;
    stream?.cancel();
  }

  #fail(err: Error): void {
    if (this.#state === 'ended') return;
    this.#stop();
    this.#queue.fail(err);
  }

  #stop(): void {
    this.#state = 'ended';
    this.#dropStream();
    this.#progress.stop();
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    if (this.#intervalTimer !== undefined) clearInterval(this.#intervalTimer);
    this.#retryTimer = undefined;
    this.#intervalTimer = undefined;
    this.#transport.ended(this);
  }
}

/**
 * The revision an etcd watcher is created from when everything up to `position` was delivered:
 * ONE BEFORE the next revision wanted (the events at `position` are dropped as already
 * delivered), whenever there is such a revision.
 *
 * Why: etcd replays history to a new watcher asynchronously, and a compaction at exactly the
 * watcher's start revision that lands before the replay deletes a tombstone made at that
 * revision without telling the watcher (etcd reports "compacted" only for a start revision
 * strictly below the compacted one). Starting one earlier turns that silent loss into etcd's
 * compacted response, i.e. a CompactedError; a tombstone lost at the earlier revision was already
 * delivered.
 *
 * This holds for a watch of "future" revisions too: whether the next revision is already written
 * when etcd registers the watcher cannot be known here (a write may be committed whose answer
 * has not arrived), and the model-based property found exactly that loss (a delete at the
 * start revision, compacted before the replay) when the start was judged by the revisions seen.
 * The price: on servers that do not order progress answers with events, a new watcher's
 * progress answers wait for the replay grace (see watch-progress.ts).
 */
function etcdStartRevision(position: bigint): bigint {
  return position >= 1n ? position : 1n;
}

/**
 * etcd replays history in batches of at most this many distinct revisions (`watchBatchMaxRevs`
 * in etcd's mvcc package, the same in 3.4, 3.5 and 3.6).
 */
const ETCD_REPLAY_BATCH_REVISIONS = 1_000;

/**
 * True when an event response may be a replay batch cut at etcd's limit. A live response, and a
 * replay batch that finished the replay, carry the server's revision in their header and every
 * event up to it was sent. A batch cut at the limit carries the server's revision too, though
 * the rest of the history follows in later batches: it only shows its own last event.
 */
function mayBeCutReplay(events: readonly IEvent[]): boolean {
  let distinct = 0;
  let previous = '';
  for (const ev of events) {
    if (ev.kv.mod_revision !== previous) distinct += 1;
    previous = ev.kv.mod_revision;
  }
  return distinct >= ETCD_REPLAY_BATCH_REVISIONS;
}

/** A watch event of a watch without previous values: a delete's `prevKv` is the key alone. */
function withoutPrevious(ev: IEvent, revision: bigint): WatchEvent {
  const kv = toKeyValue(ev.kv);
  if (ev.type === 'Put') return { type: 'put', revision, kv, prevKv: undefined };
  const prevKv = { key: kv.key, value: kv.value, createRevision: 0n, modRevision: 0n, lease: 0n };
  return { type: 'delete', revision, kv, prevKv };
}

function toWatchEvent(ev: IEvent, revision: bigint): WatchEvent {
  // The client types prev_kv as always present; etcd omits it when there is none.
  const prev = ev.prev_kv as IEvent['prev_kv'] | null | undefined;
  if (ev.type === 'Put') {
    // Version 1: this put created the key, so there is no previous value to miss.
    if (prev == null && ev.kv.version !== '1') throw new WatchCompactedPrevError();
    return {
      type: 'put',
      revision,
      kv: toKeyValue(ev.kv),
      prevKv: prev == null ? undefined : toKeyValue(prev),
    };
  }
  if (prev == null) throw new WatchCompactedPrevError();
  return { type: 'delete', revision, kv: toKeyValue(ev.kv), prevKv: toKeyValue(prev) };
}
