/**
 * The audit policy against a real server's log file: one server with a policy exercising users,
 * groups, verbs, resources (subresources, resourceNames, whole groups), namespaces,
 * non-resource URLs (exact and `*` suffix), every level and omitStages (policy-wide and per
 * rule). Each case is a real HTTPS request with its own `Audit-ID`; the expected level and stages
 * are written out by hand below (not computed by the code under test) and checked against the
 * log line by line, with the event fields kube writes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { readEvents, send, waitFor, type WireEvent } from './support.js';

const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["Panic"]
rules:
- level: None
  users: ["carol"]
- level: RequestResponse
  users: ["erin"]
  omitManagedFields: true
- level: None
  nonResourceURLs: ["/healthz*"]
- level: RequestResponse
  users: ["alice"]
  resources: [{group: "", resources: ["configmaps"]}]
  omitStages: ["RequestReceived"]
- level: Request
  userGroups: ["ops"]
  verbs: ["create", "update", "patch"]
  namespaces: ["prod"]
- level: Metadata
  resources: [{group: "", resources: ["pods/status"]}]
- level: None
  resources: [{group: "", resources: ["secrets"], resourceNames: ["hidden"]}]
- level: Metadata
  resources: [{group: "", resources: ["secrets"]}]
- level: Metadata
  resources: [{group: "apps"}]
  omitStages: ["ResponseComplete"]
- level: Metadata
  nonResourceURLs: ["/version", "/openapi/*"]
- level: RequestResponse
  verbs: ["watch"]
- level: Metadata
  resources: [{group: "", resources: ["namespaces"]}]
`;

const TOKENS =
  'alice-token,alice,uid-a,"devs"\nbob-token,bob,uid-b,"ops"\ncarol-token,carol,uid-c,"ops"\nerin-token,erin,uid-e,"ops"\n';
const alice = { token: 'alice-token' };
const bob = { token: 'bob-token' };
const carol = { token: 'carol-token' };
const erin = { token: 'erin-token' };

interface Case {
  readonly id: string;
  readonly who: { token: string } | 'admin';
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly code: number;
  /** Expected level, or None for no event at all. */
  readonly level: 'None' | 'Metadata' | 'Request' | 'RequestResponse';
  readonly stages: readonly string[];
}

const cm = (name: string, ns: string): unknown => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data: { k: 'v' },
});

// In order: the namespace first (later cases write into it).
const CASES: readonly Case[] = [
  {
    id: 'ns-create',
    who: 'admin',
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } },
    code: 201,
    level: 'Metadata',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'alice-list',
    who: alice,
    method: 'GET',
    path: '/api/v1/namespaces/default/configmaps',
    code: 200,
    level: 'RequestResponse',
    stages: ['ResponseComplete'],
  },
  {
    id: 'alice-create',
    who: alice,
    method: 'POST',
    path: '/api/v1/namespaces/default/configmaps',
    body: cm('a1', 'default'),
    code: 201,
    level: 'RequestResponse',
    stages: ['ResponseComplete'],
  },
  {
    id: 'bob-create-prod',
    who: bob,
    method: 'POST',
    path: '/api/v1/namespaces/prod/configmaps',
    body: cm('b1', 'prod'),
    code: 201,
    level: 'Request',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'bob-patch-prod',
    who: bob,
    method: 'PATCH',
    path: '/api/v1/namespaces/prod/configmaps/b1',
    body: { data: { k: 'w' } },
    code: 200,
    level: 'Request',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'bob-create-default',
    who: bob,
    method: 'POST',
    path: '/api/v1/namespaces/default/configmaps',
    body: cm('b2', 'default'),
    code: 201,
    level: 'None',
    stages: [],
  },
  {
    id: 'bob-list-prod',
    who: bob,
    method: 'GET',
    path: '/api/v1/namespaces/prod/configmaps',
    code: 200,
    level: 'None',
    stages: [],
  },
  {
    id: 'carol-create-prod',
    who: carol,
    method: 'POST',
    path: '/api/v1/namespaces/prod/configmaps',
    body: cm('c1', 'prod'),
    code: 201,
    level: 'None',
    stages: [],
  },
  {
    id: 'erin-create',
    who: erin,
    method: 'POST',
    path: '/api/v1/namespaces/default/configmaps',
    body: cm('e1', 'default'),
    code: 201,
    level: 'RequestResponse',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'pod-status',
    who: 'admin',
    method: 'GET',
    path: '/api/v1/namespaces/default/pods/nope/status',
    code: 404,
    level: 'Metadata',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'pod-get',
    who: 'admin',
    method: 'GET',
    path: '/api/v1/namespaces/default/pods/nope',
    code: 404,
    level: 'None',
    stages: [],
  },
  {
    id: 'secret-hidden',
    who: 'admin',
    method: 'GET',
    path: '/api/v1/namespaces/default/secrets/hidden',
    code: 404,
    level: 'None',
    stages: [],
  },
  {
    id: 'secret-other',
    who: 'admin',
    method: 'GET',
    path: '/api/v1/namespaces/default/secrets/other',
    code: 404,
    level: 'Metadata',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'apps-list',
    who: 'admin',
    method: 'GET',
    path: '/apis/apps/v1/namespaces/default/deployments',
    code: 200,
    level: 'Metadata',
    stages: ['RequestReceived'],
  },
  {
    id: 'version',
    who: 'admin',
    method: 'GET',
    path: '/version',
    code: 200,
    level: 'Metadata',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'openapi',
    who: 'admin',
    method: 'GET',
    path: '/openapi/v2',
    code: 200,
    level: 'Metadata',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  { id: 'healthz', who: 'admin', method: 'GET', path: '/healthz', code: 200, level: 'None', stages: [] },
  {
    id: 'healthz-etcd',
    who: 'admin',
    method: 'GET',
    path: '/healthz/etcd',
    code: 200,
    level: 'None',
    stages: [],
  },
  {
    id: 'services',
    who: 'admin',
    method: 'GET',
    path: '/api/v1/services',
    code: 200,
    level: 'None',
    stages: [],
  },
  {
    id: 'watch',
    who: 'admin',
    method: 'GET',
    path: '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1',
    code: 200,
    level: 'RequestResponse',
    stages: ['RequestReceived', 'ResponseStarted', 'ResponseComplete'],
  },
  {
    id: 'impersonated',
    who: 'admin',
    method: 'GET',
    path: '/version',
    headers: { 'impersonate-user': 'alice', 'impersonate-group': 'devs' },
    code: 200,
    level: 'Metadata',
    stages: ['RequestReceived', 'ResponseComplete'],
  },
  {
    id: 'bad-token',
    who: { token: 'nobody' },
    method: 'GET',
    path: '/version',
    code: 401,
    level: 'Metadata',
    stages: ['ResponseStarted'],
  },
];

let dir: string;
let server: TestServer;
let logPath: string;
const byId = new Map<string, WireEvent[]>();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-audit-matrix-'));
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  await writeFile(join(dir, 'tokens.csv'), TOKENS);
  logPath = join(dir, 'logs', 'audit.log');
  server = await startTestServer({
    args: [
      `--audit-policy-file=${join(dir, 'policy.yaml')}`,
      `--audit-log-path=${logPath}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
    ],
  });
  for (const c of CASES) {
    const res = await send(
      server.url,
      server.kubeconfigPath,
      c.who,
      c.id,
      c.method,
      c.path,
      c.body,
      c.headers,
    );
    expect(res.status, `${c.id}: ${res.body.slice(0, 200)}`).toBe(c.code);
    expect(res.headers['audit-id'], c.id).toBe(c.id);
  }
  const events = await waitFor(
    () => readEvents(logPath),
    (evs) => evs.filter((e) => e.auditID === 'watch').length >= 3,
  );
  for (const e of events) byId.set(e.auditID, [...(byId.get(e.auditID) ?? []), e]);
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('policy matrix against the log file', () => {
  it.each(CASES.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const events = byId.get(c.id) ?? [];
    expect(events.map((e) => e.stage)).toEqual(c.stages);
    for (const e of events) {
      expect(e.kind).toBe('Event');
      expect(e.apiVersion).toBe('audit.k8s.io/v1');
      expect(e.level).toBe(c.level);
      expect(e.verb).toBeTypeOf('string');
      expect(e.requestURI).toBe(c.path);
      expect(e.sourceIPs).toEqual(['127.0.0.1']);
      expect(e.userAgent).toBe('audit-test/1.0');
      expect(e.requestReceivedTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(e.stageTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      if (e.stage === 'RequestReceived') {
        expect(e.stageTimestamp).toBe(e.requestReceivedTimestamp);
        expect(e.responseStatus).toBeUndefined();
      } else {
        expect((e.responseStatus as { code: number }).code).toBe(c.code);
      }
      const hasRequest = e.stage !== 'RequestReceived' && c.body !== undefined && c.level !== 'Metadata';
      expect('requestObject' in e, 'requestObject').toBe(hasRequest);
      const hasResponse = e.stage === 'ResponseComplete' && c.level === 'RequestResponse' && c.id !== 'watch';
      expect('responseObject' in e, 'responseObject').toBe(hasResponse);
    }
  });

  it('records users, groups and the impersonated user', () => {
    const [a] = byId.get('alice-create') ?? [];
    expect(a?.user).toEqual({ username: 'alice', uid: 'uid-a', groups: ['devs', 'system:authenticated'] });
    const [received, imp] = byId.get('impersonated') ?? [];
    // RequestReceived is before impersonation (as in kube); the later stages name both.
    expect(received?.impersonatedUser).toBeUndefined();
    expect((imp?.user as { username: string }).username).toMatch(/admin/);
    expect(imp?.impersonatedUser).toEqual({ username: 'alice', groups: ['devs', 'system:authenticated'] });
    expect(byId.get('alice-list')?.[0]?.impersonatedUser).toBeUndefined();
  });

  it('fills objectRef from the request info and the request object', () => {
    const created = byId.get('alice-create')?.[0];
    // As the client sent it: no uid or resourceVersion on a create.
    expect(created?.objectRef).toEqual({
      resource: 'configmaps',
      namespace: 'default',
      name: 'a1',
      apiVersion: 'v1',
    });
    expect((created?.requestObject as { metadata: Record<string, unknown> }).metadata).toEqual({
      name: 'a1',
      namespace: 'default',
    });
    expect(created?.verb).toBe('create');
    expect((created?.requestObject as { metadata: { name: string } }).metadata.name).toBe('a1');
    const response = created?.responseObject as { metadata: { uid: string; resourceVersion: string } };
    expect(response.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(byId.get('pod-status')?.[0]?.objectRef).toEqual({
      resource: 'pods',
      namespace: 'default',
      name: 'nope',
      apiVersion: 'v1',
      subresource: 'status',
    });
    expect(byId.get('apps-list')?.[0]?.objectRef).toEqual({
      resource: 'deployments',
      namespace: 'default',
      apiGroup: 'apps',
      apiVersion: 'v1',
    });
    expect(byId.get('ns-create')?.[1]?.objectRef).toMatchObject({ resource: 'namespaces', name: 'prod' });
    expect(byId.get('version')?.[0]?.objectRef).toBeUndefined();
    expect(byId.get('watch')?.[0]?.verb).toBe('watch');
  });

  it('omits managedFields only where the rule says so', () => {
    const kept = byId.get('alice-create')?.[0]?.responseObject as { metadata: Record<string, unknown> };
    expect(kept.metadata['managedFields']).toBeInstanceOf(Array);
    const omitted = byId.get('erin-create')?.[1]?.responseObject as { metadata: Record<string, unknown> };
    expect(omitted.metadata['name']).toBe('e1');
    expect(omitted.metadata).not.toHaveProperty('managedFields');
  });

  it('logs the patch itself as the request object', () => {
    const done = byId.get('bob-patch-prod')?.[1];
    expect(done?.verb).toBe('patch');
    expect(done?.requestObject).toEqual({ data: { k: 'w' } });
  });

  it('records failures with their Status and authorization annotations', () => {
    const done = byId.get('pod-status')?.[1];
    expect(done?.responseStatus).toMatchObject({
      metadata: {},
      status: 'Failure',
      reason: 'NotFound',
      code: 404,
      details: { name: 'nope', kind: 'pods' },
    });
    expect(done?.annotations).toEqual({
      'authorization.k8s.io/decision': 'allow',
      'authorization.k8s.io/reason': '',
    });
    expect(byId.get('version')?.[1]?.responseStatus).toEqual({ metadata: {}, code: 200 });
    // RequestReceived comes before authorization: no annotations yet.
    expect(byId.get('version')?.[0]?.annotations).toBeUndefined();
  });

  it('audits failed authentication as kube does', () => {
    const [e] = byId.get('bad-token') ?? [];
    expect(e?.user).toEqual({});
    expect(e?.responseStatus).toEqual({
      metadata: {},
      message: 'Authentication failed, attempted: bearer',
      code: 401,
    });
  });
});
