/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection` with a
 * LeaseLock: candidates try to acquire the Lease every `retryPeriod`; the holder renews it every
 * `retryPeriod` and steps down when it has not renewed for `renewDeadline`; another candidate
 * takes over once it has watched the Lease go unchanged for the Lease's duration (measured on
 * its own clock, so clock skew between candidates does not matter).
 *
 * The Lease's spec carries `holderIdentity`, `leaseDurationSeconds`, `acquireTime` (when the
 * current holder acquired it), `renewTime` (its last renewal) and `leaseTransitions` (how many
 * times the holder changed).
 */
import type { Lease, LeaseSpec } from '../api/types/coordination-v1.js';
import type { Client } from './client.js';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';
import { sleep } from './rate-limit.js';
import { LEASES } from './resources.js';

/** Configuration of a {@link LeaderElector}. Durations default to kube's 15 s / 10 s / 2 s. */
export interface LeaderElectorOptions {
  readonly client: Client;
  readonly namespace: string;
  readonly name: string;
  /** This candidate (kube: `<hostname>_<uuid>`). */
  readonly identity: string;
  /** How long a non-holder waits after the Lease's last change before taking over (default 15000). */
  readonly leaseDurationMs?: number;
  /** How long the holder keeps trying to renew before it steps down (default 10000). */
  readonly renewDeadlineMs?: number;
  /** How often to try to acquire or renew (default 2000). */
  readonly retryPeriodMs?: number;
  /** On `run`'s signal, give the Lease up (holder '') so another takes over at once (default false). */
  readonly releaseOnCancel?: boolean;
  /** Called on becoming leader; `signal` aborts when leadership ends. Must not throw. */
  onStartedLeading(signal: AbortSignal): void;
  /** Called when leadership ends (lost, or `run` cancelled), only after `onStartedLeading`. */
  onStoppedLeading(): void;
  /** Called whenever the observed holder changes (including to this candidate). */
  onNewLeader?(identity: string): void;
  /** Where failed attempts are reported (default console.error). */
  readonly log?: (message: string, err: unknown) => void;
}

/** `metav1.MicroTime`: RFC 3339 with microseconds. */
export function microTime(d: Date = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** One candidate for a Lease. */
export class LeaderElector {
  readonly #o: LeaderElectorOptions;
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #retryMs: number;
  /** The last Lease spec seen and when (monotonic ms) it last changed. */
  #observed: LeaseSpec | undefined;
  #observedKey = '';
  #observedAt = 0;
  #leading = false;
  #leader = '';

  constructor(opts: LeaderElectorOptions) {
    this.#o = opts;
    this.#leaseMs = opts.leaseDurationMs ?? 15_000;
    this.#renewMs = opts.renewDeadlineMs ?? 10_000;
    this.#retryMs = opts.retryPeriodMs ?? 2_000;
    if (!(this.#leaseMs > this.#renewMs))
      throw new RangeError('leader election: leaseDuration must be greater than renewDeadline');
    if (!(this.#renewMs > this.#retryMs * 1.2))
      throw new RangeError('leader election: renewDeadline must be greater than retryPeriod*1.2');
  }

  /** True while this candidate holds the Lease. */
  isLeader(): boolean {
    return this.#leading;
  }

  /** The last observed holder ('' when none). */
  getLeader(): string {
    return this.#leader;
  }

  #log(message: string, err: unknown): void {
    (this.#o.log ?? ((m, e) => console.error(m, e)))(
      `leader election ${this.#o.namespace}/${this.#o.name} (${this.#o.identity}): ${message}`,
      err,
    );
  }

  /**
   * Campaigns until leader, leads until the Lease is lost or `signal` aborts, then returns.
   * Never throws.
   */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (await this.#attempt(this.#renewMs)) break;
      await sleep(this.#retryMs * (1 + Math.random() * 1.2), signal).catch(() => undefined);
    }
    if (signal.aborted) return;
    this.#leading = true;
    const leadership = new AbortController();
    try {
      this.#o.onStartedLeading(leadership.signal);
    } catch (err) {
      this.#log('onStartedLeading threw', err);
    }
    let lastRenew = performance.now();
    while (!signal.aborted) {
      await sleep(this.#retryMs, signal).catch(() => undefined);
      if (signal.aborted) break;
      const left = this.#renewMs - (performance.now() - lastRenew);
      if (left > 0 && (await this.#attempt(left))) {
        lastRenew = performance.now();
        continue;
      }
      if (performance.now() - lastRenew >= this.#renewMs) {
        this.#log('lease lost: not renewed within the renew deadline', undefined);
        break;
      }
    }
    this.#leading = false;
    leadership.abort(new Error('leadership lost'));
    if (signal.aborted && this.#o.releaseOnCancel === true) await this.#release();
    try {
      this.#o.onStoppedLeading();
    } catch (err) {
      this.#log('onStoppedLeading threw', err);
    }
  }

  /** One try bounded by `timeoutMs`; false on any failure (logged unless expected). */
  async #attempt(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([this.#tryAcquireOrRenew(), timeout]);
    } catch (err) {
      if (!isConflict(err) && !isAlreadyExists(err)) this.#log('acquire or renew failed', err);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  #observe(spec: LeaseSpec): void {
    const key = JSON.stringify([
      spec.holderIdentity ?? '',
      spec.leaseDurationSeconds ?? 0,
      spec.acquireTime ?? '',
      spec.renewTime ?? '',
      spec.leaseTransitions ?? 0,
    ]);
    if (key !== this.#observedKey) {
      this.#observedKey = key;
      this.#observed = spec;
      this.#observedAt = performance.now();
    }
    const holder = spec.holderIdentity ?? '';
    if (holder !== this.#leader) {
      this.#leader = holder;
      if (holder !== '') this.#o.onNewLeader?.(holder);
    }
  }

  async #tryAcquireOrRenew(): Promise<boolean> {
    const leases = this.#o.client.resource<Lease>(LEASES);
    const { namespace, name, identity } = this.#o;
    const seconds = Math.max(1, Math.round(this.#leaseMs / 1000));
    const now = microTime();
    let lease: Lease;
    try {
      lease = await leases.get(name, { namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      const spec: LeaseSpec = {
        holderIdentity: identity,
        leaseDurationSeconds: seconds,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: 0,
      };
      const created = await leases.create({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec,
      });
      this.#observe(created.spec ?? spec);
      return true;
    }
    const old = lease.spec ?? {};
    this.#observe(old);
    const holder = old.holderIdentity ?? '';
    const durationMs = (old.leaseDurationSeconds ?? seconds) * 1000;
    if (holder !== '' && holder !== identity && this.#observedAt + durationMs > performance.now())
      return false;
    const held = holder === identity && this.#observed !== undefined;
    const spec: LeaseSpec = {
      ...old,
      holderIdentity: identity,
      leaseDurationSeconds: seconds,
      acquireTime: held ? (old.acquireTime ?? now) : now,
      renewTime: now,
      leaseTransitions: held ? (old.leaseTransitions ?? 0) : (old.leaseTransitions ?? 0) + 1,
    };
    const updated = await leases.update({ ...lease, spec });
    this.#observe(updated.spec ?? spec);
    return true;
  }

  /** Gives the Lease up if still ours: holder '', duration 1 s (as client-go's release). */
  async #release(): Promise<void> {
    try {
      const leases = this.#o.client.resource<Lease>(LEASES);
      const lease = await leases.get(this.#o.name, { namespace: this.#o.namespace });
      if (lease.spec?.holderIdentity !== this.#o.identity) return;
      const now = microTime();
      await leases.update({
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
        },
      });
    } catch (err) {
      this.#log('release failed', err);
    }
  }
}
