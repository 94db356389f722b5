/**
 * What a request that no route takes gets, as kube-apiserver v1.33.13 answered the same requests:
 * a method a route does not take is 405 with empty `details`; a watch path of a kind that cannot
 * be watched and an item path of a kind that is only created (reviews, bindings) do not exist
 * (404), while `?watch=1` on such a collection is a 405.
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
