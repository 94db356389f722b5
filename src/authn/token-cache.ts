/**
 * A bounded cache of token outcomes keyed by a SHA-256 of the token and the audiences asked for
 * (kube's `tokencache`): the token itself is never kept. Successes and failures have their own
 * time to live; 0 turns that side off. Reads are synchronous, so a cached token costs a request
 * no promise.
 */
import { createHash } from 'node:crypto';
import type { TokenAuthentication } from './token-authenticator.js';

/** A cached outcome: the authentication, or undefined for "no authenticator accepted it". */
export interface CachedOutcome {
  readonly result: TokenAuthentication | undefined;
  /** Why a failure failed (an authenticator's message), if one said. */
  readonly error?: string;
}

interface Entry {
  readonly outcome: CachedOutcome;
  readonly expires: number;
}

/** Options of {@link TokenCache}. */
export interface TokenCacheOptions {
  readonly successTtlMs: number;
  readonly failureTtlMs: number;
  /** Most entries kept (oldest dropped first); default 4096. */
  readonly maxEntries?: number;
  /** The clock (tests); default `Date.now`. */
  readonly now?: () => number;
}

/** The cache key of a token asked for with some audiences. */
export function tokenCacheKey(token: string, audiences: readonly string[]): string {
  const h = createHash('sha256').update(token);
  for (const a of audiences) h.update('\0').update(a);
  return h.digest('base64url');
}

/** See the module comment. */
export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #options: TokenCacheOptions;
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: TokenCacheOptions) {
    this.#options = options;
    this.#max = options.maxEntries ?? 4096;
    this.#now = options.now ?? Date.now;
  }

  /** The live outcome under `key`, if any. */
  get(key: string): CachedOutcome | undefined {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (e.expires <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.outcome;
  }

  /** Remembers an outcome (no-op when its side's TTL is 0). */
  set(key: string, result: TokenAuthentication | undefined, error?: string): void {
    const ttl = result === undefined ? this.#options.failureTtlMs : this.#options.successTtlMs;
    if (ttl <= 0) return;
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    const outcome = error === undefined ? { result } : { result, error };
    this.#entries.set(key, { outcome: Object.freeze(outcome), expires: this.#now() + ttl });
  }

  /** Entries held (tests). */
  get size(): number {
    return this.#entries.size;
  }
}
