/**
 * The CSR approving controller against a real server: kubelet client requests are approved
 * after a SubjectAccessReview (`nodeclient` for another requester, `selfnodeclient` for the
 * node itself, with kube's messages); requests with the wrong subject, another signer, or a
 * requester without the permission are left alone without breaking the controller.
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
 * A request as kube-apiserver stores it: it records the requester in spec.username and
 * spec.groups. Capstan's server does not fill them in yet, so the test does.
 */
function body(
  name: string,
  req: string,
  requester: { username: string; groups: string[] },
  signerName = 'kubernetes.io/kube-apiserver-client-kubelet',
): CertificateSigningRequest {
  return {
    metadata: { name },
    spec: { request: req, signerName, usages: ['digital signature', 'client auth'], ...requester },
  };
}

const ADMIN = { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] };
const NODE2 = { username: 'system:node:n2', groups: ['system:nodes', 'system:authenticated'] };
const NOBODY = { username: 'mallory', groups: ['system:authenticated'] };

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
  for (const role of [
    'system:node-bootstrapper',
    'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
  ]) {
    await bindings.create({
      metadata: { name: `nodes-${role.replace(/:/g, '-')}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:nodes' }],
    } as never);
  }
}, 60_000);
afterAll(async () => env?.close());

describe('csrapproving', () => {
  it('approves a kubelet client request from an authorized requester (nodeclient)', async () => {
    await csrs.create(body('by-admin', await request('system:node:n1', ['system:nodes']), ADMIN));
    const cond = await approval('by-admin');
    expect(cond).toMatchObject({
      status: 'True',
      reason: 'AutoApproved',
      message: 'Auto approving kubelet client certificate after SubjectAccessReview.',
    });
  });

  it("approves a node's own request (selfnodeclient)", async () => {
    const tls = await userTls(env.server, 'system:node:n2', ['system:nodes']);
    const res = await adminJson(
      `${env.server.url}/apis/certificates.k8s.io/v1/certificatesigningrequests`,
      tls,
      'POST',
      body('by-node', await request('system:node:n2', ['system:nodes']), NODE2),
    );
    expect(res.status).toBe(201);
    const cond = await approval('by-node');
    expect(cond).toMatchObject({
      reason: 'AutoApproved',
      message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    });
    const k = await env.kubectl('get', 'csr', 'by-node', '-o', 'jsonpath={.status.conditions[0].type}');
    expect(k.stdout).toBe('Approved');
  });

  it('leaves other subjects, other signers and unauthorized requesters alone', async () => {
    await csrs.create(body('wrong-org', await request('system:node:n3', ['other']), ADMIN));
    await csrs.create(
      body('other-signer', await request('alice', ['team']), ADMIN, 'kubernetes.io/kube-apiserver-client'),
    );
    // A later good request is approved: the controller got past the others.
    await csrs.create(body('unauthorized', await request('system:node:n5', ['system:nodes']), NOBODY));
    await csrs.create(body('after', await request('system:node:n4', ['system:nodes']), ADMIN));
    await approval('after');
    for (const name of ['wrong-org', 'other-signer', 'unauthorized']) {
      const c = await csrs.get(name);
      expect(c.status?.conditions ?? [], name).toEqual([]);
    }
    expect(env.errors).toEqual([]);
  });
});
