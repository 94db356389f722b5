import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ContinueTokens, InvalidContinueError } from '../../storage/index.js';

const secret = new Uint8Array(32).fill(7);
const span = { prefix: '/registry/configmaps/' };

describe('continue tokens', () => {
  it('round-trip the revision and last key', () => {
    const tokens = new ContinueTokens(secret);
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 2n ** 63n }), fc.string(), (revision, rest) => {
        const lastKey = span.prefix + rest;
        expect(tokens.open(span, tokens.seal(span, { revision, lastKey }))).toEqual({ revision, lastKey });
      }),
    );
  });

  it('round-trip a remaining count when one is given', () => {
    const tokens = new ContinueTokens(secret);
    fc.assert(
      fc.property(fc.nat({ max: 0xffff_fffe }), fc.string(), (remaining, rest) => {
        const lastKey = span.prefix + rest;
        const position = { revision: 9n, lastKey, remaining };
        expect(tokens.open(span, tokens.seal(span, position))).toEqual(position);
      }),
    );
    // a count too large to carry is left out, never wrapped
    const big = tokens.open(
      span,
      tokens.seal(span, { revision: 9n, lastKey: `${span.prefix}a`, remaining: 2 ** 32 }),
    );
    expect(big.remaining).toBeUndefined();
  });

  it('open version 1 tokens (no remaining count) sealed before the upgrade', () => {
    const key = Buffer.from(`${span.prefix}a`);
    const body = Buffer.concat([Buffer.from([1]), Buffer.alloc(8), key]);
    body.writeBigUInt64BE(42n, 1);
    const tag = createHmac('sha256', secret)
      .update(`p\u0000${span.prefix}`)
      .update(body)
      .digest()
      .subarray(0, 16);
    const token = Buffer.concat([body, tag]).toString('base64url');
    expect(new ContinueTokens(secret).open(span, token)).toEqual({
      revision: 42n,
      lastKey: `${span.prefix}a`,
    });
  });

  it('reject any single changed character', () => {
    const tokens = new ContinueTokens(secret);
    const token = tokens.seal(span, { revision: 42n, lastKey: '/registry/configmaps/default/a' });
    fc.assert(
      fc.property(fc.nat({ max: token.length - 1 }), fc.constantFrom(...'AbZ09-_'), (at, ch) => {
        fc.pre(token[at] !== ch);
        const garbled = token.slice(0, at) + ch + token.slice(at + 1);
        expect(() => tokens.open(span, garbled)).toThrow(InvalidContinueError);
      }),
    );
  });

  it('reject tokens of another span, another secret, or arbitrary strings', () => {
    const tokens = new ContinueTokens(secret);
    const token = tokens.seal(span, { revision: 5n, lastKey: '/registry/configmaps/x' });
    expect(() => tokens.open({ prefix: '/registry/secrets/' }, token)).toThrow(InvalidContinueError);
    expect(() => new ContinueTokens(new Uint8Array(32).fill(8)).open(span, token)).toThrow(
      InvalidContinueError,
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(() => tokens.open(span, s)).toThrow(InvalidContinueError);
      }),
    );
  });
});

describe('continue tokens are canonical', () => {
  it('reject a token with characters appended', () => {
    const tokens = new ContinueTokens(secret);
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60 }).map((s) => span.prefix + s),
        fc.constantFrom('A', 'g', '-', '_', 'AA'),
        (lastKey, extra) => {
          const token = tokens.seal(span, { revision: 9n, lastKey });
          expect(() => tokens.open(span, token + extra)).toThrow(InvalidContinueError);
        },
      ),
    );
  });
});
