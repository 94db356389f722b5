/** Helpers of the authorization tests (users and readiness: test/support/users.ts); a local webhook. */
import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../../src/pki/certificate.js';
import { adminFetch, type AdminTls, type TestServer } from '../support/server.js';

/** A JSON request with `tls`; the parsed body (or text) and the status. */
export async function call(
  server: TestServer,
  tls: AdminTls,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await adminFetch(`${server.url}${path}`, tls, {
    method,
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(r.body) as Record<string, unknown>;
  } catch {
    parsed = { text: r.body };
  }
  return { status: r.status, body: parsed };
}

/** A local HTTPS SubjectAccessReview webhook (its own CA, bearer token `s3cret`). */
export interface LocalWebhook {
  /** A kubeconfig file that reaches it (server, CA, token). */
  readonly kubeconfigPath: string;
  readonly reviews: Record<string, unknown>[];
  /** Answer 500 to everything while true. */
  failing: boolean;
  close(): Promise<void>;
}

/**
 * Starts a webhook on 127.0.0.1: `answer(user)` gives the review's status; a wrong token or
 * `failing` gets 500. The kubeconfig is written under `dir` as `name.kubeconfig`.
 */
export async function startWebhook(
  dir: string,
  name: string,
  answer: (user: string) => Record<string, unknown>,
): Promise<LocalWebhook> {
  const caKeys = await generateKeyPair();
  const now = Date.now();
  const caPem = issueCertificate({
    subject: { commonName: 'webhook-ca' },
    publicKey: caKeys.publicKey,
    selfSigningKey: caKeys.privateKey,
    usage: 'ca',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
  });
  const keys = await generateKeyPair();
  const certPem = issueCertificate({
    subject: { commonName: 'webhook' },
    publicKey: keys.publicKey,
    issuer: {
      subjectDer: subjectDerOf(new X509Certificate(caPem).raw),
      privateKey: caKeys.privateKey,
      publicKey: caKeys.publicKey,
    },
    usage: 'server',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
    ipAddresses: ['127.0.0.1'],
  });
  const state = { failing: false };
  const reviews: Record<string, unknown>[] = [];
  const server = createServer({ cert: certPem, key: privateKeyPem(keys.privateKey) }, (req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      if (state.failing || req.headers.authorization !== 'Bearer s3cret') {
        res.writeHead(500).end();
        return;
      }
      const review = JSON.parse(text) as { apiVersion: string; spec: { user: string } };
      reviews.push(review);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: 'SubjectAccessReview',
          status: answer(review.spec.user),
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const kubeconfigPath = join(dir, `${name}.kubeconfig`);
  await writeFile(
    kubeconfigPath,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [
        {
          name: 'hook',
          cluster: {
            server: `https://127.0.0.1:${port}/authorize`,
            'certificate-authority-data': Buffer.from(caPem).toString('base64'),
          },
        },
      ],
      users: [{ name: 'api', user: { token: 's3cret' } }],
      contexts: [{ name: 'c', context: { cluster: 'hook', user: 'api' } }],
      'current-context': 'c',
    }),
  );
  return {
    kubeconfigPath,
    reviews,
    get failing() {
      return state.failing;
    },
    set failing(v: boolean) {
      state.failing = v;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
