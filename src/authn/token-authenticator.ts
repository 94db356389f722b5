/**
 * The contract of a bearer-token authenticator (kube's `authenticator.Token`): the static token
 * file, bootstrap tokens, service-account JWTs, OIDC and the TokenReview webhook each implement
 * it, and the authenticator chain tries them in order.
 *
 * Kube's union semantics, which the chain keeps: the first authenticator that recognises the
 * token wins; an authenticator that recognises a token but finds it invalid throws; a token that
 * no authenticator accepts is a 401 ("invalid bearer token"), never an anonymous request.
 */
import type { UserInfo } from './user.js';

/** A recognised, valid token. */
export interface TokenAuthentication {
  readonly user: UserInfo;
  /**
   * The audiences the token is good for, intersected with the ones asked for; empty when the
   * authenticator is not audience-aware (kube then treats the token as good for the API server).
   */
  readonly audiences: readonly string[];
}

/** Authenticates bearer tokens. */
export interface TokenAuthenticator {
  /**
   * True when the authenticator checks audiences itself (service-account JWTs) and answers the
   * ones the token is good for. Otherwise (token file, bootstrap, OIDC, webhook) the chain does
   * kube's audience-agnostic wrapping: the token is good for the server's `--api-audiences`, so
   * a review asking only for other audiences does not recognise it.
   */
  readonly audienceAware?: boolean;
  /**
   * The token's identity, or undefined when this authenticator does not recognise the token (the
   * chain then asks the next one).
   * @param audiences the audiences the caller accepts: the server's `--api-audiences` for
   *   requests, a TokenReview's `spec.audiences` for reviews (empty: the server's own).
   * @throws Error when the token is this authenticator's but invalid (expired, bad signature,
   *   wrong audience, revoked); the message may reach logs, never the credential itself.
   */
  authenticateToken(token: string, audiences: readonly string[]): Promise<TokenAuthentication | undefined>;
}
