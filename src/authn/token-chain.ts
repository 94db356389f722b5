/**
 * The ordered bearer-token authenticators (kube's token union): the first that recognises a
 * token wins; errors of the others are kept only to explain a failure. Outcomes are cached by
 * token hash (see token-cache.ts), and a cached outcome is available synchronously.
 *
 * Audiences follow kube: a request's target audiences are `--api-audiences`; a TokenReview's
 * are its `spec.audiences`, or the server's when empty. Audience-agnostic authenticators are
 * good exactly for the server's audiences.
 */
import { TokenCache, tokenCacheKey, type CachedOutcome } from './token-cache.js';
import type { TokenAuthentication, TokenAuthenticator } from './token-authenticator.js';

/** Why no authenticator accepted a token (messages never contain the token). */
export class TokenRejected extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TokenRejected';
  }
}

/** Options of {@link TokenChain}. */
export interface TokenChainOptions {
  readonly authenticators: readonly TokenAuthenticator[];
  /** `--api-audiences` (kube defaults it to the service-account issuer). */
  readonly apiAudiences: readonly string[];
  /** The outcome cache; undefined: none. */
  readonly cache?: TokenCache;
}

/** Kube's message for a token that nothing recognised. */
export const INVALID_BEARER_TOKEN = 'invalid bearer token';

function intersect(a: readonly string[], b: readonly string[]): string[] {
  return a.filter((x) => b.includes(x));
}

/** See the module comment. */
export class TokenChain {
  readonly #authenticators: readonly TokenAuthenticator[];
  readonly #apiAudiences: readonly string[];
  readonly #cache: TokenCache | undefined;

  constructor(options: TokenChainOptions) {
    this.#authenticators = options.authenticators;
    this.#apiAudiences = options.apiAudiences;
    this.#cache = options.cache;
  }

  /** True when at least one token authenticator is configured. */
  get enabled(): boolean {
    return this.#authenticators.length > 0;
  }

  /** The server's audiences. */
  get apiAudiences(): readonly string[] {
    return this.#apiAudiences;
  }

  /** A cached outcome for a request's token, without a promise (undefined: not cached). */
  cached(token: string, audiences: readonly string[] = []): CachedOutcome | undefined {
    return this.#cache?.get(tokenCacheKey(token, audiences));
  }

  /**
   * The token's authentication.
   * @param audiences what the caller accepts (empty: the server's own audiences).
   * @throws TokenRejected when no authenticator accepts the token.
   */
  async authenticate(token: string, audiences: readonly string[] = []): Promise<TokenAuthentication> {
    const key = this.#cache === undefined ? undefined : tokenCacheKey(token, audiences);
    if (key !== undefined) {
      const hit = this.#cache?.get(key);
      if (hit !== undefined) {
        if (hit.result === undefined) throw new TokenRejected(hit.error ?? INVALID_BEARER_TOKEN);
        return hit.result;
      }
    }
    let result: TokenAuthentication | undefined;
    let error: unknown;
    try {
      result = await this.#first(token, audiences);
    } catch (err) {
      error = err;
    }
    if (key !== undefined) this.#cache?.set(key, result, error instanceof Error ? error.message : undefined);
    if (result !== undefined) return result;
    if (error instanceof Error) throw new TokenRejected(error.message, { cause: error });
    throw new TokenRejected(INVALID_BEARER_TOKEN);
  }

  async #first(token: string, audiences: readonly string[]): Promise<TokenAuthentication | undefined> {
    const target = audiences.length > 0 ? audiences : this.#apiAudiences;
    const implicit = target.length === 0 ? [] : intersect(this.#apiAudiences, target);
    let firstError: unknown;
    for (const a of this.#authenticators) {
      if (a.audienceAware !== true && target.length > 0 && implicit.length === 0) continue;
      let r: TokenAuthentication | undefined;
      try {
        r = await a.authenticateToken(token, target);
      } catch (err) {
        firstError ??= err;
        continue;
      }
      if (r === undefined) continue;
      if (a.audienceAware === true) return r;
      return { user: r.user, audiences: implicit };
    }
    if (firstError !== undefined) {
      throw firstError instanceof Error ? firstError : new Error('token authenticator failed');
    }
    return undefined;
  }
}
