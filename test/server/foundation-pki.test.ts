/**
 * The server PKI: generated certificates verify (by Node's OpenSSL and, through kubectl, by Go),
 * carry the required names and identities, and are reused on restart.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ipToBytes } from '../../src/pki/certificate.js';
import { localServerUrl, writeKubeconfig } from '../../src/pki/kubeconfig.js';
import { ensureServerPki, PkiError } from '../../src/pki/server-pki.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-pki-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ipToBytes', () => {
  it('encodes IPv4 and every IPv6 form', () => {
    expect([...ipToBytes('10.1.2.3')]).toEqual([10, 1, 2, 3]);
    expect([...ipToBytes('::1')]).toEqual([...new Array<number>(15).fill(0), 1]);
    expect(Buffer.from(ipToBytes('2001:db8::8:1')).toString('hex')).toBe('20010db8000000000000000000080001');
    expect(Buffer.from(ipToBytes('::ffff:1.2.3.4')).toString('hex')).toBe('00000000000000000000ffff01020304');
    expect(Buffer.from(ipToBytes('1:2:3:4:5:6:7:8')).toString('hex')).toBe(
      '00010002000300040005000600070008',
    );
    expect(() => ipToBytes('example.com')).toThrow(RangeError);
  });
});

describe('ensureServerPki', () => {
  it('generates a CA, a serving and an admin certificate that chain to it', async () => {
    const pki = await ensureServerPki({ certDir: dir, advertiseAddress: '10.1.2.3' });
    expect([...pki.written].sort()).toEqual(
      ['admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key'].sort(),
    );
    const ca = new X509Certificate(pki.ca.certPem);
    const serving = new X509Certificate(pki.serving.certPem);
    const admin = new X509Certificate(pki.admin.certPem);
    expect(ca.ca).toBe(true);
    expect(serving.ca).toBe(false);
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(serving.checkIssued(ca)).toBe(true);
    expect(admin.checkIssued(ca)).toBe(true);
    expect(serving.checkPrivateKey(createPrivateKey(pki.serving.keyPem))).toBe(true);
    for (const host of [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ]) {
      expect(serving.checkHost(host, { subject: 'never' })).toBe(host);
    }
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3']) expect(serving.checkIP(ip)).toBe(ip);
    expect(serving.checkIP('10.9.9.9')).toBeUndefined();
    expect(admin.subject.split('\n')).toEqual(['O=system:masters', 'CN=system:admin']);
    expect(admin.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(serving.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(BigInt(`0x${serving.serialNumber}`) > 0n).toBe(true);
    expect((await stat(join(dir, 'ca.key'))).mode & 0o777).toBe(0o600);
  });

  it('reuses every file on restart, and reissues only the serving certificate for a new address', async () => {
    const first = await ensureServerPki({ certDir: dir });
    const second = await ensureServerPki({ certDir: dir });
    expect(second.written).toEqual([]);
    expect(second.ca).toEqual(first.ca);
    expect(second.serving).toEqual(first.serving);
    expect(second.admin).toEqual(first.admin);
    const third = await ensureServerPki({ certDir: dir, advertiseAddress: '192.0.2.7' });
    expect([...third.written].sort()).toEqual(['apiserver.crt', 'apiserver.key']);
    expect(third.ca).toEqual(first.ca);
    expect(new X509Certificate(third.serving.certPem).checkIP('192.0.2.7')).toBe('192.0.2.7');
  });

  it('replaces a garbled CA together with the leaves it signed', async () => {
    await ensureServerPki({ certDir: dir });
    await writeFile(join(dir, 'ca.crt'), 'not a certificate');
    const again = await ensureServerPki({ certDir: dir });
    expect([...again.written].sort()).toEqual(
      ['admin.crt', 'admin.key', 'apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key'].sort(),
    );
    expect(
      new X509Certificate(again.admin.certPem).verify(new X509Certificate(again.ca.certPem).publicKey),
    ).toBe(true);
  });

  it('issues the kubelet client pair only on request, and reuses it after', async () => {
    const bare = await ensureServerPki({ certDir: dir });
    expect(bare.kubeletClient).toBeUndefined();
    const first = await ensureServerPki({ certDir: dir, kubeletClient: true });
    expect([...first.written].sort()).toEqual([
      'apiserver-kubelet-client.crt',
      'apiserver-kubelet-client.key',
    ]);
    const cert = new X509Certificate(first.kubeletClient!.certPem);
    expect(cert.subject.split('\n')).toEqual(['O=system:masters', 'CN=kube-apiserver-kubelet-client']);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.verify(new X509Certificate(first.ca.certPem).publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(first.kubeletClient!.keyPem))).toBe(true);
    expect(await readFile(join(dir, 'apiserver-kubelet-client.crt'), 'utf8')).toBe(
      first.kubeletClient!.certPem,
    );
    const again = await ensureServerPki({ certDir: dir, kubeletClient: true });
    expect(again.written).toEqual([]);
    expect(again.kubeletClient).toEqual(first.kubeletClient);
  });

  it('serves a given certificate pair and trusts an extra client CA', async () => {
    const other = await mkdtemp(join(tmpdir(), 'capstan-pki-other-'));
    try {
      const given = await ensureServerPki({ certDir: other });
      await writeFile(join(other, 'srv.crt'), given.serving.certPem);
      await writeFile(join(other, 'srv.key'), given.serving.keyPem);
      const pki = await ensureServerPki({
        certDir: dir,
        tlsCertFile: join(other, 'srv.crt'),
        tlsPrivateKeyFile: join(other, 'srv.key'),
        clientCaFile: join(other, 'ca.crt'),
      });
      expect(pki.serving.certPem).toBe(given.serving.certPem);
      expect(pki.written).not.toContain('apiserver.crt');
      expect(pki.clientCaPems).toEqual([pki.ca.certPem, await readFile(join(other, 'ca.crt'), 'utf8')]);
      await expect(
        ensureServerPki({
          certDir: dir,
          tlsCertFile: join(other, 'srv.crt'),
          tlsPrivateKeyFile: join(other, 'ca.key'),
        }),
      ).rejects.toBeInstanceOf(PkiError);
      await expect(
        ensureServerPki({ certDir: dir, tlsCertFile: join(other, 'srv.crt') }),
      ).rejects.toBeInstanceOf(PkiError);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('kubeconfig', () => {
  it('points local clients at the listener', () => {
    expect(localServerUrl('0.0.0.0', 6443)).toBe('https://127.0.0.1:6443');
    expect(localServerUrl('', 6443)).toBe('https://127.0.0.1:6443');
    expect(localServerUrl('::', 1)).toBe('https://[::1]:1');
    expect(localServerUrl('10.0.0.2', 2)).toBe('https://10.0.0.2:2');
    expect(localServerUrl('fd00::2', 3)).toBe('https://[fd00::2]:3');
  });

  it('embeds the credentials so that client libraries load it as is', async () => {
    const pki = await ensureServerPki({ certDir: dir });
    const path = join(dir, 'sub', 'admin.kubeconfig');
    await writeKubeconfig(path, {
      server: 'https://127.0.0.1:6443',
      caPem: pki.ca.certPem,
      clientCertPem: pki.admin.certPem,
      clientKeyPem: pki.admin.keyPem,
    });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const kc = new KubeConfig();
    kc.loadFromFile(path);
    expect(kc.getCurrentCluster()).toMatchObject({ name: 'capstan', server: 'https://127.0.0.1:6443' });
    expect(Buffer.from(kc.getCurrentCluster()?.caData ?? '', 'base64').toString()).toBe(pki.ca.certPem);
    expect(Buffer.from(kc.getCurrentUser()?.certData ?? '', 'base64').toString()).toBe(pki.admin.certPem);
    expect(kc.getCurrentUser()?.name).toBe('capstan-admin');
  });
});
