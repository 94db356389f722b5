/**
 * A node joins with a bootstrap token, end to end, as kubeadm sets it up: `capstan server` runs
 * the CSR approver and signer in its in-process controller manager (the signer holding the
 * server's cluster CA). A client authenticated by the token (`system:bootstrap:<id>`, groups
 * `system:bootstrappers` and the token's extra group) creates a kubelet client request for
 * `system:node:<name>`; the server records the requester, the approver approves it after a
 * SubjectAccessReview (kube's reason and message), the signer issues a certificate that
 * verifies against the cluster CA, and that certificate authenticates as the node.
 */
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateSigningRequest } from '../../src/api/types/certificates-v1.js';
import type { SelfSubjectReview } from '../../src/api/types/authentication-v1.js';
import {
  CERTIFICATE_SIGNING_REQUESTS,
  CLUSTER_ROLE_BINDINGS,
  Client,
  SECRETS,
  SELF_SUBJECT_REVIEWS,
  loadKubeconfig,
  type ClientConfig,
} from '../../src/client/index.js';
import { generateKeyPair, privateKeyPem } from '../../src/pki/certificate.js';
import { createCsr } from '../../src/pki/csr.js';
import { kubectlPath, runKubectl, startTestServer, type TestServer } from '../support/server.js';
import { waitReady } from '../support/users.js';
import { until } from './infra-env.js';

const TOKEN_ID = 'abcdef';
const TOKEN_SECRET = '0123456789abcdef';
const EXTRA_GROUP = 'system:bootstrappers:kubeadm:default-node-token';
const YEAR_MS = 365 * 24 * 3600 * 1000;

let server: TestServer;
let admin: ClientConfig;
let adminClient: Client;
const clients: Client[] = [];

function clientOf(config: ClientConfig): Client {
  const c = new Client({ ...config, qps: -1 });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  expect(kubectlPath('1.33'), 'kubectl 1.33 is required').toBeDefined();
  server = await startTestServer({
    args: ['--authorization-mode=Node,RBAC', '--enable-bootstrap-token-auth'],
    controllers: ['csrapproving', 'csrsigning'],
  });
  await waitReady(server);
  admin = loadKubeconfig(server.kubeconfigPath);
  adminClient = clientOf(admin);
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  await adminClient.resource(SECRETS).create({
    metadata: { name: `bootstrap-token-${TOKEN_ID}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: {
      'token-id': b64(TOKEN_ID),
      'token-secret': b64(TOKEN_SECRET),
      'usage-bootstrap-authentication': b64('true'),
      'auth-extra-groups': b64(EXTRA_GROUP),
      expiration: b64(new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z')),
    },
  } as never);
  // kubeadm's bindings: bootstrappers may ask for node certificates and have them approved.
  const bindings = adminClient.resource(CLUSTER_ROLE_BINDINGS);
  for (const [name, role] of [
    ['kubeadm:kubelet-bootstrap', 'system:node-bootstrapper'],
    [
      'kubeadm:node-autoapprove-bootstrap',
      'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    ],
  ] as const) {
    await bindings.create({
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: EXTRA_GROUP }],
    } as never);
  }
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.close();
  await server?.close();
});

describe('a node joining with a bootstrap token', () => {
  it('gets its kubelet client certificate approved, signed by the cluster CA, and authenticates with it', async () => {
    const bootstrap = clientOf({
      server: admin.server,
      ...(admin.caData === undefined ? {} : { caData: admin.caData }),
      token: `${TOKEN_ID}.${TOKEN_SECRET}`,
    });
    const keys = await generateKeyPair();
    const request = createCsr(
      { commonName: 'system:node:worker-1', organizations: ['system:nodes'] },
      keys.publicKey,
      keys.privateKey,
    );
    const csrs = bootstrap.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
    const created = await csrs.create({
      metadata: { generateName: 'node-csr-' },
      spec: {
        request: Buffer.from(request).toString('base64'),
        signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
        usages: ['digital signature', 'client auth'],
        // What a client claims is replaced by who it is.
        username: 'system:node:worker-1',
      },
    });
    const name = created.metadata.name ?? '';
    expect(created.spec?.username).toBe(`system:bootstrap:${TOKEN_ID}`);
    expect(created.spec?.groups).toEqual(['system:bootstrappers', EXTRA_GROUP, 'system:authenticated']);

    const reader = adminClient.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
    const signed = await until('the certificate', async () => {
      const c = await reader.get(name);
      return (c.status?.certificate ?? '') === '' ? undefined : c;
    });
    expect(signed.status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Approved',
        status: 'True',
        reason: 'AutoApproved',
        message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
      }),
    ]);

    const certPem = Buffer.from(signed.status?.certificate ?? '', 'base64').toString('utf8');
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(await readFile(join(server.certDir, 'ca.crt'), 'utf8'));
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.subject).toContain('CN=system:node:worker-1');
    expect(cert.subject).toContain('O=system:nodes');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    // kube's --cluster-signing-duration default (8760h), counted from the 5-minute backdate.
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(YEAR_MS);
    expect(Date.parse(cert.validFrom)).toBeLessThan(Date.now() - 4 * 60_000);

    const node = clientOf({
      server: admin.server,
      ...(admin.caData === undefined ? {} : { caData: admin.caData }),
      certData: Buffer.from(certPem),
      keyData: Buffer.from(privateKeyPem(keys.privateKey)),
    });
    const review = await node.resource<SelfSubjectReview>(SELF_SUBJECT_REVIEWS).create({ metadata: {} });
    expect(review.status?.userInfo?.username).toBe('system:node:worker-1');
    expect(review.status?.userInfo?.groups).toContain('system:nodes');

    const shown = await runKubectl('1.33', ['get', 'csr', name, '--no-headers'], server.kubeconfigPath);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`system:bootstrap:${TOKEN_ID}`);
    expect(shown.stdout).toContain('Approved,Issued');
  });
});
