/**
 * What a request that no route takes gets, as kube-apiserver v1.33.13 answered the same requests:
 * a method a route does not take is 405 with empty `details`; a watch path of a kind that cannot
 * be watched and an item path of a kind that is only created (reviews, bindings) do not exist
 * (404), while `?watch=1` on such a collection is a 405; a path outside the API (not under
 * `/api`, `/version`, `/openid` or a served group) is Go's plain-text 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type TestServer } from '../support/server.js';

const NOT_ALLOWED = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server does not allow this method on the requested resource',
  reason: 'MethodNotAllowed',
  details: {},
  code: 405,
};
const NOT_FOUND = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server could not find the requested resource',
  reason: 'NotFound',
  details: {},
  code: 404,
};

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ args: ['--controllers='] });
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe('requests no route takes', () => {
  it.each([
    ['POST', '/api/v1/namespaces/default/configmaps/x', NOT_ALLOWED],
    ['PUT', '/api/v1/namespaces/default/configmaps', NOT_ALLOWED],
    ['DELETE', '/api/v1/configmaps', NOT_ALLOWED],
    ['POST', '/api/v1/namespaces/default/pods/x/status', NOT_ALLOWED],
    ['GET', '/apis/authorization.k8s.io/v1/subjectaccessreviews', NOT_ALLOWED],
    ['GET', '/apis/authorization.k8s.io/v1/subjectaccessreviews?watch=1', NOT_ALLOWED],
    ['GET', '/api/v1/namespaces/default/pods/x/binding', NOT_ALLOWED],
    ['GET', '/api/v1/namespaces/default/pods/x/eviction', NOT_ALLOWED],
    ['DELETE', '/api/v1/componentstatuses/scheduler', NOT_ALLOWED],
    ['GET', '/apis/authorization.k8s.io/v1/watch/subjectaccessreviews', NOT_FOUND],
    ['GET', '/api/v1/watch/namespaces/default/bindings', NOT_FOUND],
    ['GET', '/api/v1/watch/componentstatuses/etcd-0', NOT_FOUND],
    ['GET', '/apis/authorization.k8s.io/v1/subjectaccessreviews/x', NOT_FOUND],
    ['DELETE', '/apis/authorization.k8s.io/v1/subjectaccessreviews/x', NOT_FOUND],
  ])('%s %s', async (method, path, status) => {
    const res = await adminFetch(`${server.url}${path}`, adminTls(server.kubeconfigPath), {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      ...(method === 'POST' || method === 'PUT' ? { body: '{}' } : {}),
    });
    expect(res.status).toBe(status.code);
    expect(JSON.parse(res.body)).toEqual(status);
  });
});

describe('paths outside the API', () => {
  const get = (path: string) =>
    adminFetch(`${server.url}${path}`, adminTls(server.kubeconfigPath), {
      headers: { accept: 'application/json' },
    });

  it.each(['/api/v2', '/apis/apps/v9', '/version/x', '/openid/v1/jwks/x'])(
    '%s: a 404 Status, as an API path',
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body)).toEqual(NOT_FOUND);
    },
  );

  it.each([
    '/apis/example.com',
    '/apis/example.com/v1/things',
    '/logs/x',
    '/x/y',
    '/livez/nothing',
    '/metrics/x',
  ])("%s: Go's plain 404, as kube-apiserver's last handler answers it", async (path) => {
    const res = await get(path);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toBe('404 page not found\n');
  });
});

describe('cache control', () => {
  it("marks every answer 'no-cache, private', as kube's filter does, unless it says otherwise", async () => {
    const tls = adminTls(server.kubeconfigPath);
    for (const [method, path] of [
      ['GET', '/api/v1/namespaces/default/configmaps'],
      ['GET', '/x/y'],
      ['DELETE', '/api/v1/configmaps'],
      ['GET', '/healthz'],
    ] as const) {
      const res = await adminFetch(`${server.url}${path}`, tls, { method });
      expect(res.headers['cache-control'], `${method} ${path}`).toBe('no-cache, private');
    }
    const root = JSON.parse((await adminFetch(`${server.url}/openapi/v3`, tls)).body) as {
      paths: Record<string, { serverRelativeURL: string }>;
    };
    const doc = await adminFetch(`${server.url}${root.paths['apis/apps/v1']?.serverRelativeURL ?? ''}`, tls);
    expect(doc.status).toBe(200);
    expect(doc.headers['cache-control']).toBe('public, immutable');
  });
});
