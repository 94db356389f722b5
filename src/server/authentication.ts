/**
 * The minimal authentication step of this version: a verified TLS client certificate names the
 * user (subject CN) and groups (subject O values), every other request is anonymous
 * (`system:anonymous` in `system:unauthenticated`) when `--anonymous-auth` allows it, else 401.
 * Token, proxy and webhook authenticators (issue 7) slot in before the anonymous fallback.
 *
 * Like kube-apiserver's union authenticator with fail-on-error: a client certificate that was
 * presented but does not verify against the trusted CAs is a 401, not an anonymous request; a
 * verified one without a common name authenticates nobody (the request may still be anonymous).
 *
 * The identity of a TLS connection is computed once and cached per connection (HTTP/2 carries
 * many requests on one), in a WeakMap so it dies with the connection.
 */
import type { TLSSocket } from 'node:tls';
import type { FastifyRequest } from 'fastify';
import type { TokenAuthenticator } from '../authn/token-authenticator.js';
import { ApiError } from '../http/errors.js';

/** The authenticated identity of a request (kube's `user.Info`). */
export interface UserInfo {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook; defined in every later hook and handler. */
    user: UserInfo;
  }
}

/** The anonymous user (kube's `system:anonymous`). */
export const ANONYMOUS: UserInfo = Object.freeze({
  name: 'system:anonymous',
  uid: '',
  groups: Object.freeze(['system:unauthenticated']),
  extra: Object.freeze({}),
});

/** Outcome of looking at a connection's client certificate. */
type CertIdentity =
  | { readonly kind: 'none' }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'user'; readonly user: UserInfo };

const NONE: CertIdentity = Object.freeze({ kind: 'none' });
const INVALID: CertIdentity = Object.freeze({ kind: 'invalid' });

function values(v: string | string[] | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : [v];
}

/** The user a verified certificate subject names; undefined without a CN. */
export function userFromSubject(subject: object): UserInfo | undefined {
  const fields = subject as Readonly<Record<string, string | string[] | undefined>>;
  const name = values(fields['CN'])[0];
  if (name === undefined || name === '') return undefined;
  const groups = [...values(fields['O']), 'system:authenticated'];
  return Object.freeze({ name, uid: '', groups: Object.freeze(groups), extra: Object.freeze({}) });
}

function tlsSocketOf(request: FastifyRequest): TLSSocket | undefined {
  // HTTP/2 (compat API): the session's socket proxy, one per connection; HTTP/1.1: the socket.
  const raw = request.raw as { stream?: { session?: { socket?: unknown } }; socket?: unknown };
  const socket = raw.stream?.session?.socket ?? raw.socket;
  if (socket === undefined || socket === null) return undefined;
  return typeof (socket as Partial<TLSSocket>).getPeerCertificate === 'function'
    ? (socket as TLSSocket)
    : undefined;
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), if any. */
function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const m = /^bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** Authenticates requests; one per server (its cache is per connection). */
export class Authenticator {
  readonly #anonymous: boolean;
  readonly #byConnection = new WeakMap<object, CertIdentity>();
  readonly #tokens: readonly TokenAuthenticator[];

  /**
   * @param options.tokenAuthenticators tried in order for `Authorization: Bearer` requests
   *   without a verified client certificate (a minimal stand-in for the authenticator chain).
   */
  constructor(options: {
    readonly anonymousAuth: boolean;
    readonly tokenAuthenticators?: readonly TokenAuthenticator[];
  }) {
    this.#anonymous = options.anonymousAuth;
    this.#tokens = options.tokenAuthenticators ?? [];
  }

  #certIdentity(socket: TLSSocket): CertIdentity {
    const cached = this.#byConnection.get(socket);
    if (cached !== undefined) return cached;
    let identity: CertIdentity = NONE;
    const cert = socket.getPeerCertificate();
    if (cert !== null && typeof cert === 'object' && Object.keys(cert).length > 0) {
      if (!socket.authorized) {
        identity = INVALID;
      } else {
        // A verified certificate without a common name names nobody (kube: not authenticated).
        const user = userFromSubject(cert.subject);
        identity = user === undefined ? NONE : Object.freeze({ kind: 'user', user });
      }
    }
    this.#byConnection.set(socket, identity);
    return identity;
  }

  /**
   * The request's user.
   * @throws ApiError Unauthorized (401) for an unverifiable client certificate, or for no
   *   credentials when anonymous requests are disabled.
   */
  authenticate(request: FastifyRequest): UserInfo | Promise<UserInfo> {
    const socket = tlsSocketOf(request);
    const identity = socket === undefined ? NONE : this.#certIdentity(socket);
    if (identity.kind === 'user') return identity.user;
    if (identity.kind === 'none' && this.#tokens.length > 0) {
      const token = bearerToken(request.headers.authorization);
      if (token !== undefined) return this.#fromToken(token);
    }
    if (identity.kind === 'none' && this.#anonymous) return ANONYMOUS;
    throw new ApiError('Unauthorized', 'Unauthorized');
  }

  /** The user of a bearer token: the first authenticator that recognises it, else 401. */
  async #fromToken(token: string): Promise<UserInfo> {
    for (const authenticator of this.#tokens) {
      let result;
      try {
        result = await authenticator.authenticateToken(token, []);
      } catch {
        throw new ApiError('Unauthorized', 'Unauthorized');
      }
      if (result === undefined) continue;
      const { user } = result;
      return user.groups.includes('system:authenticated')
        ? user
        : { ...user, groups: [...user.groups, 'system:authenticated'] };
    }
    throw new ApiError('Unauthorized', 'Unauthorized');
  }
}
