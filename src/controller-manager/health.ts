/**
 * The manager's `--secure-port` listener: `/healthz` (and `/livez`, `/readyz`) answer `ok` while
 * the manager is not stopped; `/metrics` gives Prometheus text about the manager. The
 * certificate is self-signed and generated at start (kube writes one to `--cert-dir`); requests
 * are not authenticated (kube delegates to the API server: not built yet, said in `--help`).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, issueCertificate, privateKeyPem } from '../pki/certificate.js';
import type { RunningManager } from './manager.js';

/** A listening health server. */
export interface HealthServer {
  readonly port: number;
  close(): Promise<void>;
}

function metrics(manager: RunningManager): string {
  const lines = [
    '# HELP capstan_controller_manager_leader 1 while this manager runs the controllers.',
    '# TYPE capstan_controller_manager_leader gauge',
    `capstan_controller_manager_leader ${manager.state() === 'running' ? 1 : 0}`,
    '# HELP capstan_controller_manager_controller_started 1 for each controller running.',
    '# TYPE capstan_controller_manager_controller_started gauge',
  ];
  const started = new Set(manager.started());
  for (const name of manager.enabled) {
    lines.push(`capstan_controller_manager_controller_started{name="${name}"} ${started.has(name) ? 1 : 0}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Serves health and metrics of `manager` on `bindAddress:port` (0: a free port). */
export async function startHealthServer(
  manager: RunningManager,
  bindAddress: string,
  port: number,
): Promise<HealthServer> {
  const { privateKey, publicKey } = await generateKeyPair();
  const now = Date.now();
  const certPem = issueCertificate({
    subject: { commonName: 'localhost@capstan-controller-manager' },
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
      const ok = manager.state() !== 'stopped';
      res.writeHead(ok ? 200 : 500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(ok ? 'ok' : 'stopped');
    } else if (path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(metrics(manager));
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
