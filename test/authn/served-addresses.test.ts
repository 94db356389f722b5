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
import { runServerCommand } from '../../src/server/run.js';
import { servedAddresses, servedUrls } from '../../src/pki/served-addresses.js';

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

describe('capstan server start-up lines', () => {
  it('name every served address of a wildcard bind, and no anonymous-access warning under RBAC', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'capstan-startline-'));
    const out: string[] = [];
    const err: string[] = [];
    try {
      const running = runServerCommand(
        [
          '--secure-port=0',
          '--bind-address=0.0.0.0',
          '--authorization-mode=RBAC',
          `--data-dir=${dir}`,
          `--cert-dir=${dir}/pki`,
        ],
        { out: (l) => out.push(l), err: (l) => err.push(l) },
      );
      for (let i = 0; i < 200 && !out.some((l) => l.startsWith('serving on')); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      process.emit('SIGTERM');
      expect(await running).toBe(0);
      const line = out.find((l) => l.startsWith('serving on')) ?? '';
      for (const ip of new Set(ipv4))
        expect(line).toMatch(new RegExp(`https://${ip.replaceAll('.', '\\.')}:\\d+`));
      const warned = err
        .join('\n')
        .includes('WARNING: anonymous requests are enabled and no authorizer restricts them');
      // RBAC restricts anonymous requests: no warning.
      expect(warned).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
