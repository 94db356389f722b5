/**
 * Configuration rules without a server where none is needed: the token file format and its
 * start-up errors, the Authorization header grammar, the cipher-suite and HSTS flags, the token
 * cache, and start-up failures of whole servers for bad authentication files.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FlagError } from '../../src/flags/flags.js';
import { parseAuthorization } from '../../src/authn/bearer.js';
import { TokenCache } from '../../src/authn/token-cache.js';
import { TokenFileAuthenticator, TokenFileError, parseCsvLine } from '../../src/authn/token-file.js';
import { parseServerArgs } from '../../src/server/options.js';
import { opensslCiphers } from '../../src/tls/cipher-suites.js';
import { startTestServer } from '../support/server.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authn-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('token file', () => {
  it('parses CSV with quoted group lists and escaped quotes', () => {
    expect(parseCsvLine('t,u,1,"a,b"')).toEqual(['t', 'u', '1', 'a,b']);
    expect(parseCsvLine('t, u, 1')).toEqual(['t', 'u', '1']);
    expect(parseCsvLine('t,"say ""hi""",1')).toEqual(['t', 'say "hi"', '1']);
    expect(() => parseCsvLine('t,"open,1')).toThrow();
  });

  it('names the file and line of a malformed record', () => {
    const bad = ['tok,user\n', 'ok,u,1\n,u,2\n', 'a,u,1\na,v,2\n', 't,"x,1\n', 't,,1\n'];
    const lines = [1, 2, 2, 1, 1];
    bad.forEach((content, i) => {
      expect(() => TokenFileAuthenticator.parse(content, '/etc/tokens.csv')).toThrow(TokenFileError);
      expect(() => TokenFileAuthenticator.parse(content, '/etc/tokens.csv')).toThrow(
        `token file "/etc/tokens.csv" line ${lines[i]}`,
      );
    });
  });

  it('finds users by token and nothing else', async () => {
    const file = TokenFileAuthenticator.parse('t1,alice,u1,"a,b"\r\n\r\nt2,bob,u2\n', 'f');
    expect(file.size).toBe(2);
    // system:authenticated is added around the whole chain, not by the file (authenticated-group.test.ts).
    expect((await file.authenticateToken('t1'))?.user).toEqual({
      name: 'alice',
      uid: 'u1',
      groups: ['a', 'b'],
      extra: {},
    });
    expect(await file.authenticateToken('t3')).toBeUndefined();
    expect(await file.authenticateToken('t1 ')).toBeUndefined();
  });

  it('a malformed token file stops the server from starting, naming the line', async () => {
    const path = join(dir, 'bad.csv');
    await writeFile(path, 'good,u,1\nonly-two,columns\n');
    await expect(startTestServer({ args: [`--token-auth-file=${path}`] })).rejects.toThrow(
      `"${path}" line 2`,
    );
  });
});

describe('Authorization header', () => {
  it('accepts Bearer case-insensitively with one non-empty token, and nothing else', () => {
    expect(parseAuthorization('Bearer abc.def')).toEqual({ kind: 'token', token: 'abc.def' });
    expect(parseAuthorization('BEARER\tabc')).toEqual({ kind: 'token', token: 'abc' });
    for (const bad of [
      'Bearer',
      'Bearer ',
      'Bearer a b',
      'Basic abc',
      'abc',
      '',
      'Bearer\u00e9x',
      'Bearerabc',
    ]) {
      expect(parseAuthorization(bad).kind, JSON.stringify(bad)).toBe('malformed');
    }
  });
});

describe('transport flags', () => {
  it('maps kube cipher suite names to OpenSSL names and refuses unknown ones as flag errors', () => {
    expect(opensslCiphers([])).toBeUndefined();
    expect(opensslCiphers(['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256'])).toContain(
      'ECDHE-RSA-AES128-GCM-SHA256',
    );
    expect(() => parseServerArgs(['--tls-cipher-suites=TLS_NOPE'])).toThrow(FlagError);
    expect(() => parseServerArgs(['--tls-cipher-suites=TLS_NOPE'])).toThrow(
      "Cipher suite TLS_NOPE not supported or doesn't exist",
    );
  });

  it('refuses unknown HSTS directives, bad CORS regexes and malformed SNI pairs', () => {
    expect(() => parseServerArgs(['--strict-transport-security-directives=max-age=1,bogus'])).toThrow(
      FlagError,
    );
    expect(() => parseServerArgs(['--cors-allowed-origins=(unclosed'])).toThrow(FlagError);
    expect(() => parseServerArgs(['--tls-sni-cert-key=only-one-file'])).toThrow(FlagError);
  });

  it('OIDC needs both the issuer and the client id, over https', async () => {
    await expect(startTestServer({ args: ['--oidc-issuer-url=https://issuer.example'] })).rejects.toThrow(
      'oidc-client-id must be specified',
    );
    await expect(
      startTestServer({ args: ['--oidc-issuer-url=http://issuer.example', '--oidc-client-id=x'] }),
    ).rejects.toThrow('https');
  });
});

describe('token cache', () => {
  it('expires successes and failures after their own TTLs and stays bounded', () => {
    let now = 0;
    const cache = new TokenCache({ successTtlMs: 100, failureTtlMs: 10, maxEntries: 2, now: () => now });
    const ok = { user: { name: 'a', uid: '', groups: [], extra: {} }, audiences: [] };
    cache.set('s', ok);
    cache.set('f', undefined, 'nope');
    now = 50;
    expect(cache.get('s')?.result).toBe(ok);
    expect(cache.get('f')).toBeUndefined();
    cache.set('x', ok);
    cache.set('y', ok);
    expect(cache.size).toBe(2);
    now = 200;
    expect(cache.get('x')).toBeUndefined();
  });
});
