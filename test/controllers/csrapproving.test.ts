/**
 * The CSR approving controller against a real server: kubelet client requests are approved
 * after a SubjectAccessReview of the requester the server recorded (`nodeclient` for another
 * requester, `selfnodeclient` for the node itself, with kube's messages); requests with the
 * wrong subject, subject alternative names, another signer, or a requester without the
 * permission (even one claiming another's name in the body) are left alone without breaking
 * the controller, and approved once the permission is granted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateSigningRequest } from '../../src/api/types/certificates-v1.js';
import {
  CERTIFICATE_SIGNING_REQUESTS,
  CLUSTER_ROLE_BINDINGS,
  type ResourceClient,
} from '../../src/client/index.js';
import { csrApprovingController } from '../../src/controllers/csrapproving/index.js';
import { generateKeyPair } from '../../src/pki/certificate.js';
import { createCsr } from '../../src/pki/csr.js';
import { adminJson } from '../support/server.js';
import { userTls } from '../support/users.js';
import { startInfraEnv, until, type InfraEnv } from './infra-env.js';

let env: InfraEnv;
let csrs: ResourceClient<CertificateSigningRequest>;

async function request(commonName: string, organizations: string[]): Promise<string> {
  const { publicKey, privateKey } = await generateKeyPair();
  return Buffer.from(createCsr({ commonName, organizations }, publicKey, privateKey)).toString('base64');
}

/**
 * A request body. The server records its creator in spec.username and spec.groups (kube's CSR
 * strategy), whatever the body says: the requester is who sends it.
 */
function body(
  name: string,
  req: string,
  signerName = 'kubernetes.io/kube-apiserver-client-kubelet',
): CertificateSigningRequest {
  return {
    metadata: { name },
    spec: { request: req, signerName, usages: ['digital signature', 'client auth'] },
  };
}

/** Creates `csr` as `user` in `groups` (a client certificate from the cluster CA). */
async function createAs(user: string, groups: string[], csr: CertificateSigningRequest): Promise<void> {
  const tls = await userTls(env.server, user, groups);
  const res = await adminJson(
    `${env.server.url}/apis/certificates.k8s.io/v1/certificatesigningrequests`,
    tls,
    'POST',
    csr,
  );
  expect(res.status, res.text).toBe(201);
}

async function approval(name: string) {
  return until(`${name} approved`, async () => {
    const c = await csrs.get(name);
    return c.status?.conditions?.find((x) => x.type === 'Approved');
  });
}

beforeAll(async () => {
  // RBAC, so SubjectAccessReviews answer as in a real cluster.
  env = await startInfraEnv([csrApprovingController], [], ['--authorization-mode=Node,RBAC']);
  csrs = env.client.resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
  const bindings = env.client.resource(CLUSTER_ROLE_BINDINGS);
  const bind = async (role: string, group: string): Promise<void> => {
    await bindings.create({
      metadata: { name: `${group}-${role}`.replace(/:/g, '-') },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
    } as never);
  };
  // Everyone may ask for a certificate; nodes may have their own approved, operators any node's.
  await bind('system:node-bootstrapper', 'system:authenticated');
  await bind('system:certificates.k8s.io:certificatesigningrequests:selfnodeclient', 'system:nodes');
  await bind('system:certificates.k8s.io:certificatesigningrequests:nodeclient', 'operators');
}, 60_000);
afterAll(async () => env?.close());

describe('csrapproving', () => {
  it('approves a kubelet client request from an authorized requester (nodeclient)', async () => {
    await createAs(
      'olga',
      ['operators'],
      body('by-operator', await request('system:node:n1', ['system:nodes'])),
    );
    const stored = await csrs.get('by-operator');
    expect(stored.spec?.username).toBe('olga');
    expect(stored.spec?.groups).toEqual(['operators', 'system:authenticated']);
    const cond = await approval('by-operator');
    expect(cond).toMatchObject({
      status: 'True',
      reason: 'AutoApproved',
      message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
    });
  });

  it("approves a node's own request (selfnodeclient)", async () => {
    await createAs(
      'system:node:n2',
      ['system:nodes'],
      body('by-node', await request('system:node:n2', ['system:nodes'])),
    );
    const cond = await approval('by-node');
    expect(cond).toMatchObject({
      reason: 'AutoApproved',
      message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    });
    const k = await env.kubectl('get', 'csr', 'by-node', '-o', 'jsonpath={.status.conditions[0].type}');
    expect(k.stdout).toBe('Approved');
  });

  it('leaves other subjects, other signers, SANs and unauthorized requesters alone', async () => {
    await createAs('olga', ['operators'], body('wrong-org', await request('system:node:n3', ['other'])));
    await createAs(
      'olga',
      ['operators'],
      body('other-signer', await request('alice', ['team']), 'kubernetes.io/kube-apiserver-client'),
    );
    const keys = await generateKeyPair();
    const withSan = createCsr(
      { commonName: 'system:node:n6', organizations: ['system:nodes'] },
      keys.publicKey,
      keys.privateKey,
      {
        dnsNames: ['n6.example'],
      },
    );
    await createAs('olga', ['operators'], body('with-san', Buffer.from(withSan).toString('base64')));
    // A client-sent requester is replaced by who sent it: mallory may not have node requests approved.
    const forged = body('unauthorized', await request('system:node:n5', ['system:nodes']));
    await createAs('mallory', [], {
      ...forged,
      spec: { ...forged.spec, request: forged.spec?.request ?? '', username: 'olga', groups: ['operators'] },
    });
    // A later good request is approved: the controller got past the others.
    await createAs('olga', ['operators'], body('after', await request('system:node:n4', ['system:nodes'])));
    await approval('after');
    expect((await csrs.get('unauthorized')).spec?.username).toBe('mallory');
    for (const name of ['wrong-org', 'other-signer', 'with-san', 'unauthorized']) {
      const c = await csrs.get(name);
      expect(c.status?.conditions ?? [], name).toEqual([]);
    }
    expect(env.errors).toEqual([]);
  });

  it('approves a request once its requester is granted the permission (retried, as kube)', async () => {
    await createAs(
      'late',
      ['late-operators'],
      body('granted-later', await request('system:node:n7', ['system:nodes'])),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect((await csrs.get('granted-later')).status?.conditions ?? []).toEqual([]);
    await env.client.resource(CLUSTER_ROLE_BINDINGS).create({
      metadata: { name: 'late-operators-nodeclient' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'late-operators' }],
    } as never);
    await approval('granted-later');
    expect(env.errors).toEqual([]);
  });
});
