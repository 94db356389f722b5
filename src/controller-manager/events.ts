/**
 * The event recorders of one term of the controllers: one client `EventRecorder` (events.k8s.io/v1
 * with series aggregation) per controller client and component, closed (flushed) together when
 * the controllers stop.
 *
 * In front of each recorder, the two steps of client-go `tools/record`'s EventCorrelator, which
 * kube-controller-manager's controllers record through. Beyond them the only limit is the
 * controller client's own QPS, as in kube.
 *
 * First, kube's aggregation of similar events (its EventAggregator):
 * events that differ only in their note (same regarding object, type and reason) are written
 * as they are up to 10 distinct notes within 10 minutes; after that they are recorded with the
 * note `(combined from similar events): <the first combined note>`, which the recorder turns
 * into one event whose series counts them. A ReplicaSet scaled to 10,000 replicas thus writes
 * 10 `SuccessfulCreate` events and one series, not 10,000 events (which the recorder's queue
 * would mostly drop, after holding each of them for the 6-minute series window). kube's
 * combined event carries the latest note; here it keeps the first, so that it stays one series.
 *
 * Then kube's spam filter (its EventSourceObjectSpamFilter): each object's events (per type,
 * whatever their reason) pass 25 at once and then one per 5 minutes; more are dropped.
 */
import { EventRecorder, TokenBucket, type Client, type TypedObject } from '../client/index.js';
import type { EventSink } from '../controllers/context.js';

/** Distinct notes of one kind of event written before they are combined (client-go's default). */
export const AGGREGATE_MAX_EVENTS = 10;
/** The window of the count (client-go's default, 600 s). */
export const AGGREGATE_WINDOW_MS = 600_000;
/** Aggregation keys remembered, least recently used dropped first (client-go's LRU size). */
export const AGGREGATE_MAX_KEYS = 4096;

const COMBINED_PREFIX = '(combined from similar events): ';

/** Events of one object and type let through at once (client-go's defaultSpamBurst). */
export const SPAM_BURST = 25;
/** Then one each this often (client-go's defaultSpamQPS, 1/300). */
export const SPAM_REFILL_MS = 300_000;
/** Objects remembered, least recently used dropped first (client-go's LRU size). */
export const SPAM_MAX_KEYS = 4096;

interface Similar {
  /** When the window began. */
  since: number;
  /** Distinct notes seen in the window (at most {@link AGGREGATE_MAX_EVENTS}). */
  readonly notes: Set<string>;
  /** The combined note, once there is one. */
  combined?: string;
}

/** A key of `regarding` (by kind, namespace, name and uid) and `more`, for the LRU maps below. */
function objectKey(regarding: TypedObject, ...more: string[]): string {
  const m = regarding.metadata ?? {};
  return JSON.stringify([regarding.kind, m.namespace, m.name, m.uid, ...more]);
}

/**
 * Puts `value` under `key` as the most recently used entry of `lru` (Map order is the LRU order),
 * dropping the least recently used beyond `max`.
 */
function remember<V>(lru: Map<string, V>, key: string, value: V, max: number): void {
  lru.delete(key);
  lru.set(key, value);
  if (lru.size > max) {
    const oldest = lru.keys().next().value;
    if (oldest !== undefined) lru.delete(oldest);
  }
}

/** Combines similar events before they reach `sink` (see the module comment). */
export class SimilarEventAggregator implements EventSink {
  /** By aggregation key; Map order is the LRU order (a use re-inserts). */
  readonly #similar = new Map<string, Similar>();

  constructor(
    private readonly sink: EventSink,
    private readonly now: () => number = Date.now,
  ) {}

  event(
    regarding: TypedObject,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
  ): void {
    const key = objectKey(regarding, type, reason, action);
    const now = this.now();
    let s = this.#similar.get(key);
    if (s === undefined || now - s.since > AGGREGATE_WINDOW_MS) s = { since: now, notes: new Set() };
    remember(this.#similar, key, s, AGGREGATE_MAX_KEYS);
    if (s.notes.has(note) || s.notes.size < AGGREGATE_MAX_EVENTS) {
      s.notes.add(note);
      this.sink.event(regarding, type, reason, action, note);
      return;
    }
    s.combined ??= `${COMBINED_PREFIX}${note}`;
    this.sink.event(regarding, type, reason, action, s.combined);
  }
}

/** Drops an object's events beyond its allowance (see the module comment). */
export class ObjectSpamFilter implements EventSink {
  /** By object and type. Map order is the LRU order. */
  readonly #buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly sink: EventSink,
    private readonly now: () => number = Date.now,
  ) {}

  event(
    regarding: TypedObject,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
  ): void {
    const key = objectKey(regarding, regarding.apiVersion ?? '', type);
    const bucket = this.#buckets.get(key) ?? new TokenBucket(1000 / SPAM_REFILL_MS, SPAM_BURST, this.now);
    remember(this.#buckets, key, bucket, SPAM_MAX_KEYS);
    if (bucket.tryAccept()) this.sink.event(regarding, type, reason, action, note);
  }
}

/** Makes and closes recorders. */
export class EventRecorders {
  readonly #made = new Map<Client, Map<string, { recorder: EventRecorder; sink: EventSink }>>();

  constructor(private readonly onError: (message: string, err: unknown) => void) {}

  /** The recorder of `component` writing through `client` (one per pair). */
  for(client: Client, component: string): EventSink {
    let byComponent = this.#made.get(client);
    if (byComponent === undefined) {
      byComponent = new Map();
      this.#made.set(client, byComponent);
    }
    let made = byComponent.get(component);
    if (made === undefined) {
      // No rate of the recorder's own: the spam filter and the client's QPS bound it, as in kube.
      const recorder = new EventRecorder(client, { component, qps: -1, burst: 1, log: this.onError });
      made = { recorder, sink: new SimilarEventAggregator(new ObjectSpamFilter(recorder)) };
      byComponent.set(component, made);
    }
    return made.sink;
  }

  /** Flushes and stops every recorder. */
  async close(): Promise<void> {
    const all = [...this.#made.values()].flatMap((m) => [...m.values()]);
    this.#made.clear();
    await Promise.all(all.map((r) => r.recorder.close()));
  }
}
