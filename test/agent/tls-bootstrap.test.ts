/**
 * TLS bootstrap on a real node: the server authenticates bootstrap tokens, authorizes with
 * Node,RBAC and runs the csrapproving and csrsigning controllers; kubeadm's bindings let the
 * token's group ask for node client certificates and have them approved. The agent starts with
 * only `--bootstrap-kubeconfig` (the token) and a `--kubeconfig` path that does not exist yet:
 * - it asks for its certificate with kube's CSR (signer, usages, `system:node:<name>` in
 *   `system:nodes`), which is approved and signed by the cluster CA;
 * - it writes the certificate and key under `--cert-dir` as kubelet does
 *   (`kubelet-client-<time>.pem`, mode 0600, and the `kubelet-client-current.pem` symlink), and a
 *   kubeconfig naming that symlink;
 * - with that identity it registers its Node and runs a pod;
 * - a second bootstrap with a usable kubeconfig asks for nothing.
 */
import { X509Certificate } from 'node:crypto';
import { lstat, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapClientCertificate, KUBELET_CLIENT_SIGNER } from '../../src/agent/tls-bootstrap.js';
import type { CertificateSigningRequest } from '../../src/api/types/certificates-v1.js';
import type { SelfSubjectReview } from '../../src/api/types/authentication-v1.js';
import {
  CLUSTER_ROLE_BINDINGS,
  Client,
  SECRETS,
  SELF_SUBJECT_REVIEWS,
  loadKubeconfig,
} from '../../src/client/index.js';
import { startAgentNode, type AgentNode } from '../support/agent-node.js';
import { requireContainerd } from '../support/containerd.js';

const enabled = requireContainerd();
const NODE = 'tls-node-1';
const TOKEN_ID = 'tlsnod';
const TOKEN_SECRET = 'abcdef0123456789';
const GROUP = 'system:bootstrappers:kubeadm:default-node-token';

describe.runIf(enabled)('TLS bootstrap of the agent', () => {
  let node: AgentNode;
  let kubeconfig: string;
  let certDir: string;
  let bootstrapKubeconfig: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    node = await startAgentNode({
      node: NODE,
      podCIDR: '10.244.173.0/24',
      serverArgs: ['--authorization-mode=Node,RBAC', '--enable-bootstrap-token-auth'],
      controllers: ['csrapproving', 'csrsigning'],
      async prepare(server, dir) {
        const admin = new Client({ ...loadKubeconfig(server.kubeconfigPath), qps: -1 });
        clients.push(admin);
        const b64 = (s: string): string => Buffer.from(s).toString('base64');
        await admin.resource(SECRETS).create({
          metadata: { name: `bootstrap-token-${TOKEN_ID}`, namespace: 'kube-system' },
          type: 'bootstrap.kubernetes.io/token',
          data: {
            'token-id': b64(TOKEN_ID),
            'token-secret': b64(TOKEN_SECRET),
            'usage-bootstrap-authentication': b64('true'),
            'auth-extra-groups': b64(GROUP),
          },
        } as never);
        for (const [name, role] of [
          ['kubeadm:kubelet-bootstrap', 'system:node-bootstrapper'],
          [
            'kubeadm:node-autoapprove-bootstrap',
            'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
          ],
        ] as const) {
          await admin.resource(CLUSTER_ROLE_BINDINGS).create({
            metadata: { name },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: GROUP }],
          } as never);
        }
        const ca = (await readFile(join(server.certDir, 'ca.crt'), 'utf8')).toString();
        bootstrapKubeconfig = join(dir, 'bootstrap-kubeconfig');
        await writeFile(
          bootstrapKubeconfig,
          [
            'apiVersion: v1',
            'kind: Config',
            'clusters:',
            `- name: c\n  cluster:\n    server: ${loadKubeconfig(server.kubeconfigPath).server}`,
            `    certificate-authority-data: ${Buffer.from(ca).toString('base64')}`,
            `users:\n- name: u\n  user:\n    token: ${TOKEN_ID}.${TOKEN_SECRET}`,
            'contexts:\n- name: x\n  context: {cluster: c, user: u}',
            'current-context: x',
            '',
          ].join('\n'),
        );
        kubeconfig = join(dir, 'kubelet.conf');
        certDir = join(dir, 'pki');
        return [
          `--kubeconfig=${kubeconfig}`,
          `--bootstrap-kubeconfig=${bootstrapKubeconfig}`,
          `--cert-dir=${certDir}`,
        ];
      },
    });
  }, 180_000);

  afterAll(async () => {
    for (const c of clients) await c.close();
    await node?.stop();
  }, 120_000);

  it('requests its client certificate with kube’s CSR and has it approved and signed', async () => {
    const csrs = await node.kubectl('get', 'csr', '-o', 'json');
    const items = (JSON.parse(csrs) as { items: CertificateSigningRequest[] }).items;
    expect(items).toHaveLength(1);
    const csr = items[0];
    expect(csr?.metadata.name).toMatch(/^node-csr-[A-Za-z0-9_-]+$/);
    expect(csr?.spec?.signerName).toBe(KUBELET_CLIENT_SIGNER);
    expect(csr?.spec?.usages).toEqual(['digital signature', 'client auth']);
    expect(csr?.spec?.username).toBe(`system:bootstrap:${TOKEN_ID}`);
    expect(csr?.status?.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['Approved', 'True', 'AutoApproved'],
    ]);
  });

  it('writes the certificate under --cert-dir as kubelet does, and a kubeconfig naming it', async () => {
    const current = join(certDir, 'kubelet-client-current.pem');
    expect((await lstat(current)).isSymbolicLink()).toBe(true);
    const target = await readlink(current);
    expect(basename(target)).toMatch(/^kubelet-client-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d\.pem$/);
    expect((await stat(target)).mode & 0o777).toBe(0o600);
    const pem = await readFile(current, 'utf8');
    expect(pem).toContain('-----BEGIN CERTIFICATE-----');
    expect(pem).toContain('PRIVATE KEY-----');
    const cert = new X509Certificate(pem);
    expect(cert.subject).toContain(`CN=system:node:${NODE}`);
    expect(cert.subject).toContain('O=system:nodes');
    const ca = new X509Certificate(await readFile(join(node.server.certDir, 'ca.crt'), 'utf8'));
    expect(cert.verify(ca.publicKey)).toBe(true);
    const text = await readFile(kubeconfig, 'utf8');
    expect(text).toContain(`client-certificate: ${JSON.stringify(current)}`);
    expect(text).toContain(`client-key: ${JSON.stringify(current)}`);
    // The kubeconfig authenticates as the node.
    const asNode = new Client({ ...loadKubeconfig(kubeconfig), qps: -1 });
    clients.push(asNode);
    const review = await asNode.resource<SelfSubjectReview>(SELF_SUBJECT_REVIEWS).create({ metadata: {} });
    expect(review.status?.userInfo?.username).toBe(`system:node:${NODE}`);
  });

  it('registers its Node and runs a pod with its own identity', async () => {
    expect(node.agent.config.kubeconfig).toBe(kubeconfig);
    const managers = await node.kubectl(
      'get',
      'node',
      NODE,
      '-o',
      'jsonpath={.metadata.managedFields[*].manager}',
    );
    expect(managers).toContain('capstan-agent');
    await node.applyPod('hello', { command: ['sleep', '3600'] });
    await node.running('hello');
  }, 90_000);

  it('asks for nothing when the kubeconfig is usable', async () => {
    await bootstrapClientCertificate({
      kubeconfig,
      bootstrapKubeconfig,
      certDir,
      nodeName: NODE,
      timeoutMs: 1000,
    });
    const csrs = await node.kubectl('get', 'csr', '-o', 'jsonpath={.items[*].metadata.name}');
    expect(csrs.split(' ').filter(Boolean)).toHaveLength(1);
  });
});
