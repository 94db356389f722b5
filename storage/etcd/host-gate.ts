/**
 * Per-member fault handling for the `etcd3` connection pool.
 *
 * The pool asks each host's policy to run a call; a policy that throws before running it makes
 * the pool try the next member. A {@link HostGates} marks a member down for a short time after a
 * connection-level failure and, while it is down, declines calls to it, but only when some other
 * member is not down: with one endpoint, or when every member failed recently, calls always go
 * through, so recovery is noticed by the first call after it (no circuit-breaker dead time).
 */
import { isRecoverableError } from 'etcd3';

/**
 * How long a member that failed is skipped while another one is available: 1 s after the first
 * failure, doubling with each failure in a row up to 30 s, so a dead member costs one failed call
 * per period rather than one per second.
 */
const FIRST_DOWN_MS = 1_000;
const MAX_DOWN_MS = 30_000;

/** The slice of cockatiel's `IPolicy` that the etcd3 pool uses. */
export interface CallPolicy {
  execute<T>(fn: () => PromiseLike<T> | T): Promise<T>;
}

/** Thrown (to the pool only) to skip a member that is down; never reaches the store's callers. */
export class MemberSkippedError extends Error {
  constructor(readonly host: string) {
    super(`etcd member ${host} skipped: it failed recently`);
    this.name = 'MemberSkippedError';
  }
}

/** A policy that runs every call once, as given. */
export function passThroughPolicy(): CallPolicy {
  return {
    async execute<T>(fn: () => PromiseLike<T> | T): Promise<T> {
      return await fn();
    },
  };
}

/** The down-marks of one pool's members. */
export class HostGates {
  /** Host → time (ms) until which it counts as down. */
  readonly #downUntil = new Map<string, number>();
  /** Host → failures in a row. */
  readonly #streak = new Map<string, number>();
  readonly #memberCount: number;

  constructor(memberCount: number) {
    this.#memberCount = memberCount;
  }

  /** The policy for `host`; the pool calls it once per member. */
  policyFor(host: string): CallPolicy {
    return {
      execute: async <T>(fn: () => PromiseLike<T> | T): Promise<T> => {
        if (this.#skip(host)) throw new MemberSkippedError(host);
        try {
          const result = await fn();
          this.#streak.delete(host);
          return result;
        } catch (err) {
          if (isConnectionFailure(err)) {
            this.markFailed(host);
          } else {
            this.#streak.delete(host); // etcd answered: the member is reachable
          }
          throw err;
        }
      },
    };
  }

  /** True while `host` counts as down (a failure less than its down time ago). */
  isDown(host: string): boolean {
    const until = this.#downUntil.get(host);
    return until !== undefined && until > Date.now();
  }

  /** Records a connection-level failure of `host` seen outside a call (a watch stream's end). */
  markFailed(host: string): void {
    const streak = (this.#streak.get(host) ?? 0) + 1;
    this.#streak.set(host, streak);
    this.#downUntil.set(host, Date.now() + Math.min(MAX_DOWN_MS, FIRST_DOWN_MS * 2 ** (streak - 1)));
  }

  /** `host` answered a call made outside the pool (a status call): it is reachable again. */
  markAnswered(host: string): void {
    this.#downUntil.delete(host);
    this.#streak.delete(host);
  }

  #skip(host: string): boolean {
    if (this.#memberCount < 2) return false;
    const now = Date.now();
    const until = this.#downUntil.get(host);
    if (until === undefined || until <= now) return false;
    let down = 0;
    for (const t of this.#downUntil.values()) if (t > now) down += 1;
    return down < this.#memberCount;
  }
}

/** True for the errors the etcd3 client tags as transient (unavailable, deadline, cancelled, ...). */
function isConnectionFailure(err: unknown): boolean {
  return typeof err === 'object' && err !== null && isRecoverableError(err as Error);
}
