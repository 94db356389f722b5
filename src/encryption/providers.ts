/**
 * Value transformers of encryption at rest, byte-compatible with kube-apiserver's so that a
 * store can move between the two: an encrypted value is `k8s:enc:<provider>:v1:<key name>:`
 * followed by
 * - aescbc: a 16-byte IV and AES-CBC ciphertext with PKCS#7 padding;
 * - aesgcm: a 12-byte nonce, then ciphertext and 16-byte tag, authenticated with the value's
 *   full storage key (with `--etcd-prefix`) as additional data, so a value moved to another key
 *   does not decrypt;
 * - secretbox: a 24-byte nonce, then XSalsa20-Poly1305 (NaCl secretbox) output.
 * identity stores the plain value (no prefix).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import nacl from 'tweetnacl';
import type { ProviderConfig, ProviderKey } from './config.js';

/** Encrypts and decrypts values with one key. */
export interface ValueTransformer {
  /** The stored prefix (`k8s:enc:aesgcm:v1:key1:`); '' for identity. */
  readonly prefix: string;
  seal(plain: Uint8Array, key: string): Uint8Array;
  /** @throws Error when the data does not decrypt (wrong key, tampered, truncated). */
  open(data: Uint8Array, key: string): Uint8Array;
}

const IDENTITY: ValueTransformer = {
  prefix: '',
  seal: (plain) => plain,
  open: (data) => data,
};

function aesName(bytes: number, mode: 'cbc' | 'gcm'): string {
  return `aes-${bytes * 8}-${mode}`;
}

function aescbc(key: ProviderKey): ValueTransformer {
  const algorithm = aesName(key.secret.length, 'cbc');
  return {
    prefix: `k8s:enc:aescbc:v1:${key.name}:`,
    seal(plain) {
      const iv = randomBytes(16);
      const c = createCipheriv(algorithm, key.secret, iv);
      return Buffer.concat([iv, c.update(plain), c.final()]);
    },
    open(data) {
      if (data.length < 32 || data.length % 16 !== 0) throw new Error('aescbc: data has the wrong length');
      const d = createDecipheriv(algorithm, key.secret, data.subarray(0, 16));
      return Buffer.concat([d.update(data.subarray(16)), d.final()]);
    },
  };
}

function aesgcm(key: ProviderKey): ValueTransformer {
  const algorithm = aesName(key.secret.length, 'gcm') as 'aes-256-gcm';
  return {
    prefix: `k8s:enc:aesgcm:v1:${key.name}:`,
    seal(plain, storageKey) {
      const nonce = randomBytes(12);
      const c = createCipheriv(algorithm, key.secret, nonce);
      c.setAAD(Buffer.from(storageKey, 'utf8'));
      const body = Buffer.concat([c.update(plain), c.final()]);
      return Buffer.concat([nonce, body, c.getAuthTag()]);
    },
    open(data, storageKey) {
      if (data.length < 12 + 16) throw new Error('aesgcm: data is too short');
      const d = createDecipheriv(algorithm, key.secret, data.subarray(0, 12));
      d.setAAD(Buffer.from(storageKey, 'utf8'));
      d.setAuthTag(data.subarray(data.length - 16));
      return Buffer.concat([d.update(data.subarray(12, data.length - 16)), d.final()]);
    },
  };
}

function secretbox(key: ProviderKey): ValueTransformer {
  const secret = new Uint8Array(key.secret);
  return {
    prefix: `k8s:enc:secretbox:v1:${key.name}:`,
    seal(plain) {
      const nonce = randomBytes(nacl.secretbox.nonceLength);
      return Buffer.concat([nonce, nacl.secretbox(new Uint8Array(plain), new Uint8Array(nonce), secret)]);
    },
    open(data) {
      if (data.length < nacl.secretbox.nonceLength + nacl.secretbox.overheadLength) {
        throw new Error('secretbox: data is too short');
      }
      const nonce = new Uint8Array(data.subarray(0, nacl.secretbox.nonceLength));
      const opened = nacl.secretbox.open(
        new Uint8Array(data.subarray(nacl.secretbox.nonceLength)),
        nonce,
        secret,
      );
      if (opened === null) throw new Error('secretbox: data does not decrypt');
      return opened;
    },
  };
}

/** The transformers of one provider entry, one per key, in order (identity: one). */
export function transformersOf(provider: ProviderConfig): ValueTransformer[] {
  switch (provider.kind) {
    case 'identity':
      return [IDENTITY];
    case 'aescbc':
      return provider.keys.map(aescbc);
    case 'aesgcm':
      return provider.keys.map(aesgcm);
    case 'secretbox':
      return provider.keys.map(secretbox);
  }
}

/**
 * The providers of one resource: writes use the first transformer; reads pick the transformer
 * whose prefix the value starts with (plain values need identity in the list, as in kube).
 */
export class ProviderChain {
  readonly #write: ValueTransformer;
  readonly #read: readonly ValueTransformer[];
  readonly #identity: boolean;

  constructor(providers: readonly ProviderConfig[]) {
    const all = providers.flatMap(transformersOf);
    const first = all[0];
    if (first === undefined) throw new Error('a provider chain needs a provider');
    this.#write = first;
    this.#read = all.filter((t) => t.prefix !== '');
    this.#identity = all.some((t) => t.prefix === '');
  }

  /** The bytes to store for `plain` at `storageKey`. */
  seal(plain: Uint8Array, storageKey: string): Uint8Array {
    const sealed = this.#write.seal(plain, storageKey);
    return this.#write.prefix === '' ? sealed : Buffer.concat([Buffer.from(this.#write.prefix), sealed]);
  }

  /**
   * The plain bytes of a stored value.
   * @throws Error when no provider reads it (no matching key, or a plain value without identity).
   */
  open(stored: Uint8Array, storageKey: string): Uint8Array {
    const buf = Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
    for (const t of this.#read) {
      if (buf.length >= t.prefix.length && buf.subarray(0, t.prefix.length).toString('latin1') === t.prefix) {
        return t.open(buf.subarray(t.prefix.length), storageKey);
      }
    }
    if (buf.subarray(0, 8).toString('latin1') === 'k8s:enc:') {
      throw new Error('no configured provider reads this value (key removed from the configuration?)');
    }
    if (this.#identity) return stored;
    throw new Error('the value is not encrypted and identity is not a configured provider');
  }
}
