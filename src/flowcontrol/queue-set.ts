/**
 * One priority level's seats and queues.
 *
 * A request takes one seat (no width estimation). While the level has a free seat and nothing
 * waits, a request runs at once. Otherwise:
 * - `Reject` levels answer no;
 * - `Queue` levels shuffle-shard it: the flow's hash deals a hand of `handSize` queues out of
 *   `queues`, the request joins the hand's shortest queue (waiting plus executing), and is
 *   refused when that queue already holds `queueLengthLimit` requests.
 * When a seat frees, the queues are served round robin: the next non-empty queue after the one
 * served last gives up its oldest request. With one seat per request this is the fair-queuing
 * outcome kube's virtual-time scheduler reaches (every busy queue gets an equal share of
 * dispatches), without its service-time estimates: legible rather than exact.
 */

/** How a request was let in. */
export type Admission =
  | { readonly kind: 'run'; readonly release: () => void }
  | { readonly kind: 'rejected'; readonly reason: 'concurrency-limit' | 'queue-full' }
  | {
      readonly kind: 'queued';
      /** Resolves with the release once dispatched, or with the reason it never will be. */
      readonly dispatched: Promise<{ readonly release: () => void } | 'time-out' | 'cancelled'>;
      /** Gives up waiting (the client went away). */
      readonly cancel: () => void;
    };

/** The queuing shape of a level (absent: `Reject`). */
export interface QueueShape {
  readonly queues: number;
  readonly handSize: number;
  readonly queueLengthLimit: number;
}

interface Waiter {
  readonly queue: Queue;
  readonly settle: (outcome: { release: () => void } | 'time-out' | 'cancelled') => void;
  readonly timer: NodeJS.Timeout;
}

interface Queue {
  readonly waiting: Waiter[];
  executing: number;
}

/** FNV-1a, 32 bits. */
function hash32(text: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** A 32-bit mix step (murmur3's finalizer). */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * The hand of `flow`: `handSize` distinct queue indices out of `queues`, always the same for one
 * flow and one shape. Each card comes from the flow's hash stream; a card already dealt moves to
 * the next queue not yet in the hand.
 */
export function dealHand(flow: string, queues: number, handSize: number): number[] {
  const size = Math.min(handSize, queues);
  const hand: number[] = [];
  let h = hash32(flow, 0);
  while (hand.length < size) {
    h = mix(h + 0x9e3779b9);
    let q = h % queues;
    while (hand.includes(q)) q = (q + 1) % queues;
    hand.push(q);
  }
  return hand;
}

/** See the module comment. */
export class QueueSet {
  #limit: number;
  #shape: QueueShape | undefined;
  #queues: Queue[] = [];
  #executing = 0;
  #waiting = 0;
  #next = 0;

  /** `shape` undefined: a `Reject` level. */
  constructor(limit: number, shape: QueueShape | undefined) {
    this.#limit = limit;
    this.#shape = shape;
    this.#queues = Array.from({ length: shape?.queues ?? 0 }, () => ({ waiting: [], executing: 0 }));
  }

  /** Seats in use. */
  get executing(): number {
    return this.#executing;
  }

  /** Requests waiting in queues. */
  get waiting(): number {
    return this.#waiting;
  }

  /** The concurrency limit. */
  get limit(): number {
    return this.#limit;
  }

  /**
   * A new limit or shape (a configuration change). Waiting requests stay where they are unless
   * the number of queues changed; then they are spread round robin over the new queues (in their
   * old order), or refused when the level no longer queues.
   */
  reconfigure(limit: number, shape: QueueShape | undefined): void {
    this.#limit = limit;
    const same = shape !== undefined && this.#shape !== undefined && shape.queues === this.#shape.queues;
    this.#shape = shape;
    if (!same) {
      const old = this.#queues;
      this.#queues = Array.from({ length: shape?.queues ?? 0 }, () => ({ waiting: [], executing: 0 }));
      const waiters = old.flatMap((q) => q.waiting);
      if (this.#queues.length === 0) {
        // Now a Reject level: nothing may wait any more.
        this.#waiting = 0;
        for (const w of waiters) {
          clearTimeout(w.timer);
          w.settle('cancelled');
        }
      } else {
        waiters.forEach((w, i) => {
          const q = this.#queues[i % this.#queues.length] as Queue;
          q.waiting.push({ ...w, queue: q });
        });
      }
    }
    this.#dispatch();
  }

  /** Admits one request of `flow`; a queued one waits at most `waitMs`. */
  admit(flow: string, waitMs: number): Admission {
    if (this.#executing < this.#limit && this.#waiting === 0) {
      return { kind: 'run', release: this.#seat(undefined) };
    }
    const shape = this.#shape;
    if (shape === undefined || this.#queues.length === 0)
      return { kind: 'rejected', reason: 'concurrency-limit' };
    let best: Queue | undefined;
    for (const i of dealHand(flow, this.#queues.length, shape.handSize)) {
      const q = this.#queues[i] as Queue;
      if (best === undefined || q.waiting.length + q.executing < best.waiting.length + best.executing)
        best = q;
    }
    const queue = best as Queue;
    if (queue.waiting.length >= shape.queueLengthLimit) return { kind: 'rejected', reason: 'queue-full' };
    let waiter: Waiter | undefined;
    const dispatched = new Promise<{ release: () => void } | 'time-out' | 'cancelled'>((resolve) => {
      const timer = setTimeout(() => this.#drop(waiter, 'time-out'), waitMs);
      waiter = { queue, settle: resolve, timer };
      queue.waiting.push(waiter);
      this.#waiting++;
    });
    return { kind: 'queued', dispatched, cancel: () => this.#drop(waiter, 'cancelled') };
  }

  #drop(waiter: Waiter | undefined, why: 'time-out' | 'cancelled'): void {
    if (waiter === undefined) return;
    // The waiter may have moved queues (reconfigure): look it up by identity of its timer.
    for (const q of this.#queues) {
      const i = q.waiting.findIndex((w) => w.timer === waiter.timer);
      if (i < 0) continue;
      const [w] = q.waiting.splice(i, 1);
      this.#waiting--;
      clearTimeout(waiter.timer);
      w?.settle(why);
      return;
    }
  }

  /** Takes a seat (for `queue`, when dispatched from one) and returns its one-shot release. */
  #seat(queue: Queue | undefined): () => void {
    this.#executing++;
    if (queue !== undefined) queue.executing++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#executing--;
      if (queue !== undefined) queue.executing--;
      this.#dispatch();
    };
  }

  #dispatch(): void {
    const n = this.#queues.length;
    let found = true;
    while (found && this.#executing < this.#limit && this.#waiting > 0) {
      found = false;
      for (let k = 0; k < n; k++) {
        const i = (this.#next + k) % n;
        const q = this.#queues[i] as Queue;
        const w = q.waiting.shift();
        if (w === undefined) continue;
        this.#next = (i + 1) % n;
        this.#waiting--;
        clearTimeout(w.timer);
        w.settle({ release: this.#seat(q) });
        found = true;
        break;
      }
    }
  }
}
