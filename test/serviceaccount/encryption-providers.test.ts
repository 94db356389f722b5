/**
 * The encryption-at-rest pieces on their own: kube's value formats (prefix, nonce/IV sizes) round
 * trip for every provider and key size, aesgcm binds a value to its storage key, tampering and
 * unknown keys fail, plain values need identity, and the configuration parser refuses what
 * kube-apiserver refuses (with the offending field named, never the key).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  EncryptionConfigError,
  parseEncryptionConfig,
  type ProviderConfig,
} from '../../src/encryption/config.js';
import { ProviderChain } from '../../src/encryption/providers.js';

const key = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);
const KEY = '/registry/secrets/ns/name';

const providers: ProviderConfig[] = [
  { kind: 'aescbc', keys: [{ name: 'cbc16', secret: key(16, 1) }] },
  { kind: 'aescbc', keys: [{ name: 'cbc32', secret: key(32, 2) }] },
  { kind: 'aesgcm', keys: [{ name: 'gcm24', secret: key(24, 3) }] },
  { kind: 'aesgcm', keys: [{ name: 'gcm32', secret: key(32, 4) }] },
  { kind: 'secretbox', keys: [{ name: 'box', secret: key(32, 5) }] },
];

describe('providers', () => {
  for (const p of providers) {
    const name = p.keys[0]!.name;
    it(`${p.kind} (${name}) round-trips any value under kube's prefix`, () => {
      const chain = new ProviderChain([p]);
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 300 }), (plain) => {
          const sealed = chain.seal(plain, KEY);
          const prefix = `k8s:enc:${p.kind}:v1:${name}:`;
          expect(Buffer.from(sealed).subarray(0, prefix.length).toString('latin1')).toBe(prefix);
          expect(Buffer.from(chain.open(sealed, KEY))).toEqual(Buffer.from(plain));
        }),
        { numRuns: 50 },
      );
      // Tampering with the last byte is caught (or, for CBC, breaks the padding or the value).
      const sealed = Buffer.from(chain.seal(Buffer.from('top secret value'), KEY));
      sealed[sealed.length - 1] = (sealed[sealed.length - 1] ?? 0) ^ 0xff;
      let opened: Buffer | undefined;
      try {
        opened = Buffer.from(chain.open(sealed, KEY));
      } catch {
        opened = undefined;
      }
      expect(opened?.toString()).not.toBe('top secret value');
    });
  }

  it('aesgcm values do not open under another storage key', () => {
    const chain = new ProviderChain([providers[3]!]);
    const sealed = chain.seal(Buffer.from('v'), KEY);
    expect(() => chain.open(sealed, '/registry/secrets/ns/other')).toThrow();
  });

  it('values of removed keys, and plain values without identity, do not read', () => {
    const old = new ProviderChain([providers[4]!]).seal(Buffer.from('v'), KEY);
    const rotatedAway = new ProviderChain([providers[0]!, { kind: 'identity', keys: [] }]);
    expect(() => rotatedAway.open(old, KEY)).toThrow(/no configured provider/);
    expect(Buffer.from(rotatedAway.open(Buffer.from('{"plain":1}'), KEY)).toString()).toBe('{"plain":1}');
    const strict = new ProviderChain([providers[0]!]);
    expect(() => strict.open(Buffer.from('{"plain":1}'), KEY)).toThrow(/identity/);
  });
});

describe('configuration', () => {
  const doc = (providersYaml: string, kind = 'EncryptionConfiguration'): string =>
    `apiVersion: apiserver.config.k8s.io/v1\nkind: ${kind}\nresources:\n  - resources: [secrets]\n    providers:\n${providersYaml}\n`;
  it("parses kube's format", () => {
    const parsed = parseEncryptionConfig(
      doc(
        `      - aesgcm:\n          keys: [{ name: k1, secret: "${key(32, 9).toString('base64')}" }]\n      - identity: {}`,
      ),
    );
    expect(parsed.resources[0]!.providers.map((p) => p.kind)).toEqual(['aesgcm', 'identity']);
  });
  const refused: [string, string][] = [
    ['wrong kind', doc('      - identity: {}', 'Config')],
    [
      'short key',
      doc(`      - aescbc:\n          keys: [{ name: k, secret: "${key(10, 1).toString('base64')}" }]`),
    ],
    [
      'secretbox 16 bytes',
      doc(`      - secretbox:\n          keys: [{ name: k, secret: "${key(16, 1).toString('base64')}" }]`),
    ],
    ['no keys', doc('      - aescbc:\n          keys: []')],
    [
      'two providers in one entry',
      doc(
        `      - identity: {}\n        aescbc: { keys: [{ name: k, secret: "${key(32, 1).toString('base64')}" }] }`,
      ),
    ],
    ['kms', doc('      - kms: { name: x, endpoint: unix:///kms.sock }')],
    [
      'duplicate key names',
      doc(
        `      - aescbc:\n          keys: [{ name: k, secret: "${key(32, 1).toString('base64')}" }, { name: k, secret: "${key(32, 2).toString('base64')}" }]`,
      ),
    ],
  ];
  for (const [what, text] of refused) {
    it(`refuses ${what}`, () => {
      let err: unknown;
      try {
        parseEncryptionConfig(text);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(EncryptionConfigError);
      expect((err as Error).message).not.toContain(key(32, 1).toString('base64'));
    });
  }
});
