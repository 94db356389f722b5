/**
 * Requested progress for one etcd watch stream: when may the watch say "everything up to
 * revision P was delivered"?
 *
 * etcd answers a `progress_request` with an event-less response (watch id -1) whose header
 * revision P is the store's revision. On servers that order that answer with the event stream
 * (see `server-version.ts`) it is emitted as it arrives. On older servers it may overtake events
 * still queued in the server or not yet replayed, so it is checked first:
 * - while the watcher may still be replaying history, answers are ignored for up to
 *   {@link CATCH_UP_GRACE_MS} after its creation (etcd replays unsynced watchers every 100 ms).
 *   It may be replaying when it was created from a revision at or below the server's revision,
 *   until an event response reaches that revision. The `created` answer's revision is only a
 *   lower bound: etcd reads it before registering the watcher, and writes in between leave the
 *   watcher replaying. So a watcher that looked current is judged again by the first answer:
 *   if that answer's revision reaches the watcher's start, it may be replaying up to there;
 * - an answer P is then confirmed by a second request sent after P arrived: etcd answers
 *   requests in order, and by the time the second answer comes back the server has sent every
 *   event that was queued when P was computed (nothing competes with them for the stream).
 * An event-less response carrying the watch's own id (a periodic `progress_notify`) travels with
 * the events on every version and is always trusted.
 *
 * States: `idle` → request() → `requested` → (ordered server: answer → emit → `idle`;
 * older server: answer with nothing else in flight → `confirming` → answer to the second
 * request → emit → `idle`). A trusted notification emits from any non-idle state. A stream
 * reconnect keeps the state and re-sends the request on the new stream.
 */

/** How long an answer is distrusted after a watcher was created below the server's revision. */
const CATCH_UP_GRACE_MS = 1_000;
/** A request unanswered this long is sent again (etcd may defer it while the watcher catches up). */
const RESEND_MS = 500;

type State = 'idle' | 'requested' | 'confirming';

/** What the tracker drives. */
export interface ProgressSink {
  /** Sends a `progress_request` on the current stream; false when no stream is ready. */
  sendRequest(): boolean;
  /**
   * Delivers a progress event at (at least) `revision`. `trusted`: the answer was ordered with
   * the events, so the watch may resume after it; otherwise it is only reported.
   */
  emit(revision: bigint, trusted: boolean): void;
}

/** The progress state machine of one watch (see the module comment). */
export class ProgressTracker {
  readonly #ordered: boolean;
  readonly #sink: ProgressSink;
  #state: State = 'idle';
  #candidate = 0n;
  /** Requests sent on this stream whose answers have not arrived (older servers answer each one, in order). */
  #inFlight = 0;
  /** While set, the watcher may still be replaying history up to this revision. */
  #syncTarget: bigint | undefined;
  /** The revision the current etcd watcher started from. */
  #start = 0n;
  /** The watcher looked current when created, but no answer or event has confirmed it yet. */
  #startUnconfirmed = false;
  #graceUntil = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(ordered: boolean, sink: ProgressSink) {
    this.#ordered = ordered;
    this.#sink = sink;
  }

  /** True while a requested progress event is still owed. */
  get pending(): boolean {
    return this.#state !== 'idle';
  }

  /** Asks for a progress event (coalesced with one already owed). */
  request(): void {
    if (this.#state !== 'idle') return;
    this.#state = 'requested';
    this.#send();
  }

  /**
   * A new etcd watcher was created from `startRevision`; the server's revision was `serverRevision`.
   * Re-sends an owed request on the new stream.
   */
  onCreated(startRevision: bigint, serverRevision: bigint): void {
    this.#inFlight = 0;
    this.#start = startRevision;
    this.#syncTarget = startRevision <= serverRevision ? serverRevision : undefined;
    this.#startUnconfirmed = this.#syncTarget === undefined;
    this.#graceUntil = Date.now() + CATCH_UP_GRACE_MS;
    if (this.#state === 'confirming') this.#state = 'requested';
    if (this.#state !== 'idle') this.#send();
  }

  /**
   * An event response arrived showing the watcher complete up to `revision` (ordered).
   * `replayDone`: the response was live or ended a replay (not a replay batch cut at etcd's limit).
   */
  onEvents(revision: bigint, replayDone: boolean): void {
    if (!replayDone) {
      // More history follows: still replaying, and the grace restarts with each batch.
      this.#syncTarget ??= revision;
      this.#graceUntil = Date.now() + CATCH_UP_GRACE_MS;
      return;
    }
    this.#startUnconfirmed = false;
    if (this.#syncTarget !== undefined && revision >= this.#syncTarget) this.#syncTarget = undefined;
  }

  /** A trusted, ordered notification: everything up to `revision` was sent. */
  onOrdered(revision: bigint): void {
    this.onEvents(revision, true);
    if (this.#state !== 'idle') this.#finish(revision, true);
  }

  /** An answer to a `progress_request` (watch id -1) at `revision`. */
  onAnswer(revision: bigint): void {
    if (this.#inFlight > 0) this.#inFlight -= 1;
    if (this.#startUnconfirmed) {
      // Answers come after the watcher was registered: this revision bounds the server's then.
      this.#startUnconfirmed = false;
      if (this.#start <= revision) this.#syncTarget = revision;
    }
    if (this.#state === 'idle') return;
    if (this.#ordered) {
      this.#finish(revision, true);
      return;
    }
    if (this.#inFlight > 0) return; // a later request's answer is still coming; judge that one
    if (this.#syncTarget !== undefined && Date.now() < this.#graceUntil) {
      this.#schedule(this.#graceUntil - Date.now());
      return;
    }
    this.#syncTarget = undefined;
    if (this.#state === 'requested') {
      this.#candidate = revision;
      this.#state = 'confirming';
      this.#send();
      return;
    }
    this.#finish(this.#candidate, false);
  }

  /** Stops the resend timer (the watch ended). */
  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#state = 'idle';
  }

  #finish(revision: bigint, trusted: boolean): void {
    this.#state = 'idle';
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#sink.emit(revision, trusted);
  }

  #send(): void {
    if (this.#sink.sendRequest()) this.#inFlight += 1;
    this.#schedule(RESEND_MS);
  }

  #schedule(ms: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        if (this.#state !== 'idle') this.#send();
      },
      Math.max(1, ms),
    );
    this.#timer.unref();
  }
}
