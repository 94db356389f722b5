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
 * - a second bootstrap with a usable kubeconfig asks for nothing;
 * - with `--rotate-server-certificates` it asks for a `kubernetes.io/kubelet-serving` certificate
 *   naming its addresses, serves nothing until an admin approves it (kube never auto-approves
 *   serving requests), then serves with it;
 * - with `--rotate-certificates`, a client certificate near its end (a 30 s one, minted by the
 *   test) is renewed through a new request at 70–90 % of its lifetime, auto-approved for the
 *   node itself (kubeadm's `selfnodeclient` binding); the symlink is swapped and the agent keeps
 *   working once the old certificate has expired, with no restart;
 * - a client certificate that ran out while the agent ran (its renewals denied) is requested
 *   again with the bootstrap token, as kubelet's certificate manager does, with no restart.
 */
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { lstat, readdir, readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { connect } from 'node:tls';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBELET_SERVING_SIGNER, SERVING_USAGES } from '../../src/agent/cert-manager.js';
import { storePair } from '../../src/agent/cert-store.js';
import { bootstrapClientCertificate, KUBELET_CLIENT_SIGNER } from '../../src/agent/tls-bootstrap.js';
import type { Lease } from '../../src/api/types/coordination-v1.js';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../../src/pki/certificate.js';
import { parseCsr } from '../../src/pki/csr.js';
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
        for (const [name, role, group] of [
          ['kubeadm:kubelet-bootstrap', 'system:node-bootstrapper', GROUP],
          [
            'kubeadm:node-autoapprove-bootstrap',
            'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
            GROUP,
          ],
          [
            'kubeadm:node-autoapprove-certificate-rotation',
            'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
            'system:nodes',
          ],
        ] as const) {
          await admin.resource(CLUSTER_ROLE_BINDINGS).create({
            metadata: { name },
            roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
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
          '--rotate-certificates',
          '--rotate-server-certificates',
        ];
      },
    });
  }, 180_000);

  afterAll(async () => {
    for (const c of clients) await c.close();
    await node?.stop();
  }, 120_000);

  const csrsOf = async (signer: string): Promise<CertificateSigningRequest[]> => {
    const list = JSON.parse(await node.kubectl('get', 'csr', '-o', 'json')) as {
      items: CertificateSigningRequest[];
    };
    return list.items.filter((c) => c.spec?.signerName === signer);
  };

  it('requests its client certificate with kube’s CSR and has it approved and signed', async () => {
    const items = await csrsOf(KUBELET_CLIENT_SIGNER);
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
    expect(await csrsOf(KUBELET_CLIENT_SIGNER)).toHaveLength(1);
  });

  /** The certificate the agent's server presents; undefined while the handshake fails. */
  const servedCertificate = (): Promise<X509Certificate | undefined> =>
    new Promise((resolve) => {
      const socket = connect({ host: '127.0.0.1', port: node.agent.port, rejectUnauthorized: false });
      socket.once('secureConnect', () => {
        const raw = socket.getPeerCertificate().raw;
        socket.destroy();
        resolve(new X509Certificate(raw));
      });
      socket.once('error', () => resolve(undefined));
    });

  it('requests a kubelet-serving certificate and serves with it once an admin approves it', async () => {
    const [csr] = await csrsOf(KUBELET_SERVING_SIGNER);
    expect(csr?.metadata.generateName).toBe('csr-');
    expect(csr?.spec?.username).toBe(`system:node:${NODE}`);
    expect(csr?.spec?.usages).toEqual(SERVING_USAGES);
    const request = parseCsr(Buffer.from(csr?.spec?.request ?? '', 'base64').toString('utf8'));
    expect(request.subject).toEqual({ commonName: `system:node:${NODE}`, organizations: ['system:nodes'] });
    expect(request.dnsNames).toEqual([NODE]);
    expect(request.ipAddresses).toEqual(['127.0.0.1']);
    // kube's csrapproving never approves serving requests: no certificate, no TLS yet.
    expect(csr?.status?.conditions ?? []).toEqual([]);
    expect(await servedCertificate()).toBeUndefined();
    await node.kubectl('certificate', 'approve', csr?.metadata.name ?? '');
    const ca = new X509Certificate(await readFile(join(node.server.certDir, 'ca.crt'), 'utf8'));
    let served: X509Certificate | undefined;
    for (let i = 0; i < 60 && !served?.verify(ca.publicKey); i++) {
      await new Promise((r) => setTimeout(r, 250));
      served = await servedCertificate();
    }
    expect(served?.verify(ca.publicKey)).toBe(true);
    expect(served?.subject).toContain(`CN=system:node:${NODE}`);
    expect(served?.subjectAltName).toBe(`DNS:${NODE}, IP Address:127.0.0.1`);
    expect((await lstat(join(certDir, 'kubelet-server-current.pem'))).isSymbolicLink()).toBe(true);
  }, 30_000);

  /**
   * Makes the agent's client certificate one from the cluster CA valid from 5 s ago until
   * `validMs` from now, and restarts the agent onto it; returns it and the symlink's target.
   */
  const restartOnShortClientCertificate = async (
    validMs: number,
  ): Promise<{ short: X509Certificate; shortTarget: string }> => {
    const caPem = await readFile(join(node.server.certDir, 'ca.crt'), 'utf8');
    const caKey = createPrivateKey(await readFile(join(node.server.certDir, 'ca.key'), 'utf8'));
    const key = await generateKeyPair();
    const now = Date.now();
    const shortPem = issueCertificate({
      subject: { commonName: `system:node:${NODE}`, organizations: ['system:nodes'] },
      publicKey: key.publicKey,
      issuer: {
        subjectDer: subjectDerOf(new X509Certificate(caPem).raw),
        privateKey: caKey,
        publicKey: createPublicKey(caKey),
      },
      usage: 'client',
      notBefore: new Date(now - 5_000),
      notAfter: new Date(now + validMs),
    });
    await storePair(certDir, 'kubelet-client', shortPem, privateKeyPem(key.privateKey));
    const shortTarget = await readlink(join(certDir, 'kubelet-client-current.pem'));
    await node.restartAgent();
    return { short: new X509Certificate(shortPem), shortTarget };
  };

  /** Waits until the Lease of the node is renewed after `after` (ms since the epoch). */
  const leaseRenewedAfter = async (after: number): Promise<number> => {
    let renewTime = 0;
    while (renewTime <= after && Date.now() < after + 30_000) {
      await new Promise((r) => setTimeout(r, 1_000));
      const lease = JSON.parse(
        await node.kubectl('get', 'lease', '-n', 'kube-node-lease', NODE, '-o', 'json'),
      ) as Lease;
      renewTime = Date.parse(lease.spec?.renewTime ?? '');
    }
    return renewTime;
  };

  it('renews a client certificate near its end through a new CSR, without a restart', async () => {
    // A 30 s client certificate for the node, from the cluster CA; the agent restarts onto it.
    const { short, shortTarget } = await restartOnShortClientCertificate(25_000);
    // Due at 70-90 % of its lifetime from NotBefore, then a request and its approval. X.509 times
    // have whole seconds, so the bound comes from the certificate's own dates, not the clock.
    const notBefore = Date.parse(short.validFrom);
    const earliest = notBefore + 0.7 * (Date.parse(short.validTo) - notBefore);
    const deadline = Date.now() + 45_000;
    let renewed: CertificateSigningRequest | undefined;
    while (!renewed?.status?.certificate && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      renewed = (await csrsOf(KUBELET_CLIENT_SIGNER)).find((c) => c.metadata.generateName === 'csr-');
    }
    // The request was made no earlier than due (creationTimestamp has whole seconds too).
    const requested = Date.parse(renewed?.metadata.creationTimestamp ?? '');
    expect(requested).toBeGreaterThanOrEqual(Math.floor(earliest / 1_000) * 1_000);
    expect(renewed?.spec?.username).toBe(`system:node:${NODE}`);
    expect(renewed?.spec?.usages).toEqual(['digital signature', 'client auth']);
    expect(renewed?.status?.conditions?.map((c) => [c.type, c.reason])).toEqual([
      ['Approved', 'AutoApproved'],
    ]);
    // The symlink moves to the new pair; the old pair stays, as kubelet leaves it.
    let target = shortTarget;
    while (target === shortTarget && Date.now() < deadline + 5_000) {
      await new Promise((r) => setTimeout(r, 200));
      target = await readlink(join(certDir, 'kubelet-client-current.pem'));
    }
    expect(target).not.toBe(shortTarget);
    const files = await readdir(certDir);
    expect(files).toContain(basename(shortTarget));
    const current = new X509Certificate(await readFile(join(certDir, 'kubelet-client-current.pem'), 'utf8'));
    expect(current.serialNumber).not.toBe(short.serialNumber);
    expect(current.subject).toContain(`CN=system:node:${NODE}`);
    expect(Date.parse(current.validTo) - Date.now()).toBeGreaterThan(300 * 24 * 3600 * 1000);
    // Once the short certificate has expired, the same agent still renews its Lease.
    const expired = Date.parse(short.validTo);
    await new Promise((r) => setTimeout(r, Math.max(0, expired - Date.now()) + 1_000));
    expect(await leaseRenewedAfter(expired)).toBeGreaterThan(expired);
  }, 120_000);

  it('once its client certificate has expired, asks again with the bootstrap token, without a restart', async () => {
    // Every renewal the node asks for with its own (still valid) certificate is denied, so the
    // certificate runs out; kubelet's certificate manager then asks with the bootstrap
    // credentials, which kubeadm's nodeclient binding has approved.
    await node.kubectl('delete', 'clusterrolebinding', 'kubeadm:node-autoapprove-certificate-rotation');
    const { short, shortTarget } = await restartOnShortClientCertificate(15_000);
    const expired = Date.parse(short.validTo);
    const denied = new Set<string>();
    const deadline = expired + 60_000;
    let renewed: CertificateSigningRequest | undefined;
    while (!renewed?.status?.certificate && Date.now() < deadline) {
      for (const csr of await csrsOf(KUBELET_CLIENT_SIGNER)) {
        const name = csr.metadata.name ?? '';
        if (csr.metadata.generateName !== 'csr-' || (csr.status?.conditions ?? []).length > 0) continue;
        if (csr.spec?.username === `system:node:${NODE}`) {
          await node.kubectl('certificate', 'deny', name);
          denied.add(name);
        }
      }
      renewed = (await csrsOf(KUBELET_CLIENT_SIGNER)).find(
        (c) => c.metadata.generateName === 'csr-' && c.spec?.username === `system:bootstrap:${TOKEN_ID}`,
      );
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(denied.size).toBeGreaterThan(0);
    expect(renewed?.status?.conditions?.map((c) => [c.type, c.reason])).toEqual([
      ['Approved', 'AutoApproved'],
    ]);
    // Asked for only once the certificate in use had expired.
    expect(Date.parse(renewed?.metadata.creationTimestamp ?? '')).toBeGreaterThanOrEqual(expired - 1_000);
    let target = shortTarget;
    while (target === shortTarget && Date.now() < deadline + 5_000) {
      await new Promise((r) => setTimeout(r, 200));
      target = await readlink(join(certDir, 'kubelet-client-current.pem'));
    }
    const current = new X509Certificate(await readFile(join(certDir, 'kubelet-client-current.pem'), 'utf8'));
    expect(current.serialNumber).not.toBe(short.serialNumber);
    expect(current.subject).toContain(`CN=system:node:${NODE}`);
    // The agent works again with the new certificate: its Lease is renewed.
    const issued = Date.now();
    expect(await leaseRenewedAfter(issued)).toBeGreaterThan(issued);
  }, 150_000);
});
