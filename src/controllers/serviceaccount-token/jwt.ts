/**
 * Legacy service-account tokens, as kube's `serviceaccount.JWTTokenGenerator` with the legacy
 * claims: a compact JWS (RS256, or ES256/384/512 for ECDSA keys) whose header names the key by
 * kube's key id (base64url SHA-256 of the public key's DER SPKI), with the issuer
 * `kubernetes/serviceaccount` and no expiry.
 */
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

/** The issuer of legacy tokens (kube's `LegacyIssuer`). */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';

/** Signs legacy tokens with one private key. */
export interface LegacyTokenSigner {
  /** A token for the account `namespace/name` (uid) stored in Secret `secretName`. */
  token(namespace: string, name: string, uid: string, secretName: string): string;
}

function algorithm(key: KeyObject): { alg: string; hash: string; ec: boolean } {
  if (key.asymmetricKeyType === 'rsa') return { alg: 'RS256', hash: 'sha256', ec: false };
  if (key.asymmetricKeyType === 'ec') {
    switch (key.asymmetricKeyDetails?.namedCurve) {
      case 'prime256v1':
        return { alg: 'ES256', hash: 'sha256', ec: true };
      case 'secp384r1':
        return { alg: 'ES384', hash: 'sha384', ec: true };
      case 'secp521r1':
        return { alg: 'ES512', hash: 'sha512', ec: true };
    }
  }
  throw new Error(
    `unsupported service account key type ${key.asymmetricKeyType ?? 'unknown'} (RSA or ECDSA)`,
  );
}

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * A signer over the first private key in `pem` (`--service-account-private-key-file`).
 * @throws Error when `pem` holds no usable private key.
 */
export function legacyTokenSigner(pem: string): LegacyTokenSigner {
  const block = /-----BEGIN ([A-Z ]*PRIVATE KEY)-----[\s\S]*?-----END \1-----/.exec(pem);
  if (block === null) throw new Error('the service account key file holds no private key');
  const privateKey = createPrivateKey(block[0]);
  const { alg, hash, ec } = algorithm(privateKey);
  const kid = createHash('sha256')
    .update(createPublicKey(privateKey).export({ format: 'der', type: 'spki' }))
    .digest('base64url');
  const header = b64url(JSON.stringify({ alg, kid }));
  return {
    token(namespace, name, uid, secretName) {
      const payload = b64url(
        JSON.stringify({
          iss: LEGACY_ISSUER,
          'kubernetes.io/serviceaccount/namespace': namespace,
          'kubernetes.io/serviceaccount/secret.name': secretName,
          'kubernetes.io/serviceaccount/service-account.name': name,
          'kubernetes.io/serviceaccount/service-account.uid': uid,
          sub: `system:serviceaccount:${namespace}:${name}`,
        }),
      );
      const input = `${header}.${payload}`;
      const signature = sign(
        hash,
        Buffer.from(input),
        ec ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey,
      );
      return `${input}.${b64url(signature)}`;
    },
  };
}
