/**
 * Event retention (`--event-ttl`): Event objects (core and events.k8s.io, which share storage)
 * are written with a storage lease, so the store deletes them when it expires.
 *
 * Granting one lease per event would make one lease per write; as kube-apiserver's etcd3 lease
 * manager does, we reuse a lease for every event written within a short window and grant it for
 * the TTL plus that window, so each event lives at least the TTL and at most TTL + window.
 */
import type { Store } from '../../storage/interface.js';

/** Kube's cap on the reuse window (seconds). */
const MAX_REUSE_SECONDS = 60;
/** Kube's reuse window as a fraction of the TTL. */
const REUSE_FRACTION = 0.05;

/** Hands out shared event leases of one store. */
export class EventLeases {
  readonly #store: Store;
  readonly #ttlSeconds: number;
  readonly #reuseMs: number;
  readonly #now: () => number;
  /** The lease being handed out and when it stops being handed out (ms since epoch). */
  #current: { lease: Promise<bigint>; until: number } | undefined;

  /**
   * @param ttlSeconds the event TTL; ≤ 0 disables leases ({@link leaseFor} resolves `undefined`).
   * @param now clock in milliseconds (tests inject one).
   */
  constructor(store: Store, ttlSeconds: number, now: () => number = Date.now) {
    this.#store = store;
    this.#ttlSeconds = Math.floor(ttlSeconds);
    this.#reuseMs = Math.min(MAX_REUSE_SECONDS, Math.floor(this.#ttlSeconds * REUSE_FRACTION)) * 1000;
    this.#now = now;
  }

  /**
   * The lease to attach an event written now to. Concurrent callers share one grant; a failed
   * grant is not cached (the next call grants again).
   */
  async leaseFor(): Promise<bigint | undefined> {
    if (this.#ttlSeconds <= 0) return undefined;
    const now = this.#now();
    if (this.#current === undefined || now >= this.#current.until) {
      const lease = this.#store.grantLease(this.#ttlSeconds + this.#reuseMs / 1000);
      const current = { lease, until: now + this.#reuseMs };
      this.#current = current;
      lease.catch(() => {
        if (this.#current === current) this.#current = undefined;
      });
    }
    return this.#current.lease;
  }
}
