/**
 * `certificatesigningrequests/approval` serves GET, PUT and PATCH as kube-apiserver does (the
 * conformance spec "should support CSR API operations" gets and merge-patches it): a patch
 * changes the conditions and keeps the request's annotations; nothing else of the object moves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCsr } from '../../src/pki/csr.js';
import { generateKeyPair } from '../../src/pki/certificate.js';
import { adminFetch, adminTls, type AdminTls } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let tls: AdminTls;
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';

beforeAll(async () => {
  server = await startTestServer();
  tls = adminTls(server.kubeconfigPath);
  const keys = await generateKeyPair();
  const pem = createCsr({ commonName: 'approval-test' }, keys.publicKey, keys.privateKey);
  const res = await adminFetch(`${server.url}${CSRS}`, tls, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name: 'approval-test' },
      spec: {
        request: Buffer.from(pem).toString('base64'),
        signerName: 'example.com/signer',
        usages: ['client auth'],
      },
    }),
  });
  expect(res.status, res.body).toBe(201);
});

afterAll(async () => server.close());

describe('the approval subresource', () => {
  it('answers GET with the request itself', async () => {
    const res = await adminFetch(`${server.url}${CSRS}/approval-test/approval`, tls);
    expect(res.status, res.body).toBe(200);
    const body = JSON.parse(res.body) as { kind: string; metadata: { name: string; uid: string } };
    expect(body.kind).toBe('CertificateSigningRequest');
    expect(body.metadata.name).toBe('approval-test');
  });

  it('merge-patches the conditions and keeps the annotations, as kube’s approval strategy', async () => {
    const res = await adminFetch(`${server.url}${CSRS}/approval-test/approval`, tls, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({
        metadata: { annotations: { patchedapproval: 'true' } },
        spec: { signerName: 'example.com/other' },
        status: { conditions: [{ type: 'ApprovalPatch', status: 'True', reason: 'e2e' }] },
      }),
    });
    expect(res.status, res.body).toBe(200);
    const body = JSON.parse(res.body) as {
      metadata: { annotations?: Record<string, string> };
      spec: { signerName: string };
      status: { conditions: { type: string; lastUpdateTime?: string }[] };
    };
    expect(body.metadata.annotations).toEqual({ patchedapproval: 'true' });
    expect(body.spec.signerName).toBe('example.com/signer');
    expect(body.status.conditions.map((c) => c.type)).toEqual(['ApprovalPatch']);
    expect(body.status.conditions[0]?.lastUpdateTime).toEqual(expect.any(String));
  });
});
