/**
 * The scheduler's `--secure-port` listener (kube-scheduler: 10259): `/healthz`, `/livez` and
 * `/readyz` answer `ok`; `/metrics` gives the scheduler's Prometheus metrics. The certificate is
 * self-signed and generated at start, as kube-scheduler does without `--tls-cert-file`. Requests
 * are not authenticated (kube delegates authentication and authorization to the API server; not
 * built here).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, issueCertificate, privateKeyPem } from '../pki/certificate.js';

/** A listening health server. */
export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Serves `metrics()` and health on `bindAddress:port` (0: a free port). */
export async function startHealthServer(
  metrics: () => string,
  bindAddress: string,
  port: number,
): Promise<HealthServer> {
  const { privateKey, publicKey } = await generateKeyPair();
  const now = Date.now();
  const certPem = issueCertificate({
    subject: { commonName: 'localhost@capstan-scheduler' },
    publicKey,
    selfSigningKey: privateKey,
    usage: 'server',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 24 * 3600_000),
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
  });
  const server: Server = createServer({ cert: certPem, key: privateKeyPem(privateKey) }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz' || path === '/livez' || path === '/readyz') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('ok');
    } else if (path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(metrics());
    } else {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('404 page not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, bindAddress === '' ? '0.0.0.0' : bindAddress, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
