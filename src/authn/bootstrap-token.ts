/**
 * Bootstrap tokens (`--enable-bootstrap-token-auth`): `<id>.<secret>` tokens backed by Secrets
 * of type `bootstrap.kubernetes.io/token` named `bootstrap-token-<id>` in `kube-system`, as
 * kube's bootstrap authenticator reads them: the secret must match, not be expired, allow
 * authentication (`usage-bootstrap-authentication: "true"`) and not be being deleted. The user
 * is `system:bootstrap:<id>` in `system:bootstrappers` plus the Secret's `auth-extra-groups`.
 *
 * A token of another form is not this authenticator's (the chain asks the next one). The
 * Secret is read from the store on a cache miss of the token chain only (outcomes are cached
 * for seconds), so a request does not pay a storage round trip.
 */
import { timingSafeEqual } from 'node:crypto';
import type { TokenAuthentication, TokenAuthenticator } from './token-authenticator.js';
import { userInfo } from './user.js';

/** Kube's bootstrap token form. */
export const BOOTSTRAP_TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
/** The Secret type. */
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
/** Where the Secrets live. */
export const BOOTSTRAP_NAMESPACE = 'kube-system';
/** Secret name prefix. */
export const BOOTSTRAP_SECRET_PREFIX = 'bootstrap-token-';
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;

/** The Secret fields this module reads. */
export interface SecretLike {
  readonly type?: string;
  readonly metadata?: { readonly deletionTimestamp?: string | null; readonly name?: string };
  readonly data?: Readonly<Record<string, string>>;
}

/** Reads `kube-system/<name>` (undefined when absent). */
export type SecretReader = (name: string) => Promise<SecretLike | undefined>;

/** A data value of a Secret, decoded; undefined when absent. */
export function secretValue(secret: SecretLike, key: string): string | undefined {
  const v = secret.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

/** True when the Secret's `expiration` lies before `now` (an unparsable one counts as expired). */
export function bootstrapSecretExpired(secret: SecretLike, now: number): boolean {
  const exp = secretValue(secret, 'expiration');
  if (exp === undefined || exp === '') return false;
  const t = Date.parse(exp);
  return Number.isNaN(t) || t <= now;
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** See the module comment. */
export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  readonly #read: SecretReader;
  readonly #now: () => number;

  constructor(read: SecretReader, now: () => number = Date.now) {
    this.#read = read;
    this.#now = now;
  }

  async authenticateToken(token: string): Promise<TokenAuthentication | undefined> {
    const m = BOOTSTRAP_TOKEN.exec(token);
    if (m === null) return undefined;
    const id = m[1] as string;
    const tokenSecret = m[2] as string;
    const secret = await this.#read(`${BOOTSTRAP_SECRET_PREFIX}${id}`);
    if (secret === undefined) return undefined;
    if (secret.metadata?.deletionTimestamp != null) return undefined;
    if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE) return undefined;
    const storedSecret = secretValue(secret, 'token-secret');
    if (storedSecret === undefined || !sameString(storedSecret, tokenSecret)) return undefined;
    if (secretValue(secret, 'token-id') !== id) return undefined;
    if (bootstrapSecretExpired(secret, this.#now())) return undefined;
    if (secretValue(secret, 'usage-bootstrap-authentication') !== 'true') return undefined;
    const groups = ['system:bootstrappers'];
    const extra = secretValue(secret, 'auth-extra-groups');
    if (extra !== undefined && extra !== '') {
      for (const g of extra.split(',').map((s) => s.trim())) {
        if (!EXTRA_GROUP.test(g)) throw new Error(`bootstrap token ${id}: invalid auth-extra-groups entry`);
        if (!groups.includes(g)) groups.push(g);
      }
    }
    return { user: userInfo({ name: `system:bootstrap:${id}`, groups }), audiences: [] };
  }
}
