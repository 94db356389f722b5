/**
 * Secure-by-default serving: which addresses a bind address serves (the start-up line names
 * them) and that the generated serving certificate covers each of them and the advertise
 * address.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureServerPki } from '../../src/pki/server-pki.js';
import { servedAddresses, servedUrls } from '../../src/server/served-addresses.js';

const ipv4 = Object.values(networkInterfaces())
  .flatMap((l) => l ?? [])
  .filter((a) => a.family === 'IPv4')
  .map((a) => a.address);

describe('served addresses', () => {
  it('a specific address is itself; 0.0.0.0 is every IPv4 interface address', () => {
    expect(servedAddresses('127.0.0.1')).toEqual(['127.0.0.1']);
    expect(servedAddresses('0.0.0.0').sort()).toEqual([...new Set(ipv4)].sort());
    expect(servedUrls('::1', 6443)).toEqual(['https://[::1]:6443']);
  });

  it('the generated serving certificate covers every served address and the advertise address', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'capstan-served-'));
    try {
      const pki = await ensureServerPki({
        certDir: dir,
        bindAddress: '0.0.0.0',
        advertiseAddress: '192.0.2.10',
      });
      const cert = new X509Certificate(pki.serving.certPem);
      for (const ip of [...ipv4, '192.0.2.10']) expect(cert.checkIP(ip), ip).toBe(ip);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
