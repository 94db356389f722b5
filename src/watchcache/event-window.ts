/**
 * The watch cache's event window: the most recent changes of one resource type, in revision
 * order, so that a watch can start from any revision the window still covers.
 *
 * Bounds: an event is dropped only when the window holds more than `capacity` events AND the
 * event is older than `minAgeMs`, or when the window holds more than `maxEvents` (a hard memory
 * bound under high write rates). Dropping an event of revision R moves {@link EventWindow.oldest}
 * to R: every event after R is still here. A watch from before that is storage's to serve
 * (src/resource/cached-store.ts): the window only spares storage the recent history that
 * resuming clients ask for.
 */
import type { CacheEvent } from './cache-event.js';

/** Bounds of an {@link EventWindow}. */
export interface EventWindowBounds {
  /** Events kept regardless of age (kube's watch cache size). ≥ 1. */
  readonly capacity: number;
  /** Events younger than this are kept regardless of count (ms). */
  readonly minAgeMs: number;
  /** Never more than this many events. */
  readonly maxEvents: number;
}

/** A revision-ordered window of events with an explicit start revision. */
export class EventWindow {
  readonly #bounds: EventWindowBounds;
  #events: CacheEvent[] = [];
  #head = 0;
  #oldest: bigint;

  /** @param start the revision the window starts after (the cache's initial state revision). */
  constructor(bounds: EventWindowBounds, start: bigint) {
    this.#bounds = bounds;
    this.#oldest = start;
  }

  /** Every event with a revision greater than this is in the window. */
  get oldest(): bigint {
    return this.#oldest;
  }

  get size(): number {
    return this.#events.length - this.#head;
  }

  /** Appends `event` (revisions must not decrease) and drops what the bounds allow, as of `now`. */
  push(event: CacheEvent, now: number): void {
    this.#events.push(event);
    const { capacity, minAgeMs, maxEvents } = this.#bounds;
    while (this.size > capacity) {
      const first = this.#events[this.#head];
      if (first === undefined) break;
      if (this.size <= maxEvents && now - first.at < minAgeMs) break;
      this.#head++;
      this.#oldest = first.revision;
    }
    // Reclaim the dropped prefix in one copy once it is large, keeping pushes amortized O(1).
    if (this.#head > 1024 && this.#head * 2 > this.#events.length) {
      this.#events = this.#events.slice(this.#head);
      this.#head = 0;
    }
  }

  /**
   * The events after `revision`, oldest first (a copy of references), or undefined when the
   * window no longer covers `revision` (the caller answers 410 Expired). A revision at or after
   * the newest event gives an empty list.
   */
  since(revision: bigint): CacheEvent[] | undefined {
    if (revision < this.#oldest) return undefined;
    let lo = this.#head;
    let hi = this.#events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const ev = this.#events[mid];
      if (ev !== undefined && ev.revision <= revision) lo = mid + 1;
      else hi = mid;
    }
    return this.#events.slice(lo);
  }
}
