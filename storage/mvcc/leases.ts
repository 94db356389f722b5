/**
 * The lease table: which leases exist, when they expire, and which keys each one holds.
 *
 * Leases are persisted with their absolute expiry (wall-clock milliseconds), so a restart
 * neither forgets them nor extends them: a lease that expired while the store was down
 * expires right after reopening. Key membership is not persisted separately; it is rebuilt
 * from the keys' lease field with the key index.
 *
 * Expiry calls back into the store, which deletes the keys (one revision each) and then the
 * lease record, in that order, so a crash in between leaves a lease that expires again.
 */
import type { LeaseRecord } from './codec.js';

/** Longest delay `setTimeout` accepts; later expiries re-arm in steps. */
const MAX_TIMER_MS = 0x7fff_ffff;

interface Lease {
  readonly record: LeaseRecord;
  readonly keys: Set<string>;
  timer: NodeJS.Timeout | undefined;
}

/** Leases in memory, with their expiry timers and attached keys. */
export class LeaseTable {
  readonly #leases = new Map<bigint, Lease>();
  readonly #onExpire: (id: bigint) => void;
  #stopped = false;

  /** @param onExpire called (once) when a lease's time is up */
  constructor(onExpire: (id: bigint) => void) {
    this.#onExpire = onExpire;
  }

  has(id: bigint): boolean {
    return this.#leases.has(id);
  }

  /** Registers a lease and arms its expiry timer. */
  add(record: LeaseRecord): void {
    const lease: Lease = { record, keys: new Set(), timer: undefined };
    this.#leases.set(record.id, lease);
    this.#arm(lease);
  }

  /** Notes that `key` is attached to lease `id` (ignored for `0n`). */
  attach(id: bigint, key: string): void {
    if (id !== 0n) this.#leases.get(id)?.keys.add(key);
  }

  detach(id: bigint, key: string): void {
    if (id !== 0n) this.#leases.get(id)?.keys.delete(key);
  }

  /**
   * Removes lease `id` and returns the keys it held, or undefined for an unknown lease.
   * After this, attaching to the lease fails, so no key joins a lease being revoked.
   */
  take(id: bigint): readonly string[] | undefined {
    const lease = this.#leases.get(id);
    if (lease === undefined) return undefined;
    this.#leases.delete(id);
    if (lease.timer !== undefined) clearTimeout(lease.timer);
    return [...lease.keys];
  }

  /** Stops every timer (store closing); the table is unusable afterwards. */
  stop(): void {
    this.#stopped = true;
    for (const lease of this.#leases.values()) {
      if (lease.timer !== undefined) clearTimeout(lease.timer);
      lease.timer = undefined;
    }
  }

  #arm(lease: Lease): void {
    if (this.#stopped) return;
    const delay = Math.max(0, lease.record.expiresAt - Date.now());
    // Timers do not keep the process alive: an idle store must not block exit.
    lease.timer = setTimeout(
      () => {
        lease.timer = undefined;
        if (this.#leases.get(lease.record.id) !== lease) return;
        if (lease.record.expiresAt > Date.now()) this.#arm(lease);
        else this.#onExpire(lease.record.id);
      },
      Math.min(delay, MAX_TIMER_MS),
    ).unref();
  }
}
