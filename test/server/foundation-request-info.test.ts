/**
 * Request info parsing: kube-apiserver's RequestInfoFactory rules on the paths clients send.
 */
import { describe, expect, it } from 'vitest';
import {
  exactNameFromFieldSelector,
  parseRequestInfo,
  type RequestInfo,
} from '../../src/http/request-info.js';

function info(method: string, url: string, query: Record<string, string> = {}): RequestInfo {
  const parsed = parseRequestInfo(method, url, query);
  if (parsed === undefined) throw new Error(`unparsable ${url}`);
  return parsed;
}

type Expect = Partial<RequestInfo>;

const CASES: readonly [string, string, Record<string, string>, Expect][] = [
  [
    'GET',
    '/api/v1/namespaces/default/pods',
    {},
    { verb: 'list', apiGroup: '', apiVersion: 'v1', namespace: 'default', resource: 'pods', name: '' },
  ],
  [
    'GET',
    '/api/v1/namespaces/default/pods/web',
    {},
    { verb: 'get', namespace: 'default', resource: 'pods', name: 'web', subresource: '' },
  ],
  [
    'GET',
    '/api/v1/namespaces/default/pods/web/log',
    {},
    { verb: 'get', resource: 'pods', name: 'web', subresource: 'log' },
  ],
  // Leading and trailing slashes are trimmed, as kube's splitPath does.
  [
    'GET',
    '//api/v1/namespaces/default/pods/web//',
    {},
    { isResourceRequest: true, verb: 'get', namespace: 'default', resource: 'pods', name: 'web' },
  ],
  ['GET', '/api/v1/pods', { watch: 'true' }, { verb: 'watch', namespace: '', resource: 'pods' }],
  ['GET', '/api/v1/pods', { watch: '1' }, { verb: 'watch' }],
  ['GET', '/api/v1/pods', { watch: 'false' }, { verb: 'list' }],
  ['GET', '/api/v1/pods', { watch: '0' }, { verb: 'list' }],
  [
    'GET',
    '/api/v1/watch/namespaces/default/pods',
    {},
    { verb: 'watch', namespace: 'default', resource: 'pods' },
  ],
  [
    'GET',
    '/api/v1/namespaces/default/pods',
    { fieldSelector: 'metadata.name=web' },
    { verb: 'list', name: 'web' },
  ],
  [
    'GET',
    '/api/v1/namespaces/default/pods',
    { fieldSelector: 'status.phase=Running,metadata.name==db' },
    { name: 'db' },
  ],
  ['GET', '/api/v1/namespaces/default/pods', { fieldSelector: 'metadata.name=a/b' }, { name: '' }],
  ['POST', '/api/v1/namespaces/default/pods', {}, { verb: 'create', resource: 'pods', name: '' }],
  ['PUT', '/api/v1/namespaces/default/pods/web/status', {}, { verb: 'update', subresource: 'status' }],
  [
    'PATCH',
    '/apis/apps/v1/namespaces/default/deployments/web/scale',
    {},
    { verb: 'patch', apiGroup: 'apps', resource: 'deployments', subresource: 'scale' },
  ],
  ['DELETE', '/apis/apps/v1/namespaces/default/deployments/web', {}, { verb: 'delete', name: 'web' }],
  ['DELETE', '/apis/apps/v1/namespaces/default/deployments', {}, { verb: 'deletecollection' }],
  ['GET', '/api/v1/namespaces', {}, { verb: 'list', resource: 'namespaces', namespace: '' }],
  [
    'GET',
    '/api/v1/namespaces/kube-system',
    {},
    { verb: 'get', resource: 'namespaces', name: 'kube-system', namespace: 'kube-system' },
  ],
  [
    'PUT',
    '/api/v1/namespaces/kube-system/finalize',
    {},
    { verb: 'update', resource: 'namespaces', name: 'kube-system', subresource: 'finalize' },
  ],
  [
    'GET',
    '/api/v1/namespaces/kube-system/status',
    {},
    { resource: 'namespaces', name: 'kube-system', subresource: 'status' },
  ],
  [
    'GET',
    '/apis/rbac.authorization.k8s.io/v1/clusterroles/admin',
    {},
    { apiGroup: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'admin', namespace: '' },
  ],
  [
    'GET',
    '/api/v1/proxy/namespaces/default/pods/web/a/b',
    {},
    { verb: 'proxy', resource: 'pods', name: 'web', subresource: '' },
  ],
  ['GET', '/api/v1/namespaces/default/configmaps/a%3Ab', {}, { name: 'a:b' }],
  ['GET', '/api/v1/pods/', {}, { verb: 'list', resource: 'pods' }],
];

describe('parseRequestInfo', () => {
  it.each(CASES)('%s %s %j', (method, url, query, expected) => {
    const got = info(method, url, query);
    expect(got.isResourceRequest).toBe(true);
    expect(got).toMatchObject(expected);
  });

  it('treats discovery, health and version paths as non-resource requests', () => {
    for (const path of [
      '/api',
      '/api/v1',
      '/apis',
      '/apis/apps',
      '/apis/apps/v1',
      '/healthz',
      '/readyz/ping',
      '/version',
      '/',
    ]) {
      const got = info('GET', path);
      expect(got, path).toMatchObject({ isResourceRequest: false, verb: 'get', path, resource: '' });
    }
    expect(info('POST', '/healthz').verb).toBe('post');
  });

  it('keeps the path without the query', () => {
    expect(info('GET', '/api/v1/pods?limit=5&watch=1', { limit: '5', watch: '1' })).toMatchObject({
      path: '/api/v1/pods',
      verb: 'watch',
    });
  });

  it('refuses malformed percent-encoding', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/%zz/pods', {})).toBeUndefined();
  });
});

describe('exactNameFromFieldSelector', () => {
  it('finds an exact metadata.name term, with escapes', () => {
    expect(exactNameFromFieldSelector('metadata.name=web')).toBe('web');
    expect(exactNameFromFieldSelector('a=b,metadata.name==x\\,y')).toBe('x,y');
    expect(exactNameFromFieldSelector('metadata.name!=web')).toBeUndefined();
    expect(exactNameFromFieldSelector('metadata.namespace=default')).toBeUndefined();
    expect(exactNameFromFieldSelector('')).toBeUndefined();
  });
});
