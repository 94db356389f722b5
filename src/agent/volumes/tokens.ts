/**
 * kubelet's service-account token manager (pkg/kubelet/token): tokens for projected volumes,
 * asked of the API through TokenRequest (`serviceaccounts/<name>/token`), bound to the pod
 * (`boundObjectRef`), cached per service account, audiences, lifetime and pod.
 *
 * A cached token is refreshed once 80% of its life has passed (`expirationTimestamp` minus 20%
 * of `expirationSeconds`) or once it is 24 h old. A refresh that fails while the old token is
 * still valid keeps the old one. {@link TokenManager.refreshAt} says when a pod's tokens next need
 * a refresh, so the volume manager can wake the pod then.
 */
import type { BoundObjectReference, TokenRequest } from '../../api/types/authentication-v1.js';
import type { Pod, ServiceAccountTokenProjection } from '../../api/types/core-v1.js';
import { SERVICE_ACCOUNTS, type Client } from '../../client/index.js';
import { messageOf } from './errors.js';

const MAX_TTL_MS = 24 * 3600_000;
const DEFAULT_EXPIRATION_SECONDS = 3600;

interface Cached {
  readonly token: string;
  /** Epoch ms. */
  readonly expiresAt: number;
  readonly refreshAt: number;
  readonly podUid: string;
}

/** The TokenRequest client side: POST a TokenRequest, answer the server's reply. */
export type RequestToken = (
  namespace: string,
  serviceAccount: string,
  body: TokenRequest,
) => Promise<TokenRequest>;

/** A {@link RequestToken} over the API. */
export function apiTokenRequester(client: Client): RequestToken {
  return (namespace, name, body) =>
    client.resource(SERVICE_ACCOUNTS).createSubresource<TokenRequest>(name, 'token', body, { namespace });
}

/** When a token answered by the server must be refreshed (epoch ms). */
export function refreshTime(tr: TokenRequest, requestedSeconds: number): number {
  const exp = Date.parse(tr.status?.expirationTimestamp ?? '');
  const ttlSeconds = tr.spec?.expirationSeconds ?? requestedSeconds;
  const iat = exp - ttlSeconds * 1000;
  return Math.min(iat + MAX_TTL_MS, exp - Math.floor((ttlSeconds * 20) / 100) * 1000);
}

/** Service-account tokens of pods. */
export class TokenManager {
  readonly #request: RequestToken;
  readonly #now: () => number;
  readonly #cache = new Map<string, Cached>();

  constructor(request: RequestToken, now: () => number = Date.now) {
    this.#request = request;
    this.#now = now;
  }

  /** The token of `pod`'s service account for a projection; throws `failed to fetch token: ...`. */
  async token(pod: Pod, source: ServiceAccountTokenProjection): Promise<string> {
    const ns = pod.metadata.namespace ?? '';
    const sa = pod.spec?.serviceAccountName || 'default';
    const uid = pod.metadata.uid ?? '';
    const seconds = source.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
    const audiences = source.audience ? [source.audience] : [];
    const key = JSON.stringify([ns, sa, audiences, seconds, uid]);
    const now = this.#now();
    const cached = this.#cache.get(key);
    if (cached && now < cached.refreshAt) return cached.token;
    const boundObjectRef: BoundObjectReference = {
      apiVersion: 'v1',
      kind: 'Pod',
      name: pod.metadata.name ?? '',
      uid,
    };
    try {
      const tr = await this.#request(ns, sa, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        metadata: { name: sa, namespace: ns },
        spec: { audiences, expirationSeconds: seconds, boundObjectRef },
      });
      const token = tr.status?.token ?? '';
      const expiresAt = Date.parse(tr.status?.expirationTimestamp ?? '');
      if (!token || !Number.isFinite(expiresAt)) throw new Error('the server answered no token');
      this.#cache.set(key, { token, expiresAt, refreshAt: refreshTime(tr, seconds), podUid: uid });
      return token;
    } catch (err) {
      if (cached && now < cached.expiresAt) return cached.token;
      throw new Error(`failed to fetch token: ${messageOf(err)}`, { cause: err });
    }
  }

  /** The earliest refresh time (epoch ms) of a pod's cached tokens, if it has any. */
  refreshAt(podUid: string): number | undefined {
    let at: number | undefined;
    for (const c of this.#cache.values())
      if (c.podUid === podUid && (at === undefined || c.refreshAt < at)) at = c.refreshAt;
    return at;
  }

  /** Drops a pod's tokens (the pod is gone). */
  forget(podUid: string): void {
    for (const [k, c] of this.#cache) if (c.podUid === podUid) this.#cache.delete(k);
  }
}
