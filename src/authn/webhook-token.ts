/**
 * Webhook token authentication (`--authentication-token-webhook-config-file`): the token is
 * sent to a remote service as an `authentication.k8s.io` TokenReview (`--authentication-token-
 * webhook-version`, v1beta1 by default as kube's) over HTTPS; its `status` decides. Outcomes
 * are cached for `--authentication-token-webhook-cache-ttl` (successes and failures alike, as
 * kube-apiserver does), keyed by a hash of the token.
 */
import { httpsJson } from './https-json.js';
import { TokenCache, tokenCacheKey } from './token-cache.js';
import type { TokenAuthentication, TokenAuthenticator } from './token-authenticator.js';
import { userInfo } from './user.js';
import type { WebhookTarget } from './webhook-config.js';

/** Options of {@link WebhookTokenAuthenticator}. */
export interface WebhookTokenOptions {
  readonly target: WebhookTarget;
  /** `v1` or `v1beta1`. */
  readonly version: 'v1' | 'v1beta1';
  readonly cacheTtlMs: number;
  readonly timeoutMs?: number;
}

interface ReviewStatus {
  readonly authenticated?: boolean;
  readonly user?: {
    readonly username?: string;
    readonly uid?: string;
    readonly groups?: readonly string[];
    readonly extra?: Readonly<Record<string, readonly string[]>>;
  };
  readonly error?: string;
}

/** See the module comment. */
export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly #o: WebhookTokenOptions;
  readonly #cache: TokenCache;
  /** Remote calls made (tests check the cache). */
  calls = 0;

  constructor(options: WebhookTokenOptions) {
    this.#o = options;
    this.#cache = new TokenCache({ successTtlMs: options.cacheTtlMs, failureTtlMs: options.cacheTtlMs });
  }

  async authenticateToken(
    token: string,
    audiences: readonly string[],
  ): Promise<TokenAuthentication | undefined> {
    const key = tokenCacheKey(token, audiences);
    const hit = this.#cache.get(key);
    if (hit !== undefined) return hit.result;
    const result = await this.#review(token, audiences);
    this.#cache.set(key, result);
    return result;
  }

  async #review(token: string, audiences: readonly string[]): Promise<TokenAuthentication | undefined> {
    const t = this.#o.target;
    this.calls++;
    const res = await httpsJson(t.server, {
      ...t,
      method: 'POST',
      body: {
        apiVersion: `authentication.k8s.io/${this.#o.version}`,
        kind: 'TokenReview',
        metadata: { creationTimestamp: null },
        spec: { token, ...(audiences.length > 0 ? { audiences } : {}) },
        status: { user: {} },
      },
      ...(t.token === undefined ? {} : { headers: { authorization: `Bearer ${t.token}` } }),
      timeoutMs: this.#o.timeoutMs ?? 10_000,
    });
    if (res.status < 200 || res.status > 299) throw new Error(`token webhook answered ${res.status}`);
    const status = (res.body as { status?: ReviewStatus } | undefined)?.status ?? {};
    if (status.authenticated !== true) {
      if (typeof status.error === 'string' && status.error !== '')
        throw new Error(`token webhook: ${status.error}`);
      return undefined;
    }
    const u = status.user ?? {};
    if (typeof u.username !== 'string' || u.username === '')
      throw new Error('token webhook: authenticated without a username');
    return {
      user: userInfo({
        name: u.username,
        uid: typeof u.uid === 'string' ? u.uid : '',
        groups: Array.isArray(u.groups) ? u.groups.filter((g) => typeof g === 'string') : [],
        ...(u.extra !== undefined && typeof u.extra === 'object' ? { extra: u.extra } : {}),
      }),
      audiences: [],
    };
  }
}
