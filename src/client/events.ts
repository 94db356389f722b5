/**
 * The event recorder: `events.k8s.io/v1` Events, as client-go's `tools/events` writes them. An
 * event is named `<regarding name>.<hex timestamp>` in the regarding object's namespace
 * (`default` for cluster-scoped objects). An identical event (same regarding and related object,
 * reason, action, note, type and reporting controller) seen again within 6 minutes becomes a
 * `series` on the first one (`count`, `lastObservedTime`) instead of a new object: the first
 * repeat is written at once, later repeats are coalesced and written every `seriesFlushMs`.
 * Writes wait for the recorder's own token bucket, and each starts when its token is due without
 * waiting for the writes before it (client-go writes each event from a goroutine of its own), at
 * most 100 at once; a series update waits for its event's creation. Writes held back wait in a
 * queue (10,000 by default; more events are dropped): client-go bounds neither, and queued events
 * cost far less memory than open requests. The recorder never throws; failures are logged, and
 * drops are logged at most every 10 s with their count (a burst of thousands would otherwise
 * print a line each).
 */
import { hostname } from 'node:os';
import type { ObjectReference } from '../api/types/core-v1.js';
import type { Event } from '../api/types/events-v1.js';
import type { Client, TypedObject } from './client.js';
import { isNotFound } from './errors.js';
import { microTime } from './leader-election.js';
import { TokenBucket } from './rate-limit.js';
import { EVENTS } from './resources.js';

/** Options of an {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** `reportingController`, e.g. `deployment-controller` (kube: `kubernetes.io/...` for some). */
  component: string;
  /** `reportingInstance` (default: this host's name). */
  host?: string;
  /** Event writes per second (default 5) and burst (default 25), apart from the client's own limits. */
  qps?: number;
  burst?: number;
  /** Writes waiting at most before new events are dropped (default 10,000). */
  maxQueued?: number;
  /** How often coalesced series updates are written (default 30 s). */
  seriesFlushMs?: number;
  /** Where failures are reported (default console.error). */
  log?: (message: string, err: unknown) => void;
}

/** An event of a series is merged into the first within this window (client-go: 6 minutes). */
const SERIES_WINDOW_MS = 6 * 60_000;
const DEFAULT_MAX_QUEUED = 10_000;
/**
 * Writes in flight at most: each holds an HTTP/2 stream and its buffers (a scheduler binding a
 * 5,000-pod backlog peaked 60 MiB higher with 1,000), and 100 pass a thousand events a second at
 * a busy server's 100 ms.
 */
const MAX_IN_FLIGHT = 100;
const MAX_NOTE = 1024;
/** Drops are logged at most this often, each line counting the drops since the last. */
const DROP_LOG_INTERVAL_MS = 10_000;

interface SeriesEntry {
  /** The event as built here, with its series (not the server's copy). */
  event: Event;
  lastSeen: number;
  /** A series update waits to be written. */
  dirty: boolean;
  /** The event's creation, once it started (settles either way): its series updates follow it. */
  created?: Promise<unknown>;
}

/** The reference to `obj` an Event carries. */
export function objectReference(obj: TypedObject): ObjectReference {
  const m = obj.metadata ?? {};
  const ref: ObjectReference = {};
  if (obj.kind !== undefined) ref.kind = obj.kind;
  if (m.namespace !== undefined && m.namespace !== '') ref.namespace = m.namespace;
  if (m.name !== undefined) ref.name = m.name;
  if (m.uid !== undefined) ref.uid = m.uid;
  if (obj.apiVersion !== undefined) ref.apiVersion = obj.apiVersion;
  if (m.resourceVersion !== undefined) ref.resourceVersion = m.resourceVersion;
  return ref;
}

/** Records events of one component. Call `close()` to flush and stop. */
export class EventRecorder {
  readonly #client: Client;
  readonly #component: string;
  readonly #host: string;
  readonly #bucket: TokenBucket;
  readonly #maxQueued: number;
  readonly #log: (message: string, err: unknown) => void;
  readonly #series = new Map<string, SeriesEntry>();
  readonly #queue: (() => Promise<void>)[] = [];
  #draining: Promise<void> | undefined;
  /** Writes started and not yet settled. */
  readonly #inFlight = new Set<Promise<void>>();
  #timer: NodeJS.Timeout | undefined;
  #seq = 0n;
  #closed = false;
  /** Events dropped since the last drop line, and when that line was written. */
  #dropped = 0;
  #droppedLoggedAt = -Infinity;

  constructor(client: Client, opts: EventRecorderOptions) {
    this.#client = client;
    this.#component = opts.component;
    this.#host = opts.host ?? hostname();
    this.#bucket = new TokenBucket(opts.qps ?? 5, opts.burst ?? 25);
    this.#maxQueued = opts.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.#log = opts.log ?? ((m, e) => console.error(m, e));
    this.#timer = setInterval(() => this.#flushSeries(), opts.seriesFlushMs ?? 30_000);
    this.#timer.unref();
  }

  /**
   * Records an event about `regarding` (and optionally `related`). `type` is Normal or Warning;
   * `reason` is UpperCamelCase (`ScalingReplicaSet`); `action` what was done (`Scaling`); `note`
   * a human-readable message (cut at 1 KiB).
   */
  event(
    regarding: TypedObject,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
    related?: TypedObject,
  ): void {
    if (this.#closed) return;
    const reg = objectReference(regarding);
    const rel = related === undefined ? undefined : objectReference(related);
    const n = note.length > MAX_NOTE ? note.slice(0, MAX_NOTE) : note;
    const key = JSON.stringify([
      reg.kind,
      reg.namespace,
      reg.name,
      reg.uid,
      rel?.kind,
      rel?.namespace,
      rel?.name,
      rel?.uid,
      reason,
      action,
      n,
      type,
    ]);
    const now = Date.now();
    const existing = this.#series.get(key);
    if (existing !== undefined && now - existing.lastSeen < SERIES_WINDOW_MS) {
      existing.lastSeen = now;
      const ev = existing.event;
      const first = ev.series === undefined;
      ev.series = { count: (ev.series?.count ?? 1) + 1, lastObservedTime: microTime(new Date(now)) };
      if (first) this.#enqueue(() => this.#writeSeries(existing));
      else existing.dirty = true;
      return;
    }
    // A new event that would be dropped is not built (nor remembered for a series).
    if (this.#full()) return;
    const event: Event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: `${reg.name ?? 'unknown'}.${this.#suffix(now)}`,
        namespace: reg.namespace ?? 'default',
      },
      eventTime: microTime(new Date(now)),
      reportingController: this.#component,
      reportingInstance: this.#host,
      action,
      reason,
      regarding: reg,
      ...(rel === undefined ? {} : { related: rel }),
      note: n,
      type,
    };
    const entry: SeriesEntry = { event, lastSeen: now, dirty: false };
    this.#enqueue(() => this.#create(entry));
    this.#series.set(key, entry);
  }

  /** Hex of the time in ns, made unique within this recorder. */
  #suffix(nowMs: number): string {
    const ns = BigInt(nowMs) * 1_000_000n + (this.#seq++ % 1_000_000n);
    return ns.toString(16);
  }

  /** True, and the write it would have been counted as dropped, when the queue is full. */
  #full(): boolean {
    if (this.#queue.length < this.#maxQueued) return false;
    this.#dropped++;
    if (Date.now() - this.#droppedLoggedAt >= DROP_LOG_INTERVAL_MS) this.#logDrops();
    return true;
  }

  /**
   * Starts `job` now when nothing waits before it and a token and a write slot are free; else
   * queues it, unless the queue is full (then it is dropped). So a burst recorded in one go waits
   * in the queue only for what the rate holds back.
   */
  #enqueue(job: () => Promise<void>): void {
    // Nothing waits before it: no queued job, nor one the drain took out and waits a token for.
    const first = this.#queue.length === 0 && this.#draining === undefined;
    if (first && this.#inFlight.size < MAX_IN_FLIGHT && this.#bucket.tryAccept()) {
      this.#start(job);
      return;
    }
    if (this.#full()) return;
    this.#queue.push(job);
    this.#draining ??= this.#drain();
  }

  #start(job: () => Promise<void>): void {
    const write: Promise<void> = job()
      .catch((err: unknown) => this.#log(`event recorder ${this.#component}: writing an event failed`, err))
      .finally(() => this.#inFlight.delete(write));
    this.#inFlight.add(write);
  }

  #logDrops(): void {
    this.#log(`event recorder ${this.#component}: queue full, dropped ${this.#dropped} event(s)`, undefined);
    this.#dropped = 0;
    this.#droppedLoggedAt = Date.now();
  }

  /** Starts the queued writes in order, each when its token is due. */
  async #drain(): Promise<void> {
    for (let job = this.#queue.shift(); job !== undefined; job = this.#queue.shift()) {
      while (this.#inFlight.size >= MAX_IN_FLIGHT) await Promise.race(this.#inFlight);
      await this.#bucket.wait();
      this.#start(job);
    }
    this.#draining = undefined;
  }

  // An entry keeps the event as this recorder built it, not the server's answer: a series needs
  // only its name, namespace and content, and the answer (managedFields and all) would otherwise
  // be held for the series window.
  async #create(entry: SeriesEntry): Promise<void> {
    const created = this.#client.resource<Event>(EVENTS).create(entry.event);
    entry.created = created.catch(() => undefined);
    await created;
  }

  async #writeSeries(entry: SeriesEntry): Promise<void> {
    await entry.created;
    entry.dirty = false;
    const ev = entry.event;
    const events = this.#client.resource<Event>(EVENTS);
    try {
      await events.patch(
        ev.metadata.name ?? '',
        { series: ev.series },
        { type: 'merge', namespace: ev.metadata.namespace ?? 'default' },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The event expired (TTL): write it anew with the series.
      await events.create(ev);
    }
  }

  #flushSeries(): void {
    const now = Date.now();
    for (const [key, entry] of this.#series) {
      if (entry.dirty) this.#enqueue(() => this.#writeSeries(entry));
      else if (now - entry.lastSeen >= SERIES_WINDOW_MS) this.#series.delete(key);
    }
  }

  /** Writes what is queued (including pending series updates); resolves when done. */
  async flush(): Promise<void> {
    for (const entry of this.#series.values()) if (entry.dirty) this.#enqueue(() => this.#writeSeries(entry));
    while (this.#draining !== undefined || this.#inFlight.size > 0) {
      await Promise.all([this.#draining, ...this.#inFlight]);
    }
  }

  /** Flushes, then stops recording (later events are ignored). */
  async close(): Promise<void> {
    await this.flush();
    if (this.#dropped > 0) this.#logDrops();
    this.#closed = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
