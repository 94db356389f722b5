/**
 * Detached JWS signatures (RFC 7515 appendix F) as kube's `k8s.io/cluster-bootstrap/token/jws`
 * v0.33 computes them for `cluster-info`: HS256 keyed with the token secret's bytes as they are,
 * a protected header of exactly `{"alg":"HS256","kid":"<token id>"}`, and the compact form with
 * its payload part left empty (`<header>..<signature>`). kubeadm's join recomputes the signature
 * and compares the strings, so every byte of the header matters.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The detached signature of `content` under the token `tokenId`.`tokenSecret`. */
export function computeDetachedSignature(content: string, tokenId: string, tokenSecret: string): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: tokenId })).toString('base64url');
  const payload = Buffer.from(content).toString('base64url');
  const mac = createHmac('sha256', Buffer.from(tokenSecret))
    .update(`${header}.${payload}`)
    .digest('base64url');
  return `${header}..${mac}`;
}

/** Whether `detached` is the signature of `content` under the token (kubeadm's check). */
export function detachedSignatureIsValid(
  detached: string,
  content: string,
  tokenId: string,
  tokenSecret: string,
): boolean {
  const want = Buffer.from(computeDetachedSignature(content, tokenId, tokenSecret));
  const got = Buffer.from(detached);
  return got.length === want.length && timingSafeEqual(got, want);
}
