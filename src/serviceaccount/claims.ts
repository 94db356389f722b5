/**
 * The claims of service-account tokens, in kube-apiserver's layout.
 *
 * Legacy (Secret-based) tokens, issued by the token controller into
 * `kubernetes.io/service-account-token` Secrets, never expire:
 *
 * ```json
 * { "iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:<ns>:<name>",
 *   "kubernetes.io/serviceaccount/namespace": "<ns>",
 *   "kubernetes.io/serviceaccount/secret.name": "<secret>",
 *   "kubernetes.io/serviceaccount/service-account.name": "<name>",
 *   "kubernetes.io/serviceaccount/service-account.uid": "<uid>" }
 * ```
 *
 * Bound tokens (TokenRequest, projected volumes) carry `aud`, `exp`, `iat`, `nbf`, `jti`, the
 * issuer (`--service-account-issuer`, the first), `sub`, and a `kubernetes.io` object naming the
 * namespace, the service account and at most one bound object (pod, with its node when known;
 * secret; node), plus `warnafter` for tokens whose expiry was extended.
 */

/** The issuer of legacy tokens (kube's `LegacyIssuer`). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

/** The user name of a service account (kube's `MakeUsername`). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** A name and uid in the `kubernetes.io` claim. */
export interface ObjectRefClaim {
  readonly name: string;
  readonly uid: string;
}

/** The `kubernetes.io` claim of bound tokens. */
export interface KubernetesClaim {
  readonly namespace: string;
  readonly serviceaccount: ObjectRefClaim;
  readonly pod?: ObjectRefClaim;
  readonly secret?: ObjectRefClaim;
  readonly node?: ObjectRefClaim;
  /** Seconds since the epoch after which a (extended) token should be refreshed. */
  readonly warnafter?: number;
}

/** Legacy claim names. */
export const LEGACY_CLAIMS = {
  namespace: 'kubernetes.io/serviceaccount/namespace',
  secretName: 'kubernetes.io/serviceaccount/secret.name',
  serviceAccountName: 'kubernetes.io/serviceaccount/service-account.name',
  serviceAccountUid: 'kubernetes.io/serviceaccount/service-account.uid',
} as const;

/** The payload of a legacy token for `secretName` of the account. */
export function legacyClaims(
  namespace: string,
  name: string,
  uid: string,
  secretName: string,
): Record<string, unknown> {
  return {
    iss: LEGACY_ISSUER,
    sub: serviceAccountUsername(namespace, name),
    [LEGACY_CLAIMS.namespace]: namespace,
    [LEGACY_CLAIMS.secretName]: secretName,
    [LEGACY_CLAIMS.serviceAccountName]: name,
    [LEGACY_CLAIMS.serviceAccountUid]: uid,
  };
}

/** What a bound token is made of. */
export interface BoundTokenRequest {
  readonly namespace: string;
  readonly serviceAccount: ObjectRefClaim;
  readonly audiences: readonly string[];
  /** Lifetime in seconds from `now`. */
  readonly expirationSeconds: number;
  /** Seconds after `now` for `warnafter` (0: none). */
  readonly warnAfterSeconds: number;
  readonly pod?: ObjectRefClaim;
  readonly secret?: ObjectRefClaim;
  readonly node?: ObjectRefClaim;
  readonly jti: string;
  readonly now: Date;
}

/** The payload of a bound token, without `iss` (the issuer adds it). */
export function boundClaims(req: BoundTokenRequest): Record<string, unknown> {
  const iat = Math.floor(req.now.getTime() / 1000);
  const k8s: KubernetesClaim = {
    namespace: req.namespace,
    serviceaccount: req.serviceAccount,
    ...(req.pod === undefined ? {} : { pod: req.pod }),
    ...(req.secret === undefined ? {} : { secret: req.secret }),
    ...(req.node === undefined ? {} : { node: req.node }),
    ...(req.warnAfterSeconds > 0 ? { warnafter: iat + req.warnAfterSeconds } : {}),
  };
  return {
    aud: [...req.audiences],
    exp: iat + req.expirationSeconds,
    iat,
    jti: req.jti,
    'kubernetes.io': k8s,
    nbf: iat,
    sub: serviceAccountUsername(req.namespace, req.serviceAccount.name),
  };
}
