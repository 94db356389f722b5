/**
 * What the authenticator chain costs a request, measured on the chain itself (no sockets): a
 * client certificate already seen on the connection, and a bearer token whose outcome is
 * cached, must both be answered synchronously (no promise) and in microseconds. Prints the
 * figures; the bound is loose (shared CI cores) but catches a per-request crypto or promise.
 */
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CaBundle } from '../../src/authn/ca-bundle.js';
import { RequestAuthenticator } from '../../src/authn/request-authenticator.js';
import { TokenCache } from '../../src/authn/token-cache.js';
import { TokenChain } from '../../src/authn/token-chain.js';
import { TokenFileAuthenticator } from '../../src/authn/token-file.js';
import { issue, makeCa } from './support.js';

const N = 50_000;

function perCallMicros(fn: () => unknown): number {
  for (let i = 0; i < 1000; i++) fn();
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1000 / N;
}

describe('authenticator chain cost', () => {
  it('certificate and cached-token requests are synchronous and cost microseconds', async () => {
    const ca = await makeCa('bench-ca');
    const leaf = await issue(ca, { commonName: 'bench', organizations: ['g'] }, 'client');
    const tokens = new TokenChain({
      authenticators: [TokenFileAuthenticator.parse('bench-token,bench,1\n', 'f')],
      apiAudiences: [],
      cache: new TokenCache({ successTtlMs: 60_000, failureTtlMs: 60_000 }),
    });
    const authn = new RequestAuthenticator({
      anonymous: false,
      clientCas: new CaBundle([{ pem: ca.certPem }]),
      tokens,
    });
    const certSocket = {
      authorized: true,
      getPeerCertificate: () => ({ subject: { CN: 'bench', O: 'g' } }),
      getPeerX509Certificate: () => new X509Certificate(leaf.certPem),
    };
    const plainSocket = { authorized: false, getPeerCertificate: () => ({}) };
    const certRequest = { raw: { socket: certSocket, rawHeaders: [] }, headers: {} } as never;
    const tokenRequest = {
      raw: { socket: plainSocket, rawHeaders: [] },
      headers: { authorization: 'Bearer bench-token' },
    } as never;
    await authn.authenticate(tokenRequest); // fills the cache

    expect(authn.authenticate(certRequest)).not.toBeInstanceOf(Promise);
    expect(authn.authenticate(tokenRequest)).not.toBeInstanceOf(Promise);
    const cert = perCallMicros(() => authn.authenticate(certRequest));
    const token = perCallMicros(() => authn.authenticate(tokenRequest));
    console.log(
      `authn chain per request: client certificate ${cert.toFixed(2)} µs, cached token ${token.toFixed(2)} µs`,
    );
    expect(cert).toBeLessThan(50);
    expect(token).toBeLessThan(50);
  });
});
