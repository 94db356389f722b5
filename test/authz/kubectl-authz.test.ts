/**
 * Authorization with stock kubectl 1.27 and 1.33 (a missing binary fails the test): `create
 * role/rolebinding`, `auth can-i` (plain, `--list`, `--as`), `auth reconcile`, escalation
 * prevention (a role or binding beyond what the user holds, then the escalate and bind verbs), and adding a user
 * with no openssl: a CertificateSigningRequest for the kube-apiserver-client signer, `kubectl
 * certificate approve`, and the signed certificate authenticating as the new user.
 */
import { generateKeyPair, privateKeyPem } from '../../src/pki/certificate.js';
import { createCsr } from '../../src/pki/csr.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeKubeconfig } from '../../src/pki/kubeconfig.js';
import {
  adminTls,
  runKubectl,
  startTestServer,
  type KubectlVersion,
  type TestServer,
} from '../support/server.js';
import { clientTls, clusterIssuer, waitReady } from '../support/users.js';

const VERSIONS: readonly KubectlVersion[] = ['1.27', '1.33'];

let server: TestServer;
let aliceConfig: string;

async function kubeconfigFor(name: string, cert: string, key: string): Promise<string> {
  const path = join(server.dataDir, `${name}.kubeconfig`);
  await writeKubeconfig(path, {
    server: server.url,
    caPem: adminTls(server.kubeconfigPath).ca,
    clientCertPem: cert,
    clientKeyPem: key,
    userName: name,
  });
  return path;
}

async function eventually(v: KubectlVersion, args: string[], config: string, want: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const r = await runKubectl(v, args, config);
    if (r.stdout.trim() === want) return;
    if (Date.now() > deadline) throw new Error(`kubectl ${args.join(' ')}: ${r.stdout} ${r.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  // The CSR signer runs in the in-process controller manager, with the server's cluster CA.
  server = await startTestServer({ args: ['--authorization-mode=Node,RBAC'], controllers: ['csrsigning'] });
  await waitReady(server);
  const alice = await clientTls(server, await clusterIssuer(server), 'alice', ['devs']);
  aliceConfig = await kubeconfigFor('alice', alice.cert, alice.key);
  const ns = await runKubectl('1.33', ['create', 'namespace', 'team'], server.kubeconfigPath);
  expect(ns.code, ns.stderr).toBe(0);
}, 60_000);
afterAll(async () => {
  await server?.close();
});

describe.each(VERSIONS)('kubectl %s', (v) => {
  const tag = v.replace('.', '-');

  it('creates roles and bindings and answers auth can-i', async () => {
    const admin = server.kubeconfigPath;
    let r = await runKubectl(
      v,
      ['create', 'role', `pod-reader-${tag}`, '--verb=get,list', '--resource=pods', '-n', 'team'],
      admin,
    );
    expect(r.code, r.stderr).toBe(0);
    r = await runKubectl(
      v,
      ['create', 'rolebinding', `alice-${tag}`, `--role=pod-reader-${tag}`, '--user=alice', '-n', 'team'],
      admin,
    );
    expect(r.code, r.stderr).toBe(0);
    await eventually(v, ['auth', 'can-i', 'list', 'pods', '-n', 'team'], aliceConfig, 'yes');
    const no = await runKubectl(v, ['auth', 'can-i', 'list', 'secrets', '-n', 'team'], aliceConfig);
    expect(no.stdout.trim()).toBe('no');
    expect(no.code).toBe(1);
    const denied = await runKubectl(v, ['get', 'secrets', '-n', 'team'], aliceConfig);
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      'User "alice" cannot list resource "secrets" in API group "" in the namespace "team"',
    );
    const list = await runKubectl(v, ['auth', 'can-i', '--list', '-n', 'team'], aliceConfig);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/pods\s+\[\]\s+\[\]\s+\[get list\]/);
    expect(list.stdout).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io/);
    expect(
      (
        await runKubectl(v, ['auth', 'can-i', 'list', 'pods', '-n', 'team', '--as', 'alice'], admin)
      ).stdout.trim(),
    ).toBe('yes');
    expect(
      (
        await runKubectl(v, ['auth', 'can-i', 'list', 'pods', '-n', 'team', '--as', 'bob'], admin)
      ).stdout.trim(),
    ).toBe('no');
    const asAlice = await runKubectl(v, ['get', 'pods', '-n', 'team', '--as', 'alice'], admin);
    expect(asAlice.code, asAlice.stderr).toBe(0);
  });

  it('reconciles RBAC objects with auth reconcile', async () => {
    const file = join(server.dataDir, `reconcile-${tag}.yaml`);
    await writeFile(
      file,
      [
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRole',
        'metadata:',
        `  name: reconciled-${tag}`,
        'rules:',
        '- apiGroups: [""]',
        '  resources: [configmaps]',
        '  verbs: [get]',
        '---',
        'apiVersion: rbac.authorization.k8s.io/v1',
        'kind: ClusterRoleBinding',
        'metadata:',
        `  name: reconciled-${tag}`,
        'roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reconciled-' + tag + '}',
        'subjects:',
        '- {apiGroup: rbac.authorization.k8s.io, kind: User, name: alice}',
        '',
      ].join('\n'),
    );
    const r = await runKubectl(v, ['auth', 'reconcile', '-f', file], server.kubeconfigPath);
    expect(r.code, r.stderr).toBe(0);
    await eventually(v, ['auth', 'can-i', 'get', 'configmaps', '-A'], aliceConfig, 'yes');
    const again = await runKubectl(v, ['auth', 'reconcile', '-f', file], server.kubeconfigPath);
    expect(again.code, again.stderr).toBe(0);
  });

  it('refuses escalation through kubectl create role/rolebinding unless escalate or bind is held', async () => {
    const admin = server.kubeconfigPath;
    const ns = `esc-${tag}`;
    const run = async (args: string[], config = admin): Promise<{ code: number; stderr: string }> =>
      runKubectl(v, [...args, '-n', ns], config);
    expect((await runKubectl(v, ['create', 'namespace', ns], admin)).code).toBe(0);
    // dave may manage roles and bindings in the namespace and read pods, nothing more.
    let r = await run([
      'create',
      'role',
      'rbac-manager',
      '--verb=create,get,list',
      '--resource=roles,rolebindings',
    ]);
    expect(r.code, r.stderr).toBe(0);
    r = await run(['create', 'role', 'pod-reader', '--verb=get', '--resource=pods']);
    expect(r.code, r.stderr).toBe(0);
    for (const role of ['rbac-manager', 'pod-reader']) {
      r = await run(['create', 'rolebinding', `dave-${role}`, `--role=${role}`, '--user=dave']);
      expect(r.code, r.stderr).toBe(0);
    }
    const dave = await clientTls(server, await clusterIssuer(server), 'dave');
    const daveConfig = await kubeconfigFor(`dave-${tag}`, dave.cert, dave.key);
    await eventually(v, ['auth', 'can-i', 'create', 'roles', '-n', ns], daveConfig, 'yes');
    // A role granting what dave holds is fine; more is an escalation, kube's message. (kubectl
    // 1.33 sends these bodies as protobuf: the check once let them all through.)
    r = await run(['create', 'role', 'own', '--verb=get', '--resource=pods'], daveConfig);
    expect(r.code, r.stderr).toBe(0);
    r = await run(['create', 'role', 'more', '--verb=get', '--resource=secrets'], daveConfig);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      'roles.rbac.authorization.k8s.io "more" is forbidden: user "dave" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
    );
    expect(r.stderr).toContain('{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}');
    // Binding a role dave holds is fine; binding admin is not, until he may bind it.
    r = await run(['create', 'rolebinding', 'erin-own', '--role=own', '--user=erin'], daveConfig);
    expect(r.code, r.stderr).toBe(0);
    r = await run(['create', 'rolebinding', 'erin-admin', '--clusterrole=admin', '--user=erin'], daveConfig);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('rolebindings.rbac.authorization.k8s.io "erin-admin" is forbidden');
    // The escalate and bind verbs lift the checks.
    r = await run([
      'create',
      'role',
      'escalator',
      '--verb=escalate,bind',
      '--resource=roles',
      '--resource=clusterroles',
    ]);
    expect(r.code, r.stderr).toBe(0);
    r = await run(['create', 'rolebinding', 'dave-escalator', '--role=escalator', '--user=dave']);
    expect(r.code, r.stderr).toBe(0);
    await eventually(v, ['auth', 'can-i', 'bind', 'clusterroles', '-n', ns], daveConfig, 'yes');
    r = await run(['create', 'role', 'more', '--verb=get', '--resource=secrets'], daveConfig);
    expect(r.code, r.stderr).toBe(0);
    r = await run(['create', 'rolebinding', 'erin-admin', '--clusterrole=admin', '--user=erin'], daveConfig);
    expect(r.code, r.stderr).toBe(0);
  });

  it('adds a user through a CSR and kubectl certificate approve', async () => {
    const name = `carol-${tag}`;
    const keys = await generateKeyPair();
    const csrPem = createCsr(
      { commonName: name, organizations: ['team-leads'] },
      keys.publicKey,
      keys.privateKey,
    );
    const file = join(server.dataDir, `${name}-csr.yaml`);
    await writeFile(
      file,
      JSON.stringify({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name },
        spec: {
          request: Buffer.from(csrPem).toString('base64'),
          signerName: 'kubernetes.io/kube-apiserver-client',
          expirationSeconds: 86400,
          usages: ['client auth'],
        },
      }),
    );
    const admin = server.kubeconfigPath;
    let r = await runKubectl(v, ['create', '-f', file], admin);
    expect(r.code, r.stderr).toBe(0);
    // Without the approve verb on the signer, alice cannot approve it.
    const notAllowed = await runKubectl(v, ['certificate', 'approve', name], aliceConfig);
    expect(notAllowed.code).not.toBe(0);
    r = await runKubectl(v, ['certificate', 'approve', name], admin);
    expect(r.code, r.stderr).toBe(0);
    let cert = '';
    for (let i = 0; i < 100 && cert === ''; i++) {
      const got = await runKubectl(v, ['get', 'csr', name, '-o', 'jsonpath={.status.certificate}'], admin);
      cert = got.stdout.trim();
      if (cert === '') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(cert).not.toBe('');
    const shown = await runKubectl(v, ['get', 'csr', name], admin);
    expect(shown.stdout).toContain('Approved,Issued');
    const config = await kubeconfigFor(
      name,
      Buffer.from(cert, 'base64').toString('utf8'),
      privateKeyPem(keys.privateKey),
    );
    r = await runKubectl(
      v,
      ['create', 'rolebinding', `leads-${tag}`, '--clusterrole=view', '--group=team-leads', '-n', 'team'],
      admin,
    );
    expect(r.code, r.stderr).toBe(0);
    await eventually(v, ['auth', 'can-i', 'list', 'deployments.apps', '-n', 'team'], config, 'yes');
    const pods = await runKubectl(v, ['get', 'pods', '-n', 'team'], config);
    expect(pods.code, pods.stderr).toBe(0);
  });
});
