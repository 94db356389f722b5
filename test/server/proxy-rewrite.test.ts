/**
 * The proxy subresources as kube's proxy answers through them (apimachinery's UpgradeAwareHandler
 * and its rewriting Transport), against a real HTTP backend on the loopback behind a Service
 * with hand-made Endpoints: `.../proxy` without a path is redirected to `.../proxy/` for GET and
 * HEAD; the links of an HTML page that point at the backend (plain or gzip-encoded) get the
 * proxy's prefix, other links stay; a redirect's Location is rewritten; the backend's CORS
 * headers are dropped; the backend sees `X-Forwarded-Uri`. Also through kubectl 1.33's
 * `get --raw`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rewriteHtml, rewriteUrl } from '../../src/http/html-links.js';
import { adminFetchBytes } from '../support/https.js';
import { adminFetch, adminTls, runKubectl, startTestServer, type TestServer } from '../support/server.js';

const PAGE = [
  '<html><head><link rel="stylesheet" href="/style.css"></head><body>',
  '<a href="/rewriteme">test</a>',
  "<IMG SRC='http://BACKEND/img.png' alt=x>",
  '<a href="http://example.com/elsewhere">other host</a>',
  '<a href="relative/page">relative</a>',
  '<script>var s = "<a href=\'/not-a-tag\'>";</script>',
  '<form action="/submit?x=1&amp;y=2"></form>',
  '</body></html>',
].join('\n');

let server: TestServer;
let backend: Server;
let backendHost = '';
const prefix = '/api/v1/namespaces/default/services/web:http/proxy';

beforeAll(async () => {
  backend = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(PAGE.replace('BACKEND', backendHost));
    } else if (url === '/gz') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      res.end(gzipSync('<a href="/zipped">z</a>'));
    } else if (url === '/redirect') {
      res.writeHead(302, { location: '/target' });
      res.end();
    } else {
      res.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' });
      res.end(`uri=${String(req.headers['x-forwarded-uri'])} path=${url}`);
    }
  });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  backendHost = `127.0.0.1:${(backend.address() as AddressInfo).port}`;
  server = await startTestServer();
  const tls = adminTls(server.kubeconfigPath);
  const post = async (path: string, body: unknown): Promise<void> => {
    const res = await adminFetch(`${server.url}${path}`, tls, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(201);
  };
  await post('/api/v1/namespaces/default/services', {
    metadata: { name: 'web' },
    spec: { ports: [{ name: 'http', port: 80 }] },
  });
  await post('/api/v1/namespaces/default/endpoints', {
    metadata: { name: 'web' },
    subsets: [
      {
        addresses: [{ ip: '127.0.0.1' }],
        ports: [{ name: 'http', port: Number(backendHost.split(':')[1]) }],
      },
    ],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => backend?.close(resolve));
});

describe('the proxy subresources', () => {
  const get = (path: string, method = 'GET') =>
    adminFetch(`${server.url}${path}`, adminTls(server.kubeconfigPath), { method, http2: false });

  it('redirects a GET or HEAD of .../proxy without a path to .../proxy/ (301), query kept', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await get(`${prefix}?a=1`, method);
      expect(res.status).toBe(301);
      expect(res.headers['location']).toBe(`${prefix}/?a=1`);
    }
    const pod = await get('/api/v1/namespaces/default/pods/ghost/proxy');
    expect(pod.status).toBe(404);
  });

  it("rewrites an HTML page's links to the backend through the proxy, and only those", async () => {
    const res = await get(`${prefix}/page`);
    expect(res.status).toBe(200);
    expect(res.body).toContain(`<a href="${prefix}/rewriteme">test</a>`);
    expect(res.body).toContain(`<link rel="stylesheet" href="${prefix}/style.css">`);
    expect(res.body).toContain(`<img src="${prefix}/img.png" alt="x">`);
    expect(res.body).toContain('<a href="http://example.com/elsewhere">other host</a>');
    expect(res.body).toContain('<a href="relative/page">relative</a>');
    expect(res.body).toContain('<script>var s = "<a href=\'/not-a-tag\'>";</script>');
    expect(res.body).toContain(`<form action="${prefix}/submit?x=1&amp;y=2"></form>`);
    // The backend's length is not passed on: the page changed.
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.body)));
  });

  it('rewrites a gzip-encoded page and keeps it gzip-encoded', async () => {
    const res = await adminFetchBytes(`${server.url}${prefix}/gz`, adminTls(server.kubeconfigPath));
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.body).toString('utf8')).toBe(`<a href="${prefix}/zipped">z</a>`);
  });

  it("rewrites a redirect's Location, drops CORS headers, and sends X-Forwarded-Uri", async () => {
    const redirect = await get(`${prefix}/redirect`);
    expect(redirect.status).toBe(302);
    expect(redirect.headers['location']).toBe(`${prefix}/target`);
    const plain = await get(`${prefix}/echo?q=1`);
    expect(plain.body).toBe(`uri=${prefix}/echo path=/echo?q=1`);
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers kubectl get --raw with the rewritten page', async () => {
    const res = await runKubectl('1.33', ['get', '--raw', `${prefix}/page`], server.kubeconfigPath);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`<a href="${prefix}/rewriteme">test</a>`);
  });
});

describe('rewriteUrl', () => {
  const r = { prefix: '/p/proxy', backendHost: '10.0.0.5:80', requestHost: 'api:6443' };
  it('prefixes absolute paths on the backend, the request host keeps its scheme and host', () => {
    expect(rewriteUrl('/a/b/', r)).toBe('/p/proxy/a/b/');
    expect(rewriteUrl('/a/../b?x#f', r)).toBe('/p/proxy/b?x#f');
    expect(rewriteUrl('http://10.0.0.5:80/x', r)).toBe('/p/proxy/x');
    expect(rewriteUrl('https://api:6443/x', r)).toBe('https://api:6443/p/proxy/x');
    expect(rewriteUrl('/p/proxy/already', r)).toBe('/p/proxy/already');
    expect(rewriteUrl('http://other/x', r)).toBe('http://other/x');
    expect(rewriteUrl('x/y', r)).toBe('x/y');
    expect(rewriteUrl('mailto:someone@example.com', r)).toBe('mailto:someone@example.com');
  });
  it('leaves unterminated tags and non-URL attributes alone', () => {
    expect(rewriteHtml('<a title="/t" href=/u>x</a><a href="/v', (u) => `P${u}`)).toBe(
      '<a title="/t" href="P/u">x</a><a href="/v',
    );
  });
});
