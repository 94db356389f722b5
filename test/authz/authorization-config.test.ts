/**
 * `--authorization-config`: the file's validation errors are kube-apiserver v1.33's (each expected
 * message below was printed by kube-apiserver v1.33.13 for the same file), the flag excludes
 * `--authorization-mode` and `--authorization-webhook-*` with kube's message, matchConditions that
 * do not compile are refused with kube's errors, and a server runs the configured chain (a real
 * HTTPS webhook, then Node and RBAC) with the webhook's matchConditions (CEL on the review's
 * spec) and failure policy, and reloads the file when it changes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAuthorizationConfig } from '../../src/authz/authorization-config.js';
import { parseServerArgs } from '../../src/server/options.js';
import { adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { clientTls, clusterIssuer, waitReady } from '../support/users.js';
import { call, startWebhook, type LocalWebhook } from './support.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-authz-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n';

async function file(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

async function loadError(name: string, text: string): Promise<string> {
  const path = await file(name, text);
  try {
    loadAuthorizationConfig(path);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${name} loaded`);
}

describe('AuthorizationConfiguration file validation (messages of kube-apiserver v1.33.13)', () => {
  it('reports every field error of a file at once, in kube words', async () => {
    const message = await loadError(
      'bad1.yaml',
      `${HEAD}authorizers:
- {type: ABAC, name: abac}
- {type: Node, name: node}
- {type: Node, name: node2}
- {type: RBAC, name: Bad_Name, webhook: {}}
- type: Webhook
  name: w
  webhook:
    timeout: 40s
    subjectAccessReviewVersion: v2
    failurePolicy: Maybe
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: rel/path}
- type: Webhook
  name: w2
  webhook:
    connectionInfo: {type: InClusterConfig}
`,
    );
    expect(message).toBe(
      `[authorizers[2].type: Duplicate value: "Node", authorizers[3].name: Invalid value: "Bad_Name": authorizer name is invalid: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), authorizers[3].webhook: Invalid value: "non-null": may only be specified when type=Webhook, authorizers[4].timeout: Invalid value: "40s": must be > 0s and <= 30s, authorizers[4].subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1", authorizers[4].failurePolicy: Unsupported value: "Maybe": supported values: "NoOpinion", "Deny", authorizers[4].connectionInfo.kubeConfigFile: Invalid value: "rel/path": must be an absolute path, authorizers[5].timeout: Required value, authorizers[5].subjectAccessReviewVersion: Required value, authorizers[5].failurePolicy: Required value]`,
    );
  });

  it('checks types, names, TTLs and connections', async () => {
    const hook = 'timeout: 3s, subjectAccessReviewVersion: v1, failurePolicy: Deny';
    const message = await loadError(
      'bad2.yaml',
      `${HEAD}authorizers:
- {type: Foo, name: a}
- {name: b}
- {type: RBAC}
- {type: Webhook, name: w}
- {type: Webhook, name: w2, webhook: {${hook}, authorizedTTL: -1s, connectionInfo: {type: InClusterConfig, kubeConfigFile: /etc/x}}}
- {type: Webhook, name: w3, webhook: {${hook}, connectionInfo: {type: KubeConfigFile, kubeConfigFile: /nonexist}}}
`,
    );
    expect(message).toBe(
      '[authorizers[0].type: Unsupported value: "Foo": supported values: "ABAC", "AlwaysAllow", "AlwaysDeny", "Node", "RBAC", "Webhook", authorizers[1].type: Required value, authorizers[2].name: Required value, authorizers[3].webhook: Required value: required when type=Webhook, authorizers[4].authorizedTTL: Invalid value: "-1s": must be > 0s, authorizers[4].connectionInfo.kubeConfigFile: Invalid value: "/etc/x": can only be set when type=KubeConfigFile, authorizers[5].connectionInfo.kubeConfigFile: Invalid value: "/nonexist": error loading file: stat /nonexist: no such file or directory]',
    );
  });

  it('decodes strictly and knows v1, v1beta1 and v1alpha1', async () => {
    expect(await loadError('empty.yaml', `${HEAD}authorizers: []\n`)).toBe(
      'authorizers: Required value: at least one authorization mode must be defined',
    );
    expect(
      await loadError(
        'v2.yaml',
        'apiVersion: apiserver.config.k8s.io/v2\nkind: AuthorizationConfiguration\nauthorizers: [{type: RBAC, name: rbac}]\n',
      ),
    ).toBe(
      'failed to load AuthorizationConfiguration from file: no kind "AuthorizationConfiguration" is registered for version "apiserver.config.k8s.io/v2" in scheme "pkg/runtime/scheme.go:110"',
    );
    expect(
      await loadError(
        'v1alpha1.yaml',
        'apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers: [{type: RBAC, name: r}]\n',
      ),
    ).toBe('expected name rbac for authorizer RBAC instead of r');
    expect(await loadError('unknown.yaml', `${HEAD}authorizers: [{type: RBAC, name: rbac, foo: 1}]\n`)).toBe(
      'failed to load AuthorizationConfiguration from file: strict decoding error: unknown field "authorizers[0].foo"',
    );
    expect(
      await loadError(
        'duration.yaml',
        `${HEAD}authorizers: [{type: Webhook, name: w, webhook: {timeout: abc, subjectAccessReviewVersion: v1, failurePolicy: Deny, connectionInfo: {type: KubeConfigFile, kubeConfigFile: /etc/hostname}}}]\n`,
      ),
    ).toBe('failed to load AuthorizationConfiguration from file: time: invalid duration "abc"');
    expect(await loadError('garbage.yaml', '{not yaml: [')).toMatch(
      /^failed to load AuthorizationConfiguration from file: couldn't get version\/kind/,
    );
    for (const version of ['v1', 'v1beta1', 'v1alpha1']) {
      const path = await file(
        `ok-${version}.yaml`,
        `apiVersion: apiserver.config.k8s.io/${version}\nkind: AuthorizationConfiguration\nauthorizers: [{type: Node, name: node}, {type: RBAC, name: rbac}]\n`,
      );
      expect(loadAuthorizationConfig(path).authorizers.map((a) => a.type)).toEqual(['Node', 'RBAC']);
    }
  });

  it('refuses webhook matchConditions that are blank, repeated or do not compile to a bool', async () => {
    const message = await loadError(
      'match.yaml',
      `${HEAD}authorizers:
- type: Webhook
  name: w
  webhook:
    timeout: 3s
    subjectAccessReviewVersion: v1
    matchConditionSubjectAccessReviewVersion: v1
    failurePolicy: Deny
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: /etc/hostname}
    matchConditions:
    - expression: 'request.user != "x"'
    - expression: ' '
    - expression: 'request.user != "x"'
    - expression: 'request.nope == 1'
    - expression: 'request.user'
    - expression: 'request.resourceAttributes.namespace == 1'
    - expression: 'object.x'
    - expression: 'has(request.resourceAttributes) && request.resourceAttributes.verb == "get"'
- {type: RBAC, name: rbac}
`,
    );
    expect(message).toBe(
      `[authorizers[0].matchConditions[1].expression: Required value, authorizers[0].matchConditions[2].expression: Duplicate value: "request.user != \\"x\\"", authorizers[0].matchConditions[3].expression: Invalid value: "request.nope == 1": compilation failed: ERROR: <input>:1:8: undefined field 'nope'
 | request.nope == 1
 | .......^, authorizers[0].matchConditions[4].expression: Invalid value: "request.user": must evaluate to bool but got string, authorizers[0].matchConditions[5].expression: Invalid value: "request.resourceAttributes.namespace == 1": compilation failed: ERROR: <input>:1:38: found no matching overload for '_==_' applied to '(string, int)'
 | request.resourceAttributes.namespace == 1
 | .....................................^, authorizers[0].matchConditions[6].expression: Invalid value: "object.x": compilation failed: ERROR: <input>:1:1: undeclared reference to 'object' (in container '')
 | object.x
 | ^]`,
    );
  });

  it('excludes --authorization-mode and --authorization-webhook-* with kube-apiserver message', async () => {
    const path = await file('modes.yaml', `${HEAD}authorizers: [{type: RBAC, name: rbac}]\n`);
    for (const other of ['--authorization-mode=RBAC', '--authorization-webhook-version=v1']) {
      expect(() => parseServerArgs([`--authorization-config=${path}`, other])).toThrow(
        '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined',
      );
    }
    const parsed = parseServerArgs([`--authorization-config=${path}`]);
    expect(parsed.help === false && parsed.options.authorizationModes).toEqual(['RBAC']);
    expect(() => parseServerArgs([`--authorization-config=${join(dir, 'missing.yaml')}`])).toThrow(
      `--authorization-config: open ${join(dir, 'missing.yaml')}: no such file or directory`,
    );
  });
});

describe('a server run by --authorization-config', () => {
  let server: TestServer;
  let hook: LocalWebhook;
  let admin: AdminTls;
  let wanda: AdminTls;
  let dan: AdminTls;
  let alice: AdminTls;
  let nobody: AdminTls;
  let configPath: string;

  const config = (failurePolicy: string): string =>
    `${HEAD}authorizers:
- type: Webhook
  name: local-hook
  webhook:
    timeout: 5s
    subjectAccessReviewVersion: v1
    failurePolicy: ${failurePolicy}
    unauthorizedTTL: 30s
    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${hook.kubeconfigPath}}
    matchConditionSubjectAccessReviewVersion: v1
    matchConditions:
    - expression: 'request.user != "skipped"'
    - expression: 'request.user != "broken" || request.groups[99] == "x"'
- {type: Node, name: node}
- {type: RBAC, name: rbac}
`;

  beforeAll(async () => {
    hook = await startWebhook(dir, 'hook', (user) =>
      user === 'wanda'
        ? { allowed: true }
        : user === 'dan'
          ? { allowed: false, denied: true, reason: 'dan is banned' }
          : { allowed: false },
    );
    configPath = await file('authz.yaml', config('NoOpinion'));
    process.env['CAPSTAN_AUTHZ_CONFIG_RELOAD_MS'] = '100';
    try {
      server = await startTestServer({ args: [`--authorization-config=${configPath}`] });
    } finally {
      delete process.env['CAPSTAN_AUTHZ_CONFIG_RELOAD_MS'];
    }
    admin = adminTls(server.kubeconfigPath);
    const issuer = await clusterIssuer(server);
    wanda = await clientTls(server, issuer, 'wanda');
    dan = await clientTls(server, issuer, 'dan');
    alice = await clientTls(server, issuer, 'alice');
    nobody = await clientTls(server, issuer, 'nobody');
    await waitReady(server);
    const binding = await call(
      server,
      admin,
      'POST',
      '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'alice-view' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
      },
    );
    expect(binding.status).toBe(201);
    // `view` is an aggregated role: the controller manager's aggregation controller fills it.
    for (let i = 0; i < 200; i++) {
      const view = await call(server, admin, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/view');
      if (((view.body['rules'] as unknown[] | undefined) ?? []).length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await hook?.close();
  });

  const pods = '/api/v1/namespaces/default/pods';
  /** Reviews the webhook got for `user` (the in-process controllers are asked about too). */
  const reviewsOf = (user: string): number =>
    hook.reviews.filter((r) => (r['spec'] as { user?: string } | undefined)?.user === user).length;

  it('asks the webhook first, then RBAC (the bootstrap hook runs as RBAC is configured)', async () => {
    expect((await call(server, wanda, 'GET', pods)).status).toBe(200);
    const denied = await call(server, dan, 'GET', pods);
    expect(denied.status).toBe(403);
    expect(denied.body['message']).toBe(
      'pods is forbidden: User "dan" cannot list resource "pods" in API group "" in the namespace "default": dan is banned',
    );
    const ask = reviewsOf('alice');
    expect((await call(server, alice, 'GET', pods)).status).toBe(200);
    expect(reviewsOf('alice')).toBe(ask + 1);
    expect((await call(server, nobody, 'GET', pods)).status).toBe(403);
    const ready = await call(server, admin, 'GET', '/readyz?verbose');
    expect(String(ready.body['text'])).toContain('[+]poststarthook/rbac/bootstrap-roles ok');
  });

  it('runs matchConditions before asking: false skips the webhook, an error is decided by failurePolicy', async () => {
    const issuer = await clusterIssuer(server);
    const skipped = await clientTls(server, issuer, 'skipped');
    const broken = await clientTls(server, issuer, 'broken');
    const asked = reviewsOf('skipped') + reviewsOf('broken');
    // Not asked: no opinion, and RBAC has nothing for the user.
    const denied = await call(server, skipped, 'GET', pods);
    expect(denied.status).toBe(403);
    expect(denied.body['message']).toBe(
      'pods is forbidden: User "skipped" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    expect(reviewsOf('skipped') + reviewsOf('broken')).toBe(asked);
    // The condition errs (index out of range): NoOpinion with the error, nothing allows: kube's 500.
    const failed = await call(server, broken, 'GET', pods);
    expect(failed.status).toBe(500);
    expect(failed.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    expect(String(failed.body['message'])).toContain(
      `cel evaluation error: expression 'request.user != "broken" || request.groups[99] == "x"' resulted in error: `,
    );
    expect(reviewsOf('skipped') + reviewsOf('broken')).toBe(asked);
    // Others are still asked.
    expect((await call(server, wanda, 'GET', pods)).status).toBe(200);
  });

  it('failurePolicy NoOpinion lets RBAC decide when the webhook fails; Deny after a reload fails the request', async () => {
    hook.failing = true;
    try {
      // bob has no binding yet: the failed webhook's error is the answer, kube's 500.
      const bob = await clientTls(server, await clusterIssuer(server), 'bob');
      expect((await call(server, bob, 'GET', pods)).status).toBe(500);
      await call(server, admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'bob-view' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }],
      });
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        status = (await call(server, bob, 'GET', pods)).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 50));
      }
      expect(status).toBe(200);
      // An invalid file is refused and the chain in use stays.
      await writeFile(configPath, `${HEAD}authorizers: []\n`);
      await new Promise((r) => setTimeout(r, 400));
      expect((await call(server, bob, 'GET', pods)).status).toBe(200);
      expect(server.logs.some((l) => l.includes('reload failed'))).toBe(true);
      // Deny: the failed webhook ends the chain, kube's 500.
      await writeFile(configPath, config('Deny'));
      for (let i = 0; i < 50 && status === 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = (await call(server, bob, 'GET', pods)).status;
      }
      const failed = await call(server, bob, 'GET', pods);
      expect(failed.status).toBe(500);
      expect(failed.body).toMatchObject({ kind: 'Status', reason: 'InternalError', code: 500 });
    } finally {
      hook.failing = false;
    }
  });
});
