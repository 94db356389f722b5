/**
 * Signs service-account tokens (kube's `TokenGenerator`): a compact JWS with the signing key's
 * `alg` and `kid`, over claims from claims.ts. Bound tokens get `iss` = the first
 * `--service-account-issuer`; legacy tokens keep `kubernetes/serviceaccount`.
 */
import { loadJose } from '../authn/jose.js';
import type { SigningKey } from './keys.js';

/** Issues tokens with one key and issuer. */
export class TokenIssuer {
  readonly #key: SigningKey;
  readonly #issuer: string;

  constructor(key: SigningKey, issuer: string) {
    this.#key = key;
    this.#issuer = issuer;
  }

  /** The issuer bound tokens carry. */
  get issuer(): string {
    return this.#issuer;
  }

  /** A signed token for `claims`; `iss` is set to the issuer unless the claims carry one. */
  async sign(claims: Record<string, unknown>): Promise<string> {
    const payload = 'iss' in claims ? claims : { iss: this.#issuer, ...claims };
    const { SignJWT } = await loadJose();
    return new SignJWT(payload)
      .setProtectedHeader({ alg: this.#key.alg, kid: this.#key.kid })
      .sign(this.#key.privateKey);
  }
}
