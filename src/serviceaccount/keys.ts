/**
 * The keys of service-account tokens: the private key that signs (`--service-account-signing-key-file`)
 * and the public keys that verify (`--service-account-key-file`, repeatable, each file holding any
 * number of PEM private keys, public keys or certificates). When neither flag is given, a key kept
 * in `--cert-dir` (`sa.key`, generated on first start, as kubeadm names it) signs and verifies, so
 * tokens survive restarts.
 *
 * Key ids are kube-apiserver's: base64url (no padding) of the SHA-256 of the public key's PKIX DER,
 * so a token signed by kube-apiserver with the same key carries the same `kid`. Algorithms follow
 * the key: RSA → RS256, ECDSA P-256/P-384/P-521 → ES256/ES384/ES512.
 */
import { createHash, createPrivateKey, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair, privateKeyPem } from '../pki/certificate.js';

/** A key that verifies tokens. */
export interface VerificationKey {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly publicKey: KeyObject;
}

/** The key that signs tokens. */
export interface SigningKey extends VerificationKey {
  readonly privateKey: KeyObject;
}

/** The JOSE algorithms service-account keys use. */
export type SigningAlgorithm = 'RS256' | 'ES256' | 'ES384' | 'ES512';

/** A key file that cannot be used (unreadable, no key, unsupported type); code is stable. */
export class ServiceAccountKeyError extends Error {
  readonly code = 'SERVICE_ACCOUNT_KEY_INVALID';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServiceAccountKeyError';
  }
}

/** Kube's key id of a public key. */
export function keyIdOf(publicKey: KeyObject): string {
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return createHash('sha256').update(der).digest('base64url');
}

/** The JOSE algorithm of a key. */
export function algorithmOf(key: KeyObject): SigningAlgorithm {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  if (key.asymmetricKeyType === 'ec') {
    switch (key.asymmetricKeyDetails?.namedCurve) {
      case 'prime256v1':
        return 'ES256';
      case 'secp384r1':
        return 'ES384';
      case 'secp521r1':
        return 'ES512';
    }
  }
  throw new ServiceAccountKeyError(
    `unsupported service account key type ${key.asymmetricKeyType ?? 'unknown'} (RSA or ECDSA P-256/P-384/P-521)`,
  );
}

function verificationKey(publicKey: KeyObject): VerificationKey {
  return Object.freeze({ kid: keyIdOf(publicKey), alg: algorithmOf(publicKey), publicKey });
}

/** The signing key of a private key. */
export function signingKeyOf(privateKey: KeyObject): SigningKey {
  const publicKey = createPublicKey(privateKey);
  return Object.freeze({ ...verificationKey(publicKey), privateKey });
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/** The public keys in PEM text (private keys, public keys, certificates; other blocks ignored). */
export function publicKeysOfPem(pem: string, where: string): VerificationKey[] {
  const keys: VerificationKey[] = [];
  for (const match of pem.matchAll(PEM_BLOCK)) {
    const label = match[1] ?? '';
    const block = match[0];
    try {
      if (label === 'CERTIFICATE') keys.push(verificationKey(new X509Certificate(block).publicKey));
      else if (label.endsWith('PRIVATE KEY'))
        keys.push(verificationKey(createPublicKey(createPrivateKey(block))));
      else if (label.endsWith('PUBLIC KEY')) keys.push(verificationKey(createPublicKey(block)));
    } catch (err) {
      if (err instanceof ServiceAccountKeyError) throw err;
      throw new ServiceAccountKeyError(`${where}: unreadable ${label} block`, { cause: err });
    }
  }
  if (keys.length === 0) throw new ServiceAccountKeyError(`${where}: no public or private key found`);
  return keys;
}

async function readKeyFile(path: string, flag: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new ServiceAccountKeyError(
      `${flag} ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      { cause: err },
    );
  }
}

/** What the key flags say. */
export interface KeyOptions {
  /** `--service-account-key-file` values. */
  readonly keyFiles: readonly string[];
  /** `--service-account-signing-key-file` ('' for none). */
  readonly signingKeyFile: string;
  /** `--cert-dir`: where the default key lives. */
  readonly certDir: string;
}

/** The token keys of a server. */
export interface ServiceAccountKeys {
  /** Undefined when only verification keys were given (the server then issues no tokens). */
  readonly signing: SigningKey | undefined;
  /** Every key that verifies, the signing key's public half included; unique by kid. */
  readonly verifying: readonly VerificationKey[];
}

/** The default key in the cert dir: read, or generated (ECDSA P-256) and saved with mode 0600. */
async function defaultKey(certDir: string): Promise<KeyObject> {
  const path = join(certDir, 'sa.key');
  try {
    return createPrivateKey(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new ServiceAccountKeyError(`${path}: not a usable private key`, { cause: err });
    }
  }
  const { privateKey } = await generateKeyPair();
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, privateKeyPem(privateKey), { mode: 0o600 });
  await rename(tmp, path);
  return privateKey;
}

/**
 * Loads the keys the flags name (see the module comment).
 * @throws ServiceAccountKeyError for unreadable files, files without keys, unsupported key types.
 */
export async function loadServiceAccountKeys(options: KeyOptions): Promise<ServiceAccountKeys> {
  let signing: SigningKey | undefined;
  const verifying: VerificationKey[] = [];
  if (options.signingKeyFile !== '') {
    const pem = await readKeyFile(options.signingKeyFile, '--service-account-signing-key-file');
    try {
      signing = signingKeyOf(createPrivateKey(pem));
    } catch (err) {
      if (err instanceof ServiceAccountKeyError) throw err;
      throw new ServiceAccountKeyError(
        `--service-account-signing-key-file ${options.signingKeyFile}: not a PEM private key`,
        { cause: err },
      );
    }
  } else if (options.keyFiles.length === 0) {
    signing = signingKeyOf(await defaultKey(options.certDir));
  }
  if (signing !== undefined) verifying.push(signing);
  const pems: string[] = [];
  for (const file of options.keyFiles) {
    const pem = await readKeyFile(file, '--service-account-key-file');
    pems.push(pem);
    verifying.push(...publicKeysOfPem(pem, `--service-account-key-file ${file}`));
  }
  // A key file that holds a private key signs too when no signing key file was given (kube's
  // legacy token controller signs with --service-account-private-key-file; envtest passes one
  // file to both flags).
  if (signing === undefined) {
    for (const pem of pems) {
      const priv = [...pem.matchAll(PEM_BLOCK)].find((m) => (m[1] ?? '').endsWith('PRIVATE KEY'));
      if (priv !== undefined) {
        signing = signingKeyOf(createPrivateKey(priv[0]));
        break;
      }
    }
  }
  const unique = new Map<string, VerificationKey>();
  for (const k of verifying) if (!unique.has(k.kid)) unique.set(k.kid, k);
  return { signing, verifying: [...unique.values()] };
}
