/**
 * `--tls-cert-file`/`--tls-private-key-file` reloaded on change: new connections get the new
 * certificate without a restart; a half-written pair (certificate replaced before its key) is
 * refused and the previous pair stays in use until the key arrives.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { issue, makeCa } from './support.js';

let dir: string;
let server: TestServer;
let certFile: string;
let keyFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-serving-reload-'));
  const ca = await makeCa('serving-ca');
  const first = await issue(ca, { commonName: 'first' }, 'server', { ipAddresses: ['127.0.0.1'] });
  certFile = join(dir, 'tls.crt');
  keyFile = join(dir, 'tls.key');
  await writeFile(certFile, first.certPem);
  await writeFile(keyFile, first.keyPem);
  server = await startTestServer({
    args: [`--tls-cert-file=${certFile}`, `--tls-private-key-file=${keyFile}`],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

function servedCommonName(): Promise<string> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: url.hostname,
      port: Number(url.port),
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
    });
    socket.once('secureConnect', () => {
      const cn = socket.getPeerCertificate().subject.CN as string;
      socket.end();
      resolve(cn);
    });
    socket.once('error', reject);
  });
}

describe('serving certificate reload', () => {
  it('serves a replaced certificate to new connections, without a restart', async () => {
    expect(await servedCommonName()).toBe('first');
    const ca = await makeCa('serving-ca-2');
    const second = await issue(ca, { commonName: 'second' }, 'server', { ipAddresses: ['127.0.0.1'] });
    await writeFile(certFile, second.certPem);
    // Only the certificate so far: it does not match the key, so the old pair stays.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(await servedCommonName()).toBe('first');
    await writeFile(keyFile, second.keyPem);
    let cn = '';
    for (let i = 0; i < 40 && cn !== 'second'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      cn = await servedCommonName();
    }
    expect(cn).toBe('second');
    expect(server.logs.join('\n')).toContain('reloading TLS files failed');
  }, 30_000);
});
