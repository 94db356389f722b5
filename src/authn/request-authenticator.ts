/**
 * The request authenticator: kube-apiserver's union of request authenticators, in kube's order:
 *
 * 1. the authenticating proxy (a client certificate from `--requestheader-client-ca-file`
 *    asserting `--requestheader-*` headers);
 * 2. client certificates from the cluster CA and `--client-ca-file` (CN is the user, O values
 *    the groups);
 * 3. bearer tokens (`Authorization: Bearer`, or the websocket protocol form) through the token
 *    chain: token file, service accounts, bootstrap tokens, OIDC, webhook;
 * 4. anonymous, when allowed and no credential was presented.
 *
 * Every user the methods name gains `system:authenticated` here, around the whole union, as kube's
 * `AuthenticatedGroupAdder` does (no method adds it itself); TokenReview answers go through the
 * same step ({@link RequestAuthenticator.authenticateToken}).
 *
 * The first method that recognises its credential wins. A credential that was presented but
 * not accepted by any method (an unverifiable certificate, a malformed `Authorization` header,
 * a token nobody accepts) is a 401, never an anonymous request.
 *
 * Cost: what a TLS connection's certificate says is worked out once per connection (HTTP/2
 * carries many requests on one) and kept in a WeakMap until the certificate's NotAfter: kube
 * verifies the chain at every request, so a certificate that expires on an open connection
 * stops authenticating there too. Certificate-only and cached-token requests are answered
 * synchronously, without a promise.
 */
import { createHash } from 'node:crypto';
import type { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../api/errors.js';
import { bearerCredential } from './bearer.js';
import type { CaBundle } from './ca-bundle.js';
import type { RequestHeaderIdentity } from './request-header.js';
import type { TokenChain } from './token-chain.js';
import type { TokenAuthentication } from './token-authenticator.js';
import { ANONYMOUS, userInfo, withAuthenticatedGroup, type UserInfo } from './user.js';

/** What a connection's client certificate means to each certificate method. */
interface ConnectionIdentity {
  /**
   * A certificate was presented that no certificate method accepts (unverified, or from a CA
   * that does not name users): a 401 unless a token succeeds.
   */
  readonly invalid: boolean;
  /** The user a client-CA certificate names (undefined: none). */
  readonly user: UserInfo | undefined;
  /** The certificate may assert proxy headers. */
  readonly proxy: boolean;
  /** CA generations it was computed under. */
  readonly generation: number;
  /** The certificate's NotAfter (ms since the epoch); after it the certificate is invalid. */
  readonly expiresAt: number;
}

const NO_CERT: ConnectionIdentity = Object.freeze({
  invalid: false,
  user: undefined,
  proxy: false,
  generation: -1,
  expiresAt: Infinity,
});

/** A certificate that expired while its connection stayed open. */
const EXPIRED: ConnectionIdentity = Object.freeze({
  invalid: true,
  user: undefined,
  proxy: false,
  generation: -1,
  expiresAt: -Infinity,
});

/** The authenticating proxy's configuration. */
export interface RequestHeaderConfig {
  readonly cas: CaBundle;
  /** `--requestheader-allowed-names`; empty: any certificate of `cas`. */
  readonly allowedNames: readonly string[];
  readonly identity: RequestHeaderIdentity;
}

/** Options of {@link RequestAuthenticator}. */
export interface RequestAuthenticatorOptions {
  /** `--anonymous-auth` after kube's adjustment (off with the AlwaysAllow authorizer). */
  readonly anonymous: boolean;
  /** CAs of client-certificate users (cluster CA and `--client-ca-file`). */
  readonly clientCas: CaBundle;
  readonly requestHeader?: RequestHeaderConfig;
  readonly tokens: TokenChain;
  /** Failures worth a log line (never with credentials). */
  readonly onTokenError?: (err: unknown) => void;
}

function values(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** The user a verified certificate subject names; undefined without a CN. */
export function userFromSubject(subject: object, certDer?: Uint8Array): UserInfo | undefined {
  const fields = subject as Readonly<Record<string, string | string[] | undefined>>;
  const name = values(fields['CN'])[0];
  if (name === undefined || name === '') return undefined;
  if (certDer === undefined) return userInfo({ name, groups: values(fields['O']) });
  // kube 1.33 names the credential: the SHA-256 of the certificate's DER.
  const id = `X509SHA256=${createHash('sha256').update(certDer).digest('hex')}`;
  return userInfo({ name, groups: values(fields['O']), extra: { [CREDENTIAL_ID]: [id] } });
}

/** The user extra kube sets to identify the credential a request authenticated with. */
export const CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

function tlsSocketOf(request: FastifyRequest): TLSSocket | undefined {
  // HTTP/2 (compat API): the session's socket proxy, one per connection; HTTP/1.1: the socket.
  const raw = request.raw as { stream?: { session?: { socket?: unknown } }; socket?: unknown };
  const socket = raw.stream?.session?.socket ?? raw.socket;
  if (socket === undefined || socket === null) return undefined;
  return typeof (socket as Partial<TLSSocket>).getPeerCertificate === 'function'
    ? (socket as TLSSocket)
    : undefined;
}

/** The peer's chain, leaf first, as X509Certificate objects. */
function peerChain(socket: TLSSocket): X509Certificate[] {
  const chain: X509Certificate[] = [];
  const leaf = socket.getPeerX509Certificate();
  if (leaf === undefined) return chain;
  chain.push(leaf);
  let issuer = leaf.issuerCertificate;
  while (
    issuer !== undefined &&
    chain.length < 10 &&
    !chain.some((c) => c.fingerprint256 === issuer?.fingerprint256)
  ) {
    chain.push(issuer);
    issuer = issuer.issuerCertificate;
  }
  return chain;
}

function unauthorized(): ApiError {
  return new ApiError('Unauthorized', 'Unauthorized');
}

/** See the module comment. One per server. */
export class RequestAuthenticator {
  readonly #options: RequestAuthenticatorOptions;
  readonly #byConnection = new WeakMap<object, ConnectionIdentity>();
  /** Users with the group added, by the user a method named (cached tokens, connections). */
  readonly #grouped = new WeakMap<UserInfo, UserInfo>();

  constructor(options: RequestAuthenticatorOptions) {
    this.#options = options;
  }

  /** Whether requests without credentials are anonymous (else 401). */
  get anonymous(): boolean {
    return this.#options.anonymous;
  }

  /** The token chain (TokenReview uses it). */
  get tokens(): TokenChain {
    return this.#options.tokens;
  }

  #generation(): number {
    return this.#options.clientCas.generation * 65536 + (this.#options.requestHeader?.cas.generation ?? 0);
  }

  #connectionIdentity(socket: TLSSocket): ConnectionIdentity {
    const generation = this.#generation();
    const cached = this.#byConnection.get(socket);
    if (cached !== undefined && (cached === NO_CERT || cached.generation === generation))
      return cached.expiresAt > Date.now() ? cached : EXPIRED;
    let identity: ConnectionIdentity = NO_CERT;
    const cert = socket.getPeerCertificate();
    if (cert !== null && typeof cert === 'object' && Object.keys(cert).length > 0) {
      let user: UserInfo | undefined;
      let proxy = false;
      let invalid = true;
      // Only a verified certificate can authenticate, so only its NotAfter matters.
      let expiresAt = Infinity;
      if (socket.authorized) {
        const chain = peerChain(socket);
        if (chain[0] !== undefined) expiresAt = Date.parse(chain[0].validTo);
        if (this.#options.clientCas.anchors(chain)) {
          // A user CA's certificate without a common name names nobody (kube: not authenticated,
          // no error: the request may still be anonymous).
          invalid = false;
          user = userFromSubject(cert.subject, cert.raw);
        }
        const rh = this.#options.requestHeader;
        if (rh !== undefined && rh.cas.anchors(chain)) {
          const cn = values(
            (cert.subject as unknown as Record<string, string | string[] | undefined>)['CN'],
          )[0];
          proxy = rh.allowedNames.length === 0 || (cn !== undefined && rh.allowedNames.includes(cn));
        }
      }
      identity = Object.freeze({ invalid, user, proxy, generation, expiresAt });
    }
    this.#byConnection.set(socket, identity);
    return identity;
  }

  /**
   * The request's user: synchronously when the connection's certificate, a proxy's headers or a
   * cached token decide it, else a promise.
   * @throws ApiError Unauthorized (401) for a credential no method accepts, or for no
   *   credential when anonymous requests are off (a returned promise rejects with it).
   */
  authenticate(request: FastifyRequest): UserInfo | Promise<UserInfo> {
    const named = this.#identify(request);
    return named instanceof Promise ? named.then((u) => this.#group(u)) : this.#group(named);
  }

  /**
   * A bearer token's authentication as a request with it would get it (the group added), for
   * TokenReview. @param audiences the review's (empty: the server's own)
   * @throws TokenRejected when no token authenticator accepts the token
   */
  async authenticateToken(token: string, audiences: readonly string[]): Promise<TokenAuthentication> {
    const r = await this.#options.tokens.authenticate(token, audiences);
    return { user: this.#group(r.user), audiences: r.audiences };
  }

  /** The one place `system:authenticated` is added (see the module comment). */
  #group(user: UserInfo): UserInfo {
    let grouped = this.#grouped.get(user);
    if (grouped === undefined) {
      grouped = withAuthenticatedGroup(user);
      this.#grouped.set(user, grouped);
    }
    return grouped;
  }

  /** The user the first method that recognises the request's credential names. */
  #identify(request: FastifyRequest): UserInfo | Promise<UserInfo> {
    const socket = tlsSocketOf(request);
    const conn = socket === undefined ? NO_CERT : this.#connectionIdentity(socket);
    if (conn.proxy) {
      const user = this.#options.requestHeader?.identity.identify(request.raw.rawHeaders);
      if (user !== undefined) return user;
    }
    if (conn.user !== undefined) return conn.user;
    const bearer = bearerCredential(request.headers);
    if (bearer.kind === 'malformed') throw unauthorized();
    if (bearer.kind === 'none') {
      if (conn.invalid || !this.#options.anonymous) throw unauthorized();
      return ANONYMOUS;
    }
    const tokens = this.#options.tokens;
    if (!tokens.enabled) throw unauthorized();
    const hit = tokens.cached(bearer.token);
    if (hit !== undefined) {
      if (hit.result === undefined) throw unauthorized();
      return hit.result.user;
    }
    return tokens.authenticate(bearer.token).then(
      (r) => r.user,
      (err: unknown) => {
        this.#options.onTokenError?.(err);
        throw unauthorized();
      },
    );
  }
}
