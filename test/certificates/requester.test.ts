/**
 * The server records who creates a CertificateSigningRequest (kube's CSR strategy): username,
 * uid, groups and extra of the requester replace whatever the body claims, through storage
 * (protobuf by default) and back; an update cannot change them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateSigningRequest } from '../../src/api/types/certificates-v1.js';
import type { ServiceAccount } from '../../src/api/types/core-v1.js';
import type { TokenRequest } from '../../src/api/types/authentication-v1.js';
import {
  CERTIFICATE_SIGNING_REQUESTS,
  Client,
  SERVICE_ACCOUNTS,
  loadKubeconfig,
  type ClientConfig,
} from '../../src/client/index.js';
import { generateKeyPair } from '../../src/pki/certificate.js';
import { createCsr } from '../../src/pki/csr.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let admin: ClientConfig;
const clients: Client[] = [];

function client(config: ClientConfig): Client {
  const c = new Client({ ...config, qps: -1 });
  clients.push(c);
  return c;
}

async function body(name: string): Promise<CertificateSigningRequest> {
  const keys = await generateKeyPair();
  const pem = createCsr({ commonName: name }, keys.publicKey, keys.privateKey);
  return {
    metadata: { name },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      signerName: 'example.com/signer',
      usages: ['client auth'],
      username: 'someone-else',
      uid: 'forged',
      groups: ['system:masters'],
      // ExtraValue is a list of strings on the wire (the generated shape calls it an object).
      extra: { forged: ['yes'] } as never,
    },
  };
}

beforeAll(async () => {
  server = await startTestServer();
  admin = loadKubeconfig(server.kubeconfigPath);
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close();
  await server?.close();
});

describe('the requester of a CertificateSigningRequest', () => {
  it('is the authenticated user, whatever the body says (a client certificate)', async () => {
    const csrs = client(admin).resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS);
    const created = await csrs.create(await body('by-admin'));
    const read = await csrs.get('by-admin');
    for (const c of [created, read]) {
      expect(c.spec?.username).toBe('system:admin');
      expect(c.spec?.groups).toEqual(['system:masters', 'system:authenticated']);
      expect(c.spec?.uid).toBeUndefined();
      // kube 1.33 gives certificate users the certificate's credential id as extra.
      const extra = c.spec?.extra as Record<string, string[]> | undefined;
      expect(Object.keys(extra ?? {})).toEqual(['authentication.kubernetes.io/credential-id']);
      expect(extra?.['authentication.kubernetes.io/credential-id']?.[0]).toMatch(/^X509SHA256=/);
    }
    // The spec never changes after create.
    const updated = await csrs.update({
      ...read,
      spec: { ...read.spec, request: read.spec?.request ?? '', username: 'x' },
    });
    expect(updated.spec?.username).toBe('system:admin');
  });

  it('records a service account with its uid and extra (a bound token)', async () => {
    const adminClient = client(admin);
    const sa = await adminClient
      .resource<ServiceAccount>(SERVICE_ACCOUNTS)
      .create({ metadata: { name: 'requester', namespace: 'default' } });
    const token = await adminClient
      .resource<ServiceAccount>(SERVICE_ACCOUNTS)
      .createSubresource<TokenRequest>(
        'requester',
        'token',
        { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: [] } },
        { namespace: 'default' },
      );
    const asSa = client({
      server: admin.server,
      ...(admin.caData === undefined ? {} : { caData: admin.caData }),
      token: token.status?.token ?? '',
    });
    const created = await asSa
      .resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS)
      .create(await body('by-sa'));
    const read = await adminClient
      .resource<CertificateSigningRequest>(CERTIFICATE_SIGNING_REQUESTS)
      .get('by-sa');
    for (const c of [created, read]) {
      expect(c.spec?.username).toBe('system:serviceaccount:default:requester');
      expect(c.spec?.uid).toBe(sa.metadata.uid);
      expect(c.spec?.groups).toEqual([
        'system:serviceaccounts',
        'system:serviceaccounts:default',
        'system:authenticated',
      ]);
      expect(Object.keys(c.spec?.extra ?? {})).toContain('authentication.kubernetes.io/credential-id');
      expect(c.spec?.extra?.['forged']).toBeUndefined();
    }
  });
});
