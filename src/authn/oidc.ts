/**
 * OpenID Connect ID tokens (`--oidc-*`), as kube-apiserver's legacy OIDC flags configure them:
 * the issuer's discovery document and JWKS are fetched over HTTPS (trusting `--oidc-ca-file`
 * when given), tokens must be signed with one of `--oidc-signing-algs`, be issued by exactly
 * `--oidc-issuer-url` for `--oidc-client-id`, be unexpired, and carry every
 * `--oidc-required-claim`. Keys rotate: a token signed with an unknown key makes the
 * authenticator refetch the JWKS (at most once per `refetchIntervalMs`).
 *
 * A token that is not a JWT from this issuer is not this authenticator's (the chain asks the
 * next one). Username: the `--oidc-username-claim` (default `sub`), prefixed with
 * `--oidc-username-prefix`; without a prefix, claims other than `email` get `<issuer>#`, and
 * `-` means no prefix. Groups: `--oidc-groups-claim` (string or list), each prefixed with
 * `--oidc-groups-prefix`. With the `email` claim, `email_verified`, when present, must be true.
 */
import type { createLocalJWKSet, JSONWebKeySet } from 'jose';
import { httpsJson } from './https-json.js';
import { loadJose } from './jose.js';
import type { TokenAuthentication, TokenAuthenticator } from './token-authenticator.js';
import { userInfo } from './user.js';

/** `--oidc-*` settings. */
export interface OidcOptions {
  readonly issuerUrl: string;
  readonly clientId: string;
  readonly usernameClaim: string;
  readonly usernamePrefix: string;
  readonly groupsClaim: string;
  readonly groupsPrefix: string;
  readonly requiredClaims: Readonly<Record<string, string>>;
  readonly signingAlgs: readonly string[];
  /** PEM of `--oidc-ca-file` (undefined: the system roots). */
  readonly caPem?: string;
  /** Least time between two JWKS refetches caused by unknown keys (default 10 s). */
  readonly refetchIntervalMs?: number;
  readonly now?: () => number;
}

/** JOSE asymmetric algorithms kube accepts in `--oidc-signing-algs`. */
export const OIDC_SIGNING_ALGS = [
  'RS256',
  'RS384',
  'RS512',
  'ES256',
  'ES384',
  'ES512',
  'PS256',
  'PS384',
  'PS512',
];

type KeyResolver = ReturnType<typeof createLocalJWKSet>;

/** See the module comment. */
export class OidcAuthenticator implements TokenAuthenticator {
  readonly #o: OidcOptions;
  readonly #prefix: string;
  #keys: { readonly resolver: KeyResolver; readonly kids: ReadonlySet<string> } | undefined;
  #jwksUri: string | undefined;
  #fetching: Promise<void> | undefined;
  #lastRefetch = -Infinity;

  constructor(options: OidcOptions) {
    this.#o = options;
    const p = options.usernamePrefix;
    this.#prefix =
      p === '-' ? '' : p !== '' ? p : options.usernameClaim === 'email' ? '' : `${options.issuerUrl}#`;
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  async #fetchKeys(): Promise<void> {
    const trust = this.#o.caPem === undefined ? {} : { ca: this.#o.caPem };
    if (this.#jwksUri === undefined) {
      const url = `${this.#o.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const res = await httpsJson(url, trust);
      const doc = res.body as { issuer?: unknown; jwks_uri?: unknown } | undefined;
      if (res.status !== 200 || typeof doc?.jwks_uri !== 'string') {
        throw new Error(`oidc: discovery at ${url} answered ${res.status} without a jwks_uri`);
      }
      if (doc.issuer !== this.#o.issuerUrl) {
        throw new Error(
          `oidc: issuer did not match the issuer returned by provider, expected "${this.#o.issuerUrl}" got "${String(doc.issuer)}"`,
        );
      }
      this.#jwksUri = doc.jwks_uri;
    }
    const res = await httpsJson(this.#jwksUri, trust);
    const jwks = res.body as JSONWebKeySet | undefined;
    if (res.status !== 200 || !Array.isArray(jwks?.keys))
      throw new Error(`oidc: JWKS fetch answered ${res.status}`);
    const kids = new Set(jwks.keys.flatMap((k) => (typeof k.kid === 'string' ? [k.kid] : [])));
    const { createLocalJWKSet } = await loadJose();
    this.#keys = { resolver: createLocalJWKSet(jwks), kids };
  }

  /** Fetches once at a time; callers share the flight. */
  #refresh(): Promise<void> {
    return (this.#fetching ??= this.#fetchKeys().finally(() => {
      this.#fetching = undefined;
    }));
  }

  async authenticateToken(token: string): Promise<TokenAuthentication | undefined> {
    if (token.split('.').length !== 3) return undefined;
    let claims: Record<string, unknown>;
    let kid: string | undefined;
    const { decodeJwt, decodeProtectedHeader, jwtVerify } = await loadJose();
    try {
      claims = decodeJwt(token);
      kid = decodeProtectedHeader(token).kid;
    } catch {
      return undefined;
    }
    if (claims['iss'] !== this.#o.issuerUrl) return undefined;
    if (this.#keys === undefined) await this.#refresh();
    if (kid !== undefined && this.#keys !== undefined && !this.#keys.kids.has(kid)) {
      const now = this.#now();
      if (now - this.#lastRefetch >= (this.#o.refetchIntervalMs ?? 10_000)) {
        this.#lastRefetch = now;
        await this.#refresh();
      }
    }
    const keys = this.#keys;
    if (keys === undefined) throw new Error('oidc: authenticator not initialized');
    const { payload } = await jwtVerify(token, keys.resolver, {
      issuer: this.#o.issuerUrl,
      audience: this.#o.clientId,
      algorithms: [...this.#o.signingAlgs],
      currentDate: new Date(this.#now()),
    });
    for (const [claim, want] of Object.entries(this.#o.requiredClaims)) {
      if (payload[claim] !== want)
        throw new Error(`oidc: required claim ${claim} is missing or has a different value`);
    }
    const rawName = payload[this.#o.usernameClaim];
    if (typeof rawName !== 'string' || rawName === '') {
      throw new Error(`oidc: claim ${this.#o.usernameClaim} is not a non-empty string`);
    }
    if (this.#o.usernameClaim === 'email') {
      const verified = payload['email_verified'];
      if (verified !== undefined && verified !== true) throw new Error('oidc: email not verified');
    }
    let groups: string[] = [];
    if (this.#o.groupsClaim !== '') {
      const g = payload[this.#o.groupsClaim];
      if (typeof g === 'string') groups = [g];
      else if (Array.isArray(g) && g.every((x) => typeof x === 'string')) groups = g;
      else if (g !== undefined)
        throw new Error(`oidc: claim ${this.#o.groupsClaim} is not a string or a list of strings`);
      groups = groups.map((x) => this.#o.groupsPrefix + x);
    }
    return { user: userInfo({ name: this.#prefix + rawName, groups }), audiences: [] };
  }
}
