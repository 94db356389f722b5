/**
 * The service-account token authenticator (kube's `JWTTokenAuthenticator` with the legacy and
 * bound validators), implementing the chain's {@link TokenAuthenticator} contract.
 *
 * A token is this authenticator's when it parses as a JWT whose `iss` is one of the accepted
 * issuers (every `--service-account-issuer`, and `kubernetes/serviceaccount` for legacy tokens);
 * otherwise it answers undefined and the chain asks the next authenticator. A token of ours is
 * then checked, each failure an error (401 at the chain):
 * 1. signature: `alg` must be one the verification keys use (so `none` and HMAC are refused);
 *    the key whose `kid` matches is tried first, then the others (kube tries every key);
 * 2. time: `exp` and `nbf` with a minute of leeway, as kube; bound tokens must expire;
 * 3. audience: the token's `aud` (none: the API audiences) must meet the audiences asked for;
 * 4. with `--service-account-lookup` (default): the service account, and the Secret, Pod or Node
 *    the token is bound to, must still exist with the uid the token names (a legacy token must
 *    also still be the Secret's `token`); objects deleted more than a minute ago count as gone.
 *
 * Steps 1–2 run once per token: verified claims are cached by the token's hash until its expiry
 * (bounded, see token-cache.ts); steps 3–4 run on every use, step 4 through {@link ObjectGetter}
 * (watch caches first), so a revocation takes effect at once.
 */
import type { JWTPayload } from 'jose';
import { loadJose } from '../authn/jose.js';
import { userInfo, type UserInfo } from '../authn/user.js';
import type { TokenAuthentication, TokenAuthenticator } from '../authn/token-authenticator.js';
import { isJsonObject, type KubeObject } from '../api/object.js';
import { LEGACY_CLAIMS, LEGACY_ISSUER, serviceAccountUsername, type KubernetesClaim } from './claims.js';
import type { VerificationKey } from './keys.js';
import type { ObjectGetter } from './lookup.js';
import { TokenCache } from './token-cache.js';

/** Extra keys kube-apiserver sets on service-account users. */
export const EXTRA = {
  credentialId: 'authentication.kubernetes.io/credential-id',
  podName: 'authentication.kubernetes.io/pod-name',
  podUid: 'authentication.kubernetes.io/pod-uid',
  nodeName: 'authentication.kubernetes.io/node-name',
  nodeUid: 'authentication.kubernetes.io/node-uid',
} as const;

/** The label kube's legacy-token clean-up puts on token Secrets it has invalidated. */
const INVALID_SINCE_LABEL = 'kubernetes.io/legacy-token-invalid-since';

/** Leeway on `exp` and `nbf`, and on deletions of bound objects (kube: one minute). */
const LEEWAY_SECONDS = 60;

/** How the authenticator is set up. */
export interface ServiceAccountAuthenticatorOptions {
  readonly keys: readonly VerificationKey[];
  /** `--service-account-issuer` values (legacy tokens' issuer is always accepted too). */
  readonly issuers: readonly string[];
  /** `--api-audiences`: the audiences a request's token must meet when none are asked for. */
  readonly apiAudiences: readonly string[];
  /** `--service-account-lookup`. */
  readonly lookup: boolean;
  readonly objects: ObjectGetter;
  readonly now?: () => Date;
  /** Verified tokens kept (default 4096). */
  readonly cacheSize?: number;
}

/** What a verified token says. */
interface Verified {
  readonly legacy: boolean;
  readonly payload: JWTPayload;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function refOf(v: unknown): { name: string; uid: string } | undefined {
  if (!isJsonObject(v)) return undefined;
  const name = str(v['name']);
  const uid = str(v['uid']);
  return name === undefined || uid === undefined ? undefined : { name, uid };
}

/** A token of ours that is not valid; the message names no credential. */
export class InvalidTokenError extends Error {
  readonly code = 'SERVICE_ACCOUNT_TOKEN_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTokenError';
  }
}

function fail(message: string): never {
  throw new InvalidTokenError(message);
}

/** Authenticates service-account JWTs (see the module comment). */
export class ServiceAccountAuthenticator implements TokenAuthenticator {
  /** It checks a token's `aud` against the audiences asked for (a TokenReview's own). */
  readonly audienceAware = true;
  readonly #keys: readonly VerificationKey[];
  readonly #algorithms: readonly string[];
  readonly #issuers: ReadonlySet<string>;
  readonly #apiAudiences: readonly string[];
  readonly #lookup: boolean;
  readonly #objects: ObjectGetter;
  readonly #now: () => Date;
  readonly #cache: TokenCache<Verified>;

  constructor(options: ServiceAccountAuthenticatorOptions) {
    this.#keys = options.keys;
    this.#algorithms = [...new Set(options.keys.map((k) => k.alg))];
    this.#issuers = new Set([...options.issuers, LEGACY_ISSUER]);
    this.#apiAudiences = options.apiAudiences;
    this.#lookup = options.lookup;
    this.#objects = options.objects;
    this.#now = options.now ?? ((): Date => new Date());
    this.#cache = new TokenCache({
      ...(options.cacheSize === undefined ? {} : { max: options.cacheSize }),
      now: () => this.#now().getTime(),
    });
  }

  async authenticateToken(
    token: string,
    audiences: readonly string[],
  ): Promise<TokenAuthentication | undefined> {
    const hash = TokenCache.keyOf(token);
    let verified = this.#cache.get(hash);
    if (verified === undefined) {
      let payload: JWTPayload;
      const { decodeJwt } = await loadJose();
      try {
        payload = decodeJwt(token);
      } catch {
        return undefined;
      }
      if (typeof payload.iss !== 'string' || !this.#issuers.has(payload.iss)) return undefined;
      verified = await this.#verify(token, payload);
      this.#cache.set(hash, verified, typeof payload.exp === 'number' ? payload.exp * 1000 : undefined);
    } else if (typeof verified.payload.exp === 'number') {
      // The cache holds entries until exp; leeway is only granted on first verification.
      if (verified.payload.exp + LEEWAY_SECONDS <= this.#now().getTime() / 1000)
        fail('service account token has expired');
    }
    const auds = this.#audiences(verified, audiences);
    const user = verified.legacy
      ? await this.#legacyUser(token, verified.payload)
      : await this.#boundUser(verified.payload);
    return { user, audiences: auds };
  }

  async #verify(token: string, payload: JWTPayload): Promise<Verified> {
    const { decodeProtectedHeader, jwtVerify } = await loadJose();
    let header;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      fail('malformed token header');
    }
    const alg = header.alg;
    if (alg === undefined || !this.#algorithms.includes(alg)) fail(`token signed with unsupported algorithm`);
    const byKid = this.#keys.filter((k) => k.kid === header.kid && k.alg === alg);
    const ordered = [...byKid, ...this.#keys.filter((k) => k.alg === alg && k.kid !== header.kid)];
    for (const key of ordered) {
      try {
        await jwtVerify(token, key.publicKey, {
          algorithms: [key.alg],
          clockTolerance: LEEWAY_SECONDS,
          currentDate: this.#now(),
        });
        const legacy = payload.iss === LEGACY_ISSUER;
        if (!legacy && typeof payload.exp !== 'number') fail('service account token has no expiration');
        return { legacy, payload };
      } catch (err) {
        if (err instanceof InvalidTokenError) throw err;
        const code = (err as { code?: string }).code;
        if (code === 'ERR_JWT_EXPIRED') fail('service account token has expired');
        if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') fail('service account token is not valid yet');
      }
    }
    fail('token signature could not be verified');
  }

  #audiences(verified: Verified, requested: readonly string[]): string[] {
    const aud = verified.payload.aud;
    const tokenAuds = aud === undefined ? [] : Array.isArray(aud) ? aud : [aud];
    const effective = tokenAuds.length > 0 ? tokenAuds : this.#apiAudiences;
    const wanted = requested.length > 0 ? requested : this.#apiAudiences;
    const both = effective.filter((a) => wanted.includes(a));
    if (both.length === 0 && this.#apiAudiences.length > 0) {
      fail(
        `token audiences ${JSON.stringify(tokenAuds)} is invalid for the target audiences ${JSON.stringify(wanted)}`,
      );
    }
    return both;
  }

  async #serviceAccount(namespace: string, name: string, uid: string): Promise<void> {
    const sa = await this.#objects.get('ServiceAccount', namespace, name);
    if (sa === undefined || this.#gone(sa)) fail(`service account ${namespace}/${name} has been deleted`);
    if (sa.metadata.uid !== uid)
      fail(`service account UID (${sa.metadata.uid ?? ''}) does not match claim (${uid})`);
  }

  /** Deleted for more than the leeway (kube keeps a minute's grace for bound objects). */
  #gone(obj: KubeObject): boolean {
    const dt = obj.metadata.deletionTimestamp;
    if (typeof dt !== 'string' || dt === '') return false;
    return Date.parse(dt) < this.#now().getTime() - LEEWAY_SECONDS * 1000;
  }

  async #legacyUser(token: string, p: JWTPayload): Promise<UserInfo> {
    const namespace = str(p[LEGACY_CLAIMS.namespace]) ?? fail('token has no namespace claim');
    const name = str(p[LEGACY_CLAIMS.serviceAccountName]) ?? fail('token has no service account name claim');
    const uid = str(p[LEGACY_CLAIMS.serviceAccountUid]) ?? fail('token has no service account uid claim');
    const secretName = str(p[LEGACY_CLAIMS.secretName]) ?? fail('token has no secret name claim');
    if (this.#lookup) {
      const secret = await this.#objects.get('Secret', namespace, secretName);
      if (secret === undefined || secret.metadata.deletionTimestamp)
        fail(`secret ${namespace}/${secretName} has been deleted`);
      // Kube's legacy token clean-up marks unused token Secrets invalid before deleting them.
      if ((secret.metadata.labels ?? {})[INVALID_SINCE_LABEL] !== undefined) {
        fail(`secret ${namespace}/${secretName} holds a token marked invalid`);
      }
      const data = isJsonObject(secret['data']) ? secret['data'] : {};
      const stored =
        typeof data['token'] === 'string' ? Buffer.from(data['token'], 'base64').toString('utf8') : '';
      if (stored !== token)
        fail(`token does not match the server's copy in secret ${namespace}/${secretName}`);
      await this.#serviceAccount(namespace, name, uid);
    }
    return userOf(namespace, name, uid, {});
  }

  async #boundUser(p: JWTPayload): Promise<UserInfo> {
    const k8s = p['kubernetes.io'];
    if (!isJsonObject(k8s)) fail('token has no kubernetes.io claim');
    const claim = k8s as unknown as KubernetesClaim;
    const namespace = str(claim.namespace) ?? fail('token has no namespace claim');
    const sa = refOf(claim.serviceaccount) ?? fail('token has no service account claim');
    const pod = refOf(claim.pod);
    const secret = refOf(claim.secret);
    const node = refOf(claim.node);
    if (this.#lookup) {
      await this.#serviceAccount(namespace, sa.name, sa.uid);
      if (secret !== undefined) await this.#bound('Secret', namespace, secret);
      if (pod !== undefined) await this.#bound('Pod', namespace, pod);
      else if (node !== undefined) await this.#bound('Node', undefined, node);
    }
    const extra: Record<string, readonly string[]> = {};
    if (typeof p.jti === 'string' && p.jti !== '') extra[EXTRA.credentialId] = [`JTI=${p.jti}`];
    if (pod !== undefined) {
      extra[EXTRA.podName] = [pod.name];
      extra[EXTRA.podUid] = [pod.uid];
    }
    if (node !== undefined) {
      extra[EXTRA.nodeName] = [node.name];
      extra[EXTRA.nodeUid] = [node.uid];
    }
    return userOf(namespace, sa.name, sa.uid, extra);
  }

  async #bound(
    kind: 'Secret' | 'Pod' | 'Node',
    namespace: string | undefined,
    ref: { name: string; uid: string },
  ): Promise<void> {
    const obj = await this.#objects.get(kind, namespace, ref.name);
    const what = `${kind.toLowerCase()} ${namespace === undefined ? '' : `${namespace}/`}${ref.name}`;
    if (obj === undefined || this.#gone(obj)) fail(`${what} has been deleted`);
    if (obj.metadata.uid !== ref.uid)
      fail(`${what} UID (${obj.metadata.uid ?? ''}) does not match claim (${ref.uid})`);
  }
}

function userOf(
  namespace: string,
  name: string,
  uid: string,
  extra: Readonly<Record<string, readonly string[]>>,
): UserInfo {
  return userInfo({
    name: serviceAccountUsername(namespace, name),
    uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
    extra,
  });
}
