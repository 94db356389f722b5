/**
 * A pod-style client: kubectl with only a service account's projected token (a token file, as
 * the kubelet mounts it; no client certificate) against a server with
 * `--authorization-mode=Node,RBAC`. kube's bootstrap policy lets every authenticated user
 * discover the API (`system:discovery`), ask what it may do (`system:basic-user`) and who it is,
 * so discovery, `kubectl auth can-i` and `kubectl auth whoami` work with no binding of its own.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTls, kubectlPath, runKubectl, startTestServer, type TestServer } from '../support/server.js';
import { admin, eventually, requestToken, tokenOf } from './support.js';

const KUBECTL = kubectlPath('1.33');
if (KUBECTL === undefined && process.env['CI'] === 'true')
  throw new Error('kubectl 1.33 is missing (CI=true)');

let server: TestServer;
let kubeconfig: string;

beforeAll(async () => {
  server = await startTestServer({ args: ['--authorization-mode=Node,RBAC', '--anonymous-auth=false'] });
  const ns = await admin(server, '/api/v1/namespaces', {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } },
  });
  expect(ns.status).toBe(201);
  const sa = await admin(server, '/api/v1/namespaces/apps/serviceaccounts', {
    method: 'POST',
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'operator' } },
  });
  expect(sa.status).toBe(201);
  // What the kubelet projects: a bound token for the API server's audience, in a file.
  const tokenFile = join(server.dataDir, 'token');
  await writeFile(
    tokenFile,
    tokenOf(await requestToken(server, 'apps', 'operator', { expirationSeconds: 3607 })),
  );
  await writeFile(join(server.dataDir, 'ca.crt'), adminTls(server.kubeconfigPath).ca);
  kubeconfig = join(server.dataDir, 'pod.kubeconfig');
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'c',
          cluster: { server: server.url, 'certificate-authority': join(server.dataDir, 'ca.crt') },
        },
      ],
      users: [{ name: 'u', user: { tokenFile } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'apps' } }],
      'current-context': 'x',
    }),
  );
  // The bootstrap policy is in place once the server is ready; wait for its bindings anyway.
  await eventually(async () =>
    (await admin(server, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:basic-user'))
      .status === 200
      ? true
      : undefined,
  );
}, 60_000);

afterAll(async () => {
  await server?.close();
});

describe.skipIf(KUBECTL === undefined)('a pod-style client under Node,RBAC', () => {
  it('discovers the API', async () => {
    const r = await runKubectl('1.33', ['api-resources', '-o', 'name'], kubeconfig);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['configmaps', 'deployments.apps']));
    const v = await runKubectl('1.33', ['version', '-o', 'json'], kubeconfig);
    expect(v.code, v.stderr).toBe(0);
  });

  it('asks what it may do: kubectl auth can-i', async () => {
    const no = await runKubectl('1.33', ['auth', 'can-i', 'list', 'configmaps'], kubeconfig);
    // "no" (exit 1) is an answer; a 403 on selfsubjectaccessreviews would be an error on stderr.
    expect(no.stdout.trim()).toBe('no');
    expect(no.stderr).toBe('');
    expect(no.code).toBe(1);
    const yes = await runKubectl(
      '1.33',
      ['auth', 'can-i', 'create', 'selfsubjectaccessreviews.authorization.k8s.io'],
      kubeconfig,
    );
    expect(yes.stdout.trim()).toBe('yes');
    expect(yes.code).toBe(0);
  });

  it('asks who it is: kubectl auth whoami', async () => {
    const r = await runKubectl('1.33', ['auth', 'whoami', '-o', 'json'], kubeconfig);
    expect(r.code, r.stderr).toBe(0);
    const info = (JSON.parse(r.stdout) as { status: { userInfo: { username: string; groups: string[] } } })
      .status.userInfo;
    expect(info.username).toBe('system:serviceaccount:apps:operator');
    expect(info.groups).toEqual([
      'system:serviceaccounts',
      'system:serviceaccounts:apps',
      'system:authenticated',
    ]);
  });
});
