/**
 * Verified service-account tokens, so that a token presented again costs no signature check: an
 * entry is keyed by the SHA-256 of the token (the token itself is never kept), holds the verified
 * claims, and dies at the token's expiry or after {@link TokenCache} `ttlMs`, whichever is first.
 * Bounded: the oldest entry goes when full. Revocation checks (lookups) still run on every use.
 */
import { createHash } from 'node:crypto';

/** Bounded map from token hash to verified claims. */
export class TokenCache<V> {
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { readonly value: V; readonly until: number }>();

  constructor(options: { readonly max?: number; readonly ttlMs?: number; readonly now?: () => number } = {}) {
    this.#max = options.max ?? 4096;
    this.#ttlMs = options.ttlMs ?? 10 * 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** The cache key of a token. */
  static keyOf(token: string): string {
    return createHash('sha256').update(token).digest('base64url');
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Remembers `value` until `expiresAtMs` (undefined: no expiry of its own). */
  set(key: string, value: V, expiresAtMs: number | undefined): void {
    const until = Math.min(this.#now() + this.#ttlMs, expiresAtMs ?? Number.POSITIVE_INFINITY);
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, until });
  }

  get size(): number {
    return this.#entries.size;
  }
}
