import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderKubeconfig } from '../../src/pki/kubeconfig.js';
import {
  KubeconfigError,
  parseKubeconfigCredentials,
  readKubeconfigCredentials,
} from '../../src/pki/kubeconfig-credentials.js';

const dir = mkdtempSync(join(tmpdir(), 'capstan-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readKubeconfigCredentials', () => {
  it('reads back what renderKubeconfig wrote', () => {
    const path = join(dir, 'admin.kubeconfig');
    writeFileSync(
      path,
      renderKubeconfig({
        server: 'https://127.0.0.1:6443',
        caPem: 'CA\n',
        clientCertPem: 'CERT\n',
        clientKeyPem: 'KEY\n',
        contextName: 'a:b',
      }),
    );
    const c = readKubeconfigCredentials(path);
    expect(c).toEqual({
      server: 'https://127.0.0.1:6443',
      ca: 'CA\n',
      cert: 'CERT\n',
      key: 'KEY\n',
      token: undefined,
      insecureSkipTlsVerify: false,
      context: 'a:b',
    });
  });

  it('resolves file references relative to the kubeconfig, and tokens', () => {
    writeFileSync(join(dir, 'ca.pem'), 'FILE-CA');
    const text = [
      'apiVersion: v1',
      'clusters: [{name: c, cluster: {server: "https://x:1", certificate-authority: ca.pem}}]',
      'users: [{name: u, user: {token: abc}}, {name: v, user: {client-certificate-data: Q0VSVA==}}]',
      'contexts: [{name: one, context: {cluster: c, user: u}}, {name: two, context: {cluster: c, user: v}}]',
      'current-context: one',
    ].join('\n');
    const c = parseKubeconfigCredentials(text, join(dir, 'k'));
    expect(c.ca).toBe('FILE-CA');
    expect(c.token).toBe('abc');
    expect(c.cert).toBeUndefined();
    // A certificate without its key is refused rather than sent half-configured.
    expect(() => parseKubeconfigCredentials(text, join(dir, 'k'), 'two')).toThrow(KubeconfigError);
    expect(() => parseKubeconfigCredentials(text, join(dir, 'k'), 'three')).toThrow(KubeconfigError);
  });

  it('a missing file is a KubeconfigError with a stable code', () => {
    try {
      readKubeconfigCredentials(join(dir, 'missing'));
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(KubeconfigError);
      expect((err as KubeconfigError).code).toBe('KUBECONFIG_INVALID');
    }
  });
});
