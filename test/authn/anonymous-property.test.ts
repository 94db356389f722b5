/**
 * Anonymous access and the union semantics under random input: with anonymous requests on (an
 * authorization mode other than AlwaysAllow), requests without credentials are
 * `system:anonymous`; with any presented credential they never are. A fast-check property over
 * random Authorization headers crossed with client certificates (none, the admin's, one from a
 * foreign CA) and tokens (valid, invalid): never a 5xx, never anonymous with a credential, and
 * exactly kube's union outcome.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymousExposureWarning } from '../../src/authn/config.js';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { issue, makeCa } from './support.js';

let dir: string;
let server: TestServer;
let admin: Required<AdminTls>;
let foreign: { certPem: string; keyPem: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authn-anon-'));
  const tokenFile = join(dir, 'tokens.csv');
  await writeFile(tokenFile, 'alice-token,alice,uid-1,dev\n');
  foreign = await issue(
    await makeCa('foreign'),
    { commonName: 'mallory', organizations: ['system:masters'] },
    'client',
  );
  server = await startTestServer({ args: [`--token-auth-file=${tokenFile}`, '--authorization-mode=RBAC'] });
  admin = adminTls(server.kubeconfigPath);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

type Cert = 'none' | 'admin' | 'foreign';

async function whoami(
  cert: Cert,
  headers: Record<string, string>,
): Promise<{ status: number; username?: string }> {
  const tls: AdminTls =
    cert === 'admin'
      ? admin
      : cert === 'foreign'
        ? { ca: admin.ca, cert: foreign.certPem, key: foreign.keyPem }
        : { ca: admin.ca };
  const res = await adminFetch(`${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, tls, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
  });
  const body = JSON.parse(res.body) as { status?: { userInfo?: { username?: string } } };
  const username = body.status?.userInfo?.username;
  return { status: res.status, ...(username === undefined ? {} : { username }) };
}

describe('anonymous requests', () => {
  it('are system:anonymous in system:unauthenticated when no credential is presented', async () => {
    const res = await adminFetch(
      `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      { ca: admin.ca },
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
      },
    );
    // An enforcing authorizer may refuse anonymous reviews (403); it is never a 401 here.
    expect([201, 403]).toContain(res.status);
    if (res.status === 201) {
      expect(JSON.parse(res.body)).toMatchObject({
        status: { userInfo: { username: 'system:anonymous', groups: ['system:unauthenticated'] } },
      });
    }
  });

  it('the start-up warning names the exposure only when nothing restricts anonymous requests', () => {
    expect(anonymousExposureWarning(true, ['AlwaysAllow'])).toMatch(/anonymous requests are enabled/);
    expect(anonymousExposureWarning(true, ['AlwaysAllow', 'RBAC'])).toBeUndefined();
    expect(anonymousExposureWarning(true, ['Webhook'])).toBeUndefined();
    expect(anonymousExposureWarning(false, ['AlwaysAllow'])).toBeUndefined();
  });
});

const headerChar = fc.constantFrom(...' \tabcABC-._~+/=0123456789:,;"\'!'.split(''));
const garbage = fc.string({ unit: headerChar, maxLength: 30 });
const authorization = fc.oneof(
  fc.constant<string | undefined>(undefined),
  fc.constant('Bearer alice-token'),
  fc.constant('bearer \t alice-token'),
  garbage.map((g) => `Bearer ${g}`),
  garbage.map((g) => `Basic ${g}`),
  garbage,
);

describe('property: the union of authenticators under random credentials', () => {
  it('never answers 5xx, never treats a presented credential as anonymous, and picks kube’s winner', async () => {
    await fc.assert(
      fc.asyncProperty(
        authorization,
        fc.constantFrom<Cert>('none', 'admin', 'foreign'),
        async (auth, cert) => {
          // HTTP/2 (nghttp2) drops a field whose value starts or ends with whitespace (RFC 9113
          // 8.2.1): the server then sees no credential at all.
          const sent = auth !== undefined && auth === auth.trim() ? auth : undefined;
          const res = await whoami(cert, auth === undefined ? {} : { authorization: auth });
          expect(res.status).toBeLessThan(500);
          const validToken = sent !== undefined && /^bearer[ \t]+alice-token$/i.test(sent);
          if (cert === 'admin') {
            // Client certificates come before tokens in kube's order.
            expect(res).toEqual({ status: 201, username: 'system:admin' });
          } else if (validToken) {
            expect(res.status).not.toBe(401);
            if (res.status === 201) expect(res.username).toBe('alice');
          } else if (cert === 'foreign' || sent !== undefined) {
            expect(res.status).toBe(401);
          } else {
            expect(res.status).not.toBe(401);
            if (res.status === 201) expect(res.username).toBe('system:anonymous');
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 60_000);
});
