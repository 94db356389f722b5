/**
 * Where a request carries a bearer token: the `Authorization: Bearer <token>` header, or (for
 * browsers' websockets, which cannot set headers) a `base64url.bearer.authorization.k8s.io.<b64>`
 * entry of `Sec-WebSocket-Protocol`, as kube-apiserver accepts.
 *
 * Parsing is strict: the scheme is case-insensitive, exactly one space or tab run separates it
 * from a non-empty token without whitespace; anything else in an `Authorization` header is a
 * malformed credential (the caller answers 401, never anonymous).
 */
import type { IncomingHttpHeaders } from 'node:http';

/** What the request's headers say about a bearer token. */
export type BearerCredential =
  | { readonly kind: 'none' }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'token'; readonly token: string };

/** No credential (frozen, shared). */
export const NO_BEARER: BearerCredential = Object.freeze({ kind: 'none' });
const MALFORMED: BearerCredential = Object.freeze({ kind: 'malformed' });

/** `Bearer <token>`: visible ASCII only, no whitespace inside the token (RFC 6750 b64token is stricter still). */
const BEARER = /^[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+([\x21-\x7e]+)[ \t]*$/;

const WS_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** Parses one `Authorization` header value. */
export function parseAuthorization(value: string): BearerCredential {
  const m = BEARER.exec(value.trim());
  return m === null || m[1] === undefined ? MALFORMED : { kind: 'token', token: m[1] };
}

function websocketToken(protocols: string): BearerCredential {
  for (const raw of protocols.split(',')) {
    const p = raw.trim();
    if (!p.startsWith(WS_PROTOCOL_PREFIX)) continue;
    const encoded = p.slice(WS_PROTOCOL_PREFIX.length);
    if (encoded === '' || !/^[A-Za-z0-9_-]+$/.test(encoded)) return MALFORMED;
    const token = Buffer.from(encoded, 'base64url').toString('utf8');
    return /^[\x21-\x7e]+$/.test(token) ? { kind: 'token', token } : MALFORMED;
  }
  return NO_BEARER;
}

/** The bearer credential of a request's headers. */
export function bearerCredential(headers: IncomingHttpHeaders): BearerCredential {
  const auth = headers.authorization;
  if (auth !== undefined) return parseAuthorization(auth);
  const protocols = headers['sec-websocket-protocol'];
  if (protocols !== undefined && protocols.includes(WS_PROTOCOL_PREFIX)) return websocketToken(protocols);
  return NO_BEARER;
}
