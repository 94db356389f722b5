/**
 * Audit configuration: policy files kube-apiserver refuses (with its messages) stop the server
 * from starting; bad `--audit-*` flag values are flag errors with kube's wording; rule matching
 * details (subresource wildcards, resourceNames, `*` URL suffixes, groups) on the evaluator; and
 * a server without auditing still answers every request with an `Audit-ID`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluatePolicy, parsePolicy } from '../../src/audit/index.js';
import { withoutManagedFields } from '../../src/audit/request-audit.js';
import type { RequestInfo } from '../../src/http/request-info.js';
import { parseRequestInfo } from '../../src/http/request-info.js';
import { FlagError } from '../../src/flags/flags.js';
import { parseServerArgs } from '../../src/server/options.js';
import { adminFetch, adminTls, startTestServer } from '../support/server.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-audit-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HEAD = 'apiVersion: audit.k8s.io/v1\nkind: Policy\n';

describe('policy file', () => {
  it.each([
    ['rules: []', 'loaded illegal policy with 0 rules'],
    ['rules:\n- users: [a]', 'rules[0].level: Required value'],
    [
      'rules:\n- level: Everything',
      'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"',
    ],
    [
      'omitStages: [Done]\nrules:\n- level: None',
      'omitStages[0]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic',
    ],
    [
      'rules:\n- level: None\n  nonResourceURLs: ["healthz"]',
      `rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character`,
    ],
    [
      'rules:\n- level: None\n  nonResourceURLs: ["/a*b"]',
      `rules[0].nonResourceURLs[0]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule`,
    ],
    [
      'rules:\n- level: None\n  nonResourceURLs: ["/a"]\n  namespaces: [x]',
      'rules cannot apply to both regular resources and non-resource URLs',
    ],
    [
      'rules:\n- level: None\n  resources: [{group: "", resourceNames: [x]}]',
      'rules[0].resources.resourceNames: Invalid value: ["x"]: using resourceNames requires at least one resource',
    ],
  ])('refuses %j', (rules, message) => {
    expect(() => parsePolicy(`${HEAD}${rules}`)).toThrow(message);
  });

  it('refuses other kinds and versions', () => {
    expect(() =>
      parsePolicy('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]'),
    ).toThrow('no kind "Policy" is registered for version "audit.k8s.io/v1beta1"');
    expect(() => parsePolicy('apiVersion: audit.k8s.io/v1\nrules: [{level: None}]')).toThrow(
      "Object 'Kind' is missing",
    );
  });

  it("accepts unknown fields with kube's lenient-decoding warning", () => {
    const p = parsePolicy(`${HEAD}rules:\n- level: None\n  colour: blue`);
    expect(p.warnings).toEqual([
      'Audit policy contains errors, falling back to lenient decoding: unknown field "rules[0].colour"',
    ]);
  });

  it('stops the server from starting, naming the file', async () => {
    const path = join(dir, 'bad.yaml');
    await writeFile(path, `${HEAD}rules:\n- level: Loud`);
    await expect(
      startTestServer({ args: [`--audit-policy-file=${path}`, '--audit-log-path=-'] }),
    ).rejects.toThrow(`loading audit policy file: rules[0].level: Unsupported value: "Loud"`);
    await expect(
      startTestServer({ args: [`--audit-policy-file=${join(dir, 'missing.yaml')}`] }),
    ).rejects.toThrow('loading audit policy file: failed to read file path');
  });

  it('an audit log path that cannot be created stops the server from starting', async () => {
    const policy = join(dir, 'ok.yaml');
    const notADir = join(dir, 'plain-file');
    await writeFile(policy, `${HEAD}rules:\n- level: Metadata`);
    await writeFile(notADir, '');
    await expect(
      startTestServer({
        args: [`--audit-policy-file=${policy}`, `--audit-log-path=${join(notADir, 'audit.log')}`],
      }),
    ).rejects.toThrow('ensureLogFile: ');
  });
});

describe('rule matching', () => {
  const user = { name: 'u', uid: '', groups: ['g1', 'system:authenticated'], extra: {} };
  const info = (method: string, url: string): RequestInfo => parseRequestInfo(method, url, {}) as RequestInfo;
  const policy = parsePolicy(
    `${HEAD}rules:
- level: Request
  resources: [{group: "", resources: ["*/log"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["services/*"]}]
- level: Metadata
  resources: [{group: "", resources: ["secrets"], resourceNames: ["a", "b"]}]
- level: Request
  userGroups: ["g2", "g1"]
  verbs: ["delete"]
- level: Metadata
  nonResourceURLs: ["/metrics*", "/livez"]
- level: RequestResponse
  resources: [{group: "*", resources: ["deployments"]}]
  omitStages: [RequestReceived]
  omitManagedFields: true
`,
  );
  const level = (method: string, url: string): string =>
    evaluatePolicy(policy, user, info(method, url)).level;

  it("matches kube's resource, subresource, name, group, URL and verb rules", () => {
    expect(level('GET', '/api/v1/namespaces/d/pods/p/log')).toBe('Request');
    expect(level('GET', '/api/v1/namespaces/d/pods/p')).toBe('None');
    expect(level('GET', '/api/v1/namespaces/d/services/s/proxy')).toBe('RequestResponse');
    expect(level('GET', '/api/v1/namespaces/d/services/s')).toBe('RequestResponse');
    expect(level('GET', '/api/v1/namespaces/d/secrets/a')).toBe('Metadata');
    expect(level('GET', '/api/v1/namespaces/d/secrets/c')).toBe('None');
    expect(level('DELETE', '/api/v1/namespaces/d/configmaps/c')).toBe('Request');
    expect(level('GET', '/metrics')).toBe('Metadata');
    expect(level('GET', '/metrics/slis')).toBe('Metadata');
    expect(level('GET', '/livez')).toBe('Metadata');
    expect(level('GET', '/livez/ping')).toBe('None');
    expect(level('GET', '/apis/apps/v1/deployments')).toBe('RequestResponse');
    expect(level('GET', '/apis/extensions/v1beta1/deployments')).toBe('RequestResponse');
    const cfg = evaluatePolicy(policy, user, info('GET', '/apis/apps/v1/deployments'));
    expect([...cfg.omitStages]).toEqual(['RequestReceived']);
    expect(cfg.omitManagedFields).toBe(true);
    expect(evaluatePolicy(policy, undefined, info('DELETE', '/api/v1/namespaces/d/configmaps/c')).level).toBe(
      'None',
    );
  });

  it('drops managedFields from objects, list items and table rows', () => {
    const mf = [{ manager: 'm' }];
    expect(withoutManagedFields({ metadata: { name: 'a', managedFields: mf } })).toEqual({
      metadata: { name: 'a' },
    });
    expect(
      withoutManagedFields({ kind: 'List', metadata: {}, items: [{ metadata: { managedFields: mf } }] }),
    ).toEqual({
      kind: 'List',
      metadata: {},
      items: [{ metadata: {} }],
    });
    expect(
      withoutManagedFields({
        kind: 'Table',
        rows: [{ cells: [], object: { metadata: { managedFields: mf } } }],
      }),
    ).toEqual({ kind: 'Table', rows: [{ cells: [], object: { metadata: {} } }] });
  });
});

describe('flags', () => {
  it.each([
    [
      ['--audit-log-path=/x', '--audit-log-mode=later'],
      'invalid audit log mode later, allowed modes are "batch,blocking,blocking-strict"',
    ],
    [
      ['--audit-log-path=/x', '--audit-log-format=xml'],
      'invalid audit log format xml, allowed formats are "legacy,json"',
    ],
    [['--audit-log-path=/x', '--audit-log-maxage=-1'], "--audit-log-maxage -1 can't be a negative number"],
    [
      ['--audit-webhook-config-file=/x', '--audit-webhook-batch-max-size=0'],
      'invalid audit batch webhook max batch size 0, must be a positive number',
    ],
    [
      ['--audit-webhook-config-file=/x', '--audit-webhook-truncate-max-batch-size=10'],
      'invalid audit truncate webhook max batch size 10, must be greater than max event size (102400)',
    ],
  ])('%j is refused', (args, message) => {
    expect(() => parseServerArgs(args)).toThrow(FlagError);
    expect(() => parseServerArgs(args)).toThrow(message);
  });
});

describe('audit IDs without auditing', () => {
  it("answers every request with an Audit-ID, honouring the client's", async () => {
    const s = await startTestServer();
    try {
      const tls = adminTls(s.kubeconfigPath);
      const fresh = await adminFetch(`${s.url}/version`, tls);
      expect(fresh.headers['audit-id']).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      const mine = await adminFetch(`${s.url}/api/v1/namespaces/default/pods/none`, tls, {
        headers: { 'audit-id': 'my-id' },
      });
      expect(mine.status).toBe(404);
      expect(mine.headers['audit-id']).toBe('my-id');
      const http1 = await adminFetch(`${s.url}/version`, tls, {
        http2: false,
        headers: { 'audit-id': 'h1' },
      });
      expect(http1.protocol).not.toBe('h2');
      expect(http1.headers['audit-id']).toBe('h1');
      const unauthenticated = await adminFetch(
        `${s.url}/version`,
        { ca: tls.ca },
        {
          headers: { authorization: 'Bearer nope', 'audit-id': 'denied' },
        },
      );
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.headers['audit-id']).toBe('denied');
    } finally {
      await s.close();
    }
  });
});
