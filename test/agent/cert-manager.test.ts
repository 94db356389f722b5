/**
 * The agent's certificate manager re-requests a certificate that no longer names what it would
 * ask for (client-go's certSatisfiesTemplate): the serving certificate of a node whose addresses
 * changed, found at start or while running. No server: nothing here reaches a request.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import {
  CertificateManager,
  KUBELET_SERVING_SIGNER,
  SERVING_USAGES,
  TEMPLATE_CHECK_MS,
  satisfiesRequest,
} from '../../src/agent/cert-manager.js';
import { storePair } from '../../src/agent/cert-store.js';
import type { Client } from '../../src/client/index.js';
import { generateKeyPair, issueCertificate, privateKeyPem } from '../../src/pki/certificate.js';
import type { RequestedNames } from '../../src/pki/csr.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-cert-manager-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function servingPair(node: string, names: RequestedNames): Promise<{ cert: string; key: string }> {
  const keys = await generateKeyPair();
  const now = Date.now();
  const cert = issueCertificate({
    subject: { commonName: `system:node:${node}`, organizations: ['system:nodes'] },
    publicKey: keys.publicKey,
    selfSigningKey: keys.privateKey,
    usage: 'server',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
    dnsNames: [...(names.dnsNames ?? [])],
    ipAddresses: [...(names.ipAddresses ?? [])],
  });
  return { cert, key: privateKeyPem(keys.privateKey) };
}

it('compares a certificate with the subject and names a request would carry', async () => {
  const { cert } = await servingPair('n1', { dnsNames: ['n1'], ipAddresses: ['10.1.0.5', 'fd00::1'] });
  // Order and IPv6 spelling do not matter.
  expect(
    satisfiesRequest(cert, 'n1', { dnsNames: ['n1'], ipAddresses: ['fd00:0:0:0:0:0:0:1', '10.1.0.5'] }),
  ).toBe(true);
  expect(satisfiesRequest(cert, 'n1', { dnsNames: ['n1'], ipAddresses: ['10.1.0.6', 'fd00::1'] })).toBe(
    false,
  );
  expect(satisfiesRequest(cert, 'n1', { dnsNames: ['n1'], ipAddresses: ['10.1.0.5'] })).toBe(false);
  expect(satisfiesRequest(cert, 'n2', { dnsNames: ['n1'], ipAddresses: ['10.1.0.5', 'fd00::1'] })).toBe(
    false,
  );
  // The client pair requests no names: nothing to compare.
  expect(satisfiesRequest(cert, 'n2', undefined)).toBe(true);
});

function manager(names: () => RequestedNames): CertificateManager {
  return new CertificateManager({
    certDir: dir,
    pair: 'kubelet-server',
    nodeName: 'n1',
    signerName: KUBELET_SERVING_SIGNER,
    usages: SERVING_USAGES,
    // Never reached before stop(); a rotation that did start would fail and back off.
    client: {} as Client,
    names,
    rotated: () => undefined,
  });
}

it('a stored serving certificate for other addresses is due at once; one for these addresses is not', async () => {
  const old = await servingPair('n1', { dnsNames: ['n1'], ipAddresses: ['10.1.0.5'] });
  await storePair(dir, 'kubelet-server', old.cert, old.key);
  const same = manager(() => ({ dnsNames: ['n1'], ipAddresses: ['10.1.0.5'] }));
  same.start();
  same.stop();
  expect(same.nextRotationDeadline()).toBeGreaterThan(Date.now() + 60_000);
  const moved = manager(() => ({ dnsNames: ['n1'], ipAddresses: ['10.1.0.9'] }));
  moved.start();
  moved.stop();
  expect(moved.nextRotationDeadline()).toBeLessThanOrEqual(Date.now());
});

it('notices addresses that change while it runs', async () => {
  const old = await servingPair('n1', { dnsNames: ['n1'], ipAddresses: ['10.1.0.5'] });
  await storePair(dir, 'kubelet-server', old.cert, old.key);
  let ip = '10.1.0.5';
  const m = manager(() => ({ dnsNames: ['n1'], ipAddresses: [ip] }));
  m.start();
  try {
    expect(m.nextRotationDeadline()).toBeGreaterThan(Date.now() + 60_000);
    ip = '10.1.0.7';
    await new Promise((r) => setTimeout(r, TEMPLATE_CHECK_MS * 2.5));
    expect(m.nextRotationDeadline()).toBeLessThanOrEqual(Date.now());
  } finally {
    m.stop();
  }
});
