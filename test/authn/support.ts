/**
 * Test material for authentication: CAs and certificates made in the test, kubeconfigs for
 * token and exec-plugin users (no client certificate, so the token is what authenticates), a
 * local HTTPS server for webhooks and OIDC issuers.
 */
import { createPublicKey } from 'node:crypto';
import { chmod, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  generateKeyPair,
  issueCertificate,
  privateKeyPem,
  subjectDerOf,
  type Issuer,
} from '../../src/pki/certificate.js';
import { X509Certificate } from 'node:crypto';

/** A CA made in the test. */
export interface TestCa {
  readonly certPem: string;
  readonly keyPem: string;
  readonly issuer: Issuer;
}

/** A new self-signed CA. */
export async function makeCa(commonName: string): Promise<TestCa> {
  const { privateKey, publicKey } = await generateKeyPair();
  const now = Date.now();
  const certPem = issueCertificate({
    subject: { commonName },
    publicKey,
    usage: 'ca',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
    selfSigningKey: privateKey,
  });
  return {
    certPem,
    keyPem: privateKeyPem(privateKey),
    issuer: {
      subjectDer: subjectDerOf(new X509Certificate(certPem).raw),
      privateKey,
      publicKey: createPublicKey(privateKey),
    },
  };
}

/** A leaf certificate signed by `ca`, valid from a minute ago for `lifetimeMs` (default a day). */
export async function issue(
  ca: TestCa,
  subject: { commonName: string; organizations?: readonly string[] },
  usage: 'client' | 'server',
  names: { dnsNames?: readonly string[]; ipAddresses?: readonly string[] } = {},
  lifetimeMs = 86_400_000,
): Promise<{ certPem: string; keyPem: string }> {
  const { privateKey, publicKey } = await generateKeyPair();
  const now = Date.now();
  const certPem = issueCertificate({
    subject,
    publicKey,
    usage,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + lifetimeMs),
    issuer: ca.issuer,
    ...names,
  });
  return { certPem, keyPem: privateKeyPem(privateKey) };
}

/** Writes a kubeconfig that trusts `caPem` and authenticates with `user` only. */
export async function writeUserKubeconfig(
  path: string,
  server: string,
  caPem: string,
  user: { token: string } | { execCommand: string },
): Promise<void> {
  const userYaml =
    'token' in user
      ? `    token: ${JSON.stringify(user.token)}`
      : [
          '    exec:',
          '      apiVersion: client.authentication.k8s.io/v1',
          `      command: ${JSON.stringify(user.execCommand)}`,
          '      interactiveMode: Never',
        ].join('\n');
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster:',
    `    server: ${JSON.stringify(server)}`,
    `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}`,
    'users:',
    '- name: u',
    '  user:',
    userYaml,
    'contexts:',
    '- name: x',
    '  context: {cluster: c, user: u}',
    'current-context: x',
    '',
  ].join('\n');
  await writeFile(path, yaml, { mode: 0o600 });
}

/** Writes an exec credential plugin that prints `token`. */
export async function writeExecPlugin(path: string, token: string): Promise<void> {
  const credential = JSON.stringify({
    apiVersion: 'client.authentication.k8s.io/v1',
    kind: 'ExecCredential',
    status: { token },
  });
  await writeFile(path, `#!/bin/sh\ncat <<'EOF'\n${credential}\nEOF\n`);
  await chmod(path, 0o755);
}

/** A local HTTPS server on 127.0.0.1. */
export interface LocalHttps {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

/** Starts an HTTPS server with `handler` (JSON bodies collected for it). */
export async function startLocalHttps(
  tls: { certPem: string; keyPem: string; caPem?: string; requestCert?: boolean },
  handler: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<LocalHttps> {
  const server = createServer(
    {
      cert: tls.certPem,
      key: tls.keyPem,
      ...(tls.caPem === undefined ? {} : { ca: tls.caPem }),
      requestCert: tls.requestCert === true,
      rejectUnauthorized: tls.requestCert === true,
    },
    (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => handler(req, body, res));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends JSON. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
