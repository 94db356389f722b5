/**
 * The scheduling queue, as kube's PriorityQueue: an active heap (QueueSort order), a backoff heap
 * (by backoff expiry: initial × 2^(attempts−1), capped), and the unschedulable pods, which wait
 * for a cluster event one of the plugins that rejected them registered for, or for the periodic
 * flush (5 minutes). Gated pods (PreEnqueue refused) wait until an update lets them in.
 *
 * States: new → (gated | active); active → popped (in flight); popped → (unschedulable |
 * backoff | done); unschedulable → (backoff | active) on an event or flush; backoff → active when
 * the backoff expires.
 */
import type { Pod } from '../api/types/core-v1.js';
import type { ClusterEvent, Plugin, QueuedPod } from './framework/types.js';
import type { MaybeStatus } from './framework/status.js';
import { KeyedHeap } from './heap.js';
import { PodInfo } from './pod-info.js';

/** A pod waiting in the queue. */
export interface QueuedPodInfo extends QueuedPod {
  info: PodInfo;
  /** Scheduling attempts so far. */
  attempts: number;
  /** When the pod first entered the queue (for the SLI metric). */
  readonly initialAttempt: number;
  /** Plugins that rejected it in its last attempt. */
  unschedulablePlugins: Set<string>;
  /** When its backoff ends (ms). */
  backoffExpiry: number;
  /** When it became unschedulable (ms). */
  unschedulableSince: number;
  /** The PreEnqueue plugin that gates it. */
  gatedBy: string | undefined;
}

/** Options of {@link SchedulingQueue}. */
export interface QueueOptions {
  readonly less: (a: QueuedPodInfo, b: QueuedPodInfo) => boolean;
  readonly preEnqueue: (info: PodInfo) => MaybeStatus;
  /** Plugins by name, for matching events to rejections. */
  readonly plugins: ReadonlyMap<string, Plugin>;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Unschedulable pods older than this are flushed to active/backoff (kube: 5 min). */
  readonly maxUnschedulableMs?: number;
  readonly now?: () => number;
}

function key(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

function eventMatches(registered: readonly ClusterEvent[] | undefined, e: ClusterEvent): boolean {
  for (const r of registered ?? []) {
    const res =
      r.resource === '*' ||
      r.resource === e.resource ||
      (r.resource === 'Pod' && e.resource === 'AssignedPod');
    if (res && (r.action === '*' || r.action === e.action)) return true;
  }
  return false;
}

/** Pending pod counts by queue (the `scheduler_pending_pods` gauge). */
export interface PendingCounts {
  readonly active: number;
  readonly backoff: number;
  readonly unschedulable: number;
  readonly gated: number;
}

/** The queue. Single-threaded: `pop()` waits for a pod or for `close()`. */
export class SchedulingQueue {
  readonly #active: KeyedHeap<QueuedPodInfo>;
  readonly #backoff = new KeyedHeap<QueuedPodInfo>(
    (q) => q.info.key,
    (a, b) => a.backoffExpiry < b.backoffExpiry,
  );
  readonly #unschedulable = new Map<string, QueuedPodInfo>();
  readonly #gated = new Map<string, QueuedPodInfo>();
  /** Pods popped and not yet done (their attempt is running). */
  readonly #inFlight = new Map<string, QueuedPodInfo>();
  #waiter: ((q: QueuedPodInfo | undefined) => void) | undefined;
  #closed = false;
  #cycle = 0;
  #moveRequestCycle = -1;
  #lastAdd = 0;
  readonly #now: () => number;

  constructor(readonly opts: QueueOptions) {
    this.#active = new KeyedHeap((q) => q.info.key, opts.less);
    this.#now = opts.now ?? Date.now;
  }

  /** The number of the current scheduling cycle (incremented by each pop). */
  get cycle(): number {
    return this.#cycle;
  }

  /** The number of pods ready to pop now (the scheduling loop asks it after every pod). */
  get activeSize(): number {
    return this.#active.size;
  }

  counts(): PendingCounts {
    return {
      active: this.#active.size,
      backoff: this.#backoff.size,
      unschedulable: this.#unschedulable.size,
      gated: this.#gated.size,
    };
  }

  /** True when the pod is somewhere in the queue or in flight. */
  has(podKey: string): boolean {
    return (
      this.#active.has(podKey) ||
      this.#backoff.has(podKey) ||
      this.#unschedulable.has(podKey) ||
      this.#gated.has(podKey) ||
      this.#inFlight.has(podKey)
    );
  }

  /** Where the pod is (diagnostics). */
  where(podKey: string): string {
    if (this.#active.has(podKey)) return 'active';
    if (this.#backoff.has(podKey)) return 'backoff';
    if (this.#unschedulable.has(podKey)) return 'unschedulable';
    if (this.#gated.has(podKey)) return 'gated';
    if (this.#inFlight.has(podKey)) return 'in flight';
    return 'absent';
  }

  /** A new pending pod. */
  add(pod: Pod): void {
    // Strictly increasing, so that equal-priority pods keep their arrival order.
    const now = Math.max(this.#now(), this.#lastAdd + 0.001);
    this.#lastAdd = now;
    const q: QueuedPodInfo = {
      info: new PodInfo(pod),
      timestamp: now,
      attempts: 0,
      initialAttempt: now,
      unschedulablePlugins: new Set(),
      backoffExpiry: 0,
      unschedulableSince: 0,
      gatedBy: undefined,
    };
    this.#toActive(q);
  }

  /** Runs PreEnqueue and puts the pod in the active heap or among the gated. */
  #toActive(q: QueuedPodInfo): void {
    const s = this.opts.preEnqueue(q.info);
    const k = q.info.key;
    this.#unschedulable.delete(k);
    this.#backoff.delete(k);
    if (s !== undefined) {
      q.gatedBy = s.plugin;
      this.#gated.set(k, q);
      return;
    }
    q.gatedBy = undefined;
    this.#gated.delete(k);
    this.#active.push(q);
    this.#wake();
  }

  /** A pending pod changed: refresh it; gated or unschedulable pods get another chance. */
  update(pod: Pod): void {
    const k = key(pod);
    const info = new PodInfo(pod);
    const inFlight = this.#inFlight.get(k);
    if (inFlight !== undefined) {
      inFlight.info = info;
      return;
    }
    const active = this.#active.get(k);
    if (active !== undefined) {
      active.info = info;
      this.#active.push(active);
      return;
    }
    const waiting = this.#gated.get(k) ?? this.#unschedulable.get(k) ?? this.#backoff.get(k);
    if (waiting === undefined) {
      this.add(pod);
      return;
    }
    waiting.info = info;
    if (this.#backoff.has(k)) return;
    if (this.#gated.has(k) || this.#unschedulable.has(k)) this.#requeue(waiting);
  }

  /** The pod is gone (deleted or bound by someone else). */
  delete(podKey: string): void {
    this.#active.delete(podKey);
    this.#backoff.delete(podKey);
    this.#unschedulable.delete(podKey);
    this.#gated.delete(podKey);
  }

  /** The next pod to schedule, or undefined once closed. */
  pop(): Promise<QueuedPodInfo | undefined> {
    // Closed first: a scheduler that stepped down leaves its pods queued for when it leads again.
    if (this.#closed) return Promise.resolve(undefined);
    const q = this.#active.pop();
    if (q !== undefined) return Promise.resolve(this.#take(q));
    return new Promise((resolve) => {
      this.#waiter = resolve;
    });
  }

  #take(q: QueuedPodInfo): QueuedPodInfo {
    this.#cycle++;
    q.attempts++;
    this.#inFlight.set(q.info.key, q);
    return q;
  }

  #wake(): void {
    const w = this.#waiter;
    if (w === undefined) return;
    const q = this.#active.pop();
    if (q === undefined) return;
    this.#waiter = undefined;
    w(this.#take(q));
  }

  /** The attempt ended (bound, or the pod went away). */
  done(podKey: string): void {
    this.#inFlight.delete(podKey);
  }

  #backoffMs(attempts: number): number {
    let d = this.opts.initialBackoffMs;
    for (let i = 1; i < attempts; i++) {
      d *= 2;
      if (d >= this.opts.maxBackoffMs) return this.opts.maxBackoffMs;
    }
    return d;
  }

  /**
   * A failed attempt. Rejections wait among the unschedulable unless a move request came
   * during the attempt (`cycle`); errors go to backoff.
   */
  addUnschedulable(q: QueuedPodInfo, cycle: number, isError: boolean): void {
    const k = q.info.key;
    if (!this.#inFlight.has(k)) return;
    this.#inFlight.delete(k);
    const now = this.#now();
    q.backoffExpiry = now + this.#backoffMs(q.attempts);
    if (isError || this.#moveRequestCycle >= cycle) {
      this.#backoff.push(q);
      return;
    }
    q.unschedulableSince = now;
    this.#unschedulable.set(k, q);
  }

  #requeue(q: QueuedPodInfo): void {
    const k = q.info.key;
    this.#unschedulable.delete(k);
    this.#gated.delete(k);
    if (q.backoffExpiry > this.#now()) this.#backoff.push(q);
    else this.#toActive(q);
  }

  /** A cluster event: moves the unschedulable pods it may help (kube's queueing). */
  onEvent(e: ClusterEvent): void {
    this.#moveRequestCycle = this.#cycle;
    if (this.#unschedulable.size === 0) return;
    for (const q of [...this.#unschedulable.values()]) {
      let move = q.unschedulablePlugins.size === 0;
      for (const name of q.unschedulablePlugins) {
        if (eventMatches(this.opts.plugins.get(name)?.events, e)) {
          move = true;
          break;
        }
      }
      if (move) this.#requeue(q);
    }
  }

  /** Moves expired backoffs to active and old unschedulable pods out (call every second). */
  flush(): void {
    const now = this.#now();
    for (
      let top = this.#backoff.peek();
      top !== undefined && top.backoffExpiry <= now;
      top = this.#backoff.peek()
    ) {
      this.#backoff.pop();
      this.#toActive(top);
    }
    const max = this.opts.maxUnschedulableMs ?? 5 * 60_000;
    for (const q of [...this.#unschedulable.values()]) {
      if (now - q.unschedulableSince >= max) this.#requeue(q);
    }
  }

  /** Ends `pop()` waits; pending pods are dropped. */
  /** Puts a popped pod back, unattempted (its scheduler stopped before the attempt). */
  putBack(q: QueuedPodInfo): void {
    this.#inFlight.delete(q.info.key);
    q.attempts--;
    this.#toActive(q);
  }

  /** Undoes `close()`: a scheduler that lost leadership and won it again pops anew. */
  reopen(): void {
    this.#closed = false;
  }

  close(): void {
    this.#closed = true;
    const w = this.#waiter;
    this.#waiter = undefined;
    w?.(undefined);
  }
}
