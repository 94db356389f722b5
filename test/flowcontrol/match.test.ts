/**
 * FlowSchema matching (src/flowcontrol/match.ts) on kube's rules: subjects (users, groups,
 * service accounts with `*`), resource rules (verbs, groups, `resource/subresource`, namespaces
 * and clusterScope for requests without a namespace), non-resource URLs (exact and `prefix*`),
 * precedence then name, and the flow distinguishers.
 */
import { describe, expect, it } from 'vitest';
import { matchingOrder, schemaOf } from '../../src/flowcontrol/config.js';
import { classify, flowDistinguisher } from '../../src/flowcontrol/match.js';
import { parseRequestInfo, type RequestInfo } from '../../src/http/request-info.js';

function req(method: string, path: string): RequestInfo {
  const url = new URL(path, 'https://x');
  const info = parseRequestInfo(method, path, Object.fromEntries(url.searchParams));
  if (info === undefined) throw new Error(path);
  return info;
}

const schema = (name: string, precedence: number, rule: Record<string, unknown>, by?: string) =>
  schemaOf(name, `uid-${name}`, {
    priorityLevelConfiguration: { name: 'pl' },
    matchingPrecedence: precedence,
    ...(by === undefined ? {} : { distinguisherMethod: { type: by } }),
    rules: [rule],
  });

const alice = { name: 'alice', groups: ['devs', 'system:authenticated'] };
const robot = { name: 'system:serviceaccount:ci:builder', groups: ['system:serviceaccounts'] };

describe('classify', () => {
  const ordered = matchingOrder([
    schema('z-pods-in-a', 10, {
      subjects: [{ kind: 'Group', group: { name: 'devs' } }],
      resourceRules: [
        { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'], namespaces: ['a'] },
      ],
    }),
    schema('a-status', 10, {
      subjects: [{ kind: 'User', user: { name: '*' } }],
      resourceRules: [
        { verbs: ['*'], apiGroups: ['apps'], resources: ['deployments/status'], namespaces: ['*'] },
      ],
    }),
    schema('ci', 20, {
      subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'ci', name: '*' } }],
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true }],
    }),
    schema('metrics', 30, {
      subjects: [{ kind: 'User', user: { name: 'alice' } }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/metrics', '/debug/*'] }],
    }),
  ]);
  const name = (user: typeof alice, info: RequestInfo) => classify(ordered, user, info)?.name;

  it('matches subjects, verbs, resources and namespaces', () => {
    expect(name(alice, req('GET', '/api/v1/namespaces/a/pods/p'))).toBe('z-pods-in-a');
    expect(name(alice, req('GET', '/api/v1/namespaces/a/pods/p/log'))).toBe('z-pods-in-a');
    expect(name(alice, req('GET', '/api/v1/namespaces/b/pods/p'))).toBeUndefined();
    expect(name(alice, req('DELETE', '/api/v1/namespaces/a/pods/p'))).toBeUndefined();
    expect(name(alice, req('GET', '/api/v1/namespaces/a/pods/p/exec'))).toBeUndefined();
    // Across all namespaces there is no namespace: only clusterScope rules match.
    expect(name(alice, req('GET', '/api/v1/pods'))).toBeUndefined();
    expect(name(robot, req('GET', '/api/v1/pods'))).toBe('ci');
    expect(name(robot, req('GET', '/api/v1/nodes'))).toBe('ci');
    // Resource rules with no namespaces match no namespaced request.
    expect(name(robot, req('GET', '/api/v1/namespaces/a/pods'))).toBeUndefined();
    expect(
      name({ ...robot, name: 'system:serviceaccount:other:builder' }, req('GET', '/api/v1/pods')),
    ).toBeUndefined();
  });

  it('orders by precedence, then name', () => {
    expect(ordered.map((s) => s.name)).toEqual(['a-status', 'z-pods-in-a', 'ci', 'metrics']);
    expect(name(alice, req('PUT', '/apis/apps/v1/namespaces/a/deployments/d/status'))).toBe('a-status');
  });

  it('matches non-resource URLs exactly or by prefix', () => {
    expect(name(alice, req('GET', '/metrics'))).toBe('metrics');
    expect(name(alice, req('GET', '/debug/pprof/heap'))).toBe('metrics');
    expect(name(alice, req('GET', '/metricsz'))).toBeUndefined();
    expect(name(alice, req('POST', '/metrics'))).toBeUndefined();
    expect(name(robot, req('GET', '/metrics'))).toBeUndefined();
  });
});

describe('flowDistinguisher', () => {
  it('is the user, the namespace, or nothing', () => {
    const info = req('GET', '/api/v1/namespaces/a/pods');
    const rule = { subjects: [{ kind: 'User', user: { name: '*' } }] };
    expect(flowDistinguisher(schema('u', 1, rule, 'ByUser'), alice, info)).toBe('alice');
    expect(flowDistinguisher(schema('n', 1, rule, 'ByNamespace'), alice, info)).toBe('a');
    expect(flowDistinguisher(schema('x', 1, rule), alice, info)).toBe('');
  });
});
