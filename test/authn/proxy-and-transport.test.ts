/**
 * The authenticating proxy and the transport on one server: request headers trusted only from
 * a proxy certificate (requestheader CA and allowed names), user certificates checked against
 * their own CA, a certificate that expires on an open connection refused there from then on,
 * --client-ca-file reloaded without a restart, CORS preflights, HSTS,
 * --tls-cipher-suites and --tls-sni-cert-key seen by real TLS clients.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as connectHttp2 } from 'node:http2';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { issue, makeCa, type TestCa } from './support.js';

let dir: string;
let server: TestServer;
let admin: Required<AdminTls>;
let proxyCa: TestCa;
let userCa: TestCa;
let clientCaFile: string;
let proxy: { certPem: string; keyPem: string };
let rogueProxy: { certPem: string; keyPem: string };
let dave: { certPem: string; keyPem: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authn-proxy-'));
  proxyCa = await makeCa('front-proxy-ca');
  userCa = await makeCa('user-ca');
  proxy = await issue(proxyCa, { commonName: 'front-proxy' }, 'client');
  rogueProxy = await issue(proxyCa, { commonName: 'other-proxy' }, 'client');
  dave = await issue(userCa, { commonName: 'dave', organizations: ['qa'] }, 'client');
  const proxyCaFile = join(dir, 'proxy-ca.crt');
  await writeFile(proxyCaFile, proxyCa.certPem);
  clientCaFile = join(dir, 'client-ca.crt');
  await writeFile(clientCaFile, userCa.certPem);
  const sniCa = await makeCa('sni-ca');
  const sni = await issue(sniCa, { commonName: 'sni.example.com' }, 'server', {
    dnsNames: ['sni.example.com'],
  });
  await writeFile(join(dir, 'sni.crt'), sni.certPem);
  await writeFile(join(dir, 'sni.key'), sni.keyPem);
  server = await startTestServer({
    args: [
      `--requestheader-client-ca-file=${proxyCaFile}`,
      '--requestheader-allowed-names=front-proxy',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-uid-headers=X-Remote-Uid',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      `--client-ca-file=${clientCaFile}`,
      '--cors-allowed-origins=^https://ui\\.example\\.com$',
      '--strict-transport-security-directives=max-age=31536000,includeSubDomains',
      '--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
      `--tls-sni-cert-key=${join(dir, 'sni.crt')},${join(dir, 'sni.key')}:sni.example.com`,
    ],
  });
  admin = adminTls(server.kubeconfigPath);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

async function whoami(
  creds: { cert?: string; key?: string },
  headers: Record<string, string> = {},
  http2 = true,
): Promise<{ status: number; user?: UserInfo }> {
  const res = await adminFetch(
    `${server.url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
    { ca: admin.ca, ...(creds.cert === undefined ? {} : { cert: creds.cert, key: creds.key as string }) },
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}',
      http2,
    },
  );
  const body = JSON.parse(res.body) as { status?: { userInfo?: UserInfo } };
  return {
    status: res.status,
    ...(body.status?.userInfo === undefined ? {} : { user: body.status.userInfo }),
  };
}

const proxyHeaders = {
  'x-remote-user': 'carol',
  'x-remote-uid': 'c-1',
  'x-remote-group': 'g1',
  'x-remote-extra-scopes': 's1',
  'x-remote-extra-acme.com%2fproject': 'p',
};

describe('authenticating proxy', () => {
  it('takes the identity from the headers of an allowed proxy certificate', async () => {
    for (const http2 of [true, false]) {
      const res = await whoami({ cert: proxy.certPem, key: proxy.keyPem }, proxyHeaders, http2);
      expect(res.status).toBe(201);
      expect(res.user).toEqual({
        username: 'carol',
        uid: 'c-1',
        groups: ['g1', 'system:authenticated'],
        extra: { scopes: ['s1'], 'acme.com/project': ['p'] },
      });
    }
  });

  it('401 for a proxy certificate not in --requestheader-allowed-names, or without a username header', async () => {
    expect((await whoami({ cert: rogueProxy.certPem, key: rogueProxy.keyPem }, proxyHeaders)).status).toBe(
      401,
    );
    expect((await whoami({ cert: proxy.certPem, key: proxy.keyPem })).status).toBe(401);
  });

  it('ignores the headers from user certificates (a user cannot claim to be someone else)', async () => {
    const res = await whoami({ cert: dave.certPem, key: dave.keyPem }, proxyHeaders);
    // kube 1.33 names a certificate credential by the SHA-256 of its DER.
    const id = createHash('sha256').update(new X509Certificate(dave.certPem).raw).digest('hex');
    expect(res.user).toEqual({
      username: 'dave',
      groups: ['qa', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [`X509SHA256=${id}`] },
    });
    const asAdmin = await whoami({ cert: admin.cert, key: admin.key }, proxyHeaders);
    expect(asAdmin.user?.username).toBe('system:admin');
  });

  it('a proxy certificate is no user certificate, and no headers reach anyone without one', async () => {
    // No certificate: anonymous is off under AlwaysAllow, so the headers alone get a 401.
    expect((await whoami({}, proxyHeaders)).status).toBe(401);
  });
});

describe('client certificate expiry', () => {
  it('a certificate that expires while its connection stays open no longer authenticates there', async () => {
    const brief = await issue(userCa, { commonName: 'brief' }, 'client', {}, 3_000);
    const session = connectHttp2(server.url, { ca: admin.ca, cert: brief.certPem, key: brief.keyPem });
    const review = (): Promise<number> =>
      new Promise((resolve, reject) => {
        const stream = session.request({
          ':method': 'POST',
          ':path': '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          'content-type': 'application/json',
        });
        stream.on('response', (h) => resolve(Number(h[':status'])));
        stream.on('error', reject);
        stream.end('{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}');
        stream.resume();
      });
    try {
      expect(await review()).toBe(201);
      await new Promise((r) => setTimeout(r, 3_500));
      expect(await review()).toBe(401);
    } finally {
      session.close();
    }
  }, 20_000);
});

describe('--client-ca-file reload', () => {
  it('trusts a replaced CA file without a restart', async () => {
    const newCa = await makeCa('user-ca-2');
    const erin = await issue(newCa, { commonName: 'erin' }, 'client');
    expect((await whoami({ cert: erin.certPem, key: erin.keyPem })).status).toBe(401);
    await writeFile(clientCaFile, `${userCa.certPem}${newCa.certPem}`);
    let status = 0;
    for (let i = 0; i < 40 && status !== 201; i++) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await whoami({ cert: erin.certPem, key: erin.keyPem })).status;
    }
    expect(status).toBe(201);
    expect((await whoami({ cert: dave.certPem, key: dave.keyPem })).status).toBe(201);
  }, 20_000);
});

describe('CORS and HSTS', () => {
  it('answers a preflight from an allowed origin with 204 and kube-apiserver headers, before authentication', async () => {
    const res = await adminFetch(
      `${server.url}/api/v1/namespaces`,
      { ca: admin.ca },
      {
        method: 'OPTIONS',
        headers: { origin: 'https://ui.example.com', 'access-control-request-method': 'GET' },
      },
    );
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://ui.example.com');
    expect(res.headers['access-control-allow-methods']).toBe('POST, GET, OPTIONS, PUT, DELETE, PATCH');
    expect(res.headers['access-control-allow-headers']).toContain('Authorization');
    expect(res.headers['access-control-allow-credentials']).toBe('true');
  });

  it('adds no CORS headers for other origins; adds them to normal responses of allowed ones', async () => {
    const other = await adminFetch(`${server.url}/api/v1/namespaces`, admin, {
      headers: { origin: 'https://evil.example.com' },
    });
    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const allowed = await adminFetch(`${server.url}/api/v1/namespaces`, admin, {
      headers: { origin: 'https://ui.example.com' },
    });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://ui.example.com');
    expect(allowed.headers['access-control-expose-headers']).toBe('Date');
  });

  it('sends the HSTS header on every response, errors included', async () => {
    const ok = await adminFetch(`${server.url}/version`, admin);
    expect(ok.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    const denied = await adminFetch(`${server.url}/version`, { ca: admin.ca });
    expect(denied.status).toBe(401);
    expect(denied.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });
});

function handshake(opts: {
  servername?: string;
  ciphers?: string;
  maxVersion?: 'TLSv1.2' | 'TLSv1.3';
}): Promise<{ cipher: string; subject: string } | { error: string }> {
  const url = new URL(server.url);
  return new Promise((resolve) => {
    const socket = connect({
      host: url.hostname,
      port: Number(url.port),
      rejectUnauthorized: false,
      ...(opts.servername === undefined ? {} : { servername: opts.servername }),
      ...(opts.ciphers === undefined ? {} : { ciphers: opts.ciphers }),
      ...(opts.maxVersion === undefined ? {} : { maxVersion: opts.maxVersion }),
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('secureConnect', () => {
      const result = {
        cipher: socket.getCipher().standardName,
        subject: socket.getPeerCertificate().subject.CN as string,
      };
      socket.end();
      resolve(result);
    });
    socket.once('error', (err: Error) => resolve({ error: err.message }));
  });
}

describe('TLS', () => {
  it('--tls-cipher-suites: TLS 1.2 negotiates only the listed suites', async () => {
    expect(await handshake({ maxVersion: 'TLSv1.2' })).toMatchObject({
      cipher: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    });
    const refused = await handshake({ maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES256-GCM-SHA384' });
    expect(refused).toHaveProperty('error');
  });

  it('--tls-sni-cert-key: the SNI name picks its certificate; other names get the default one', async () => {
    expect(await handshake({ servername: 'sni.example.com' })).toMatchObject({ subject: 'sni.example.com' });
    const other = await handshake({ servername: 'localhost' });
    expect(other).toHaveProperty('subject');
    expect((other as { subject: string }).subject).not.toBe('sni.example.com');
  });
});
