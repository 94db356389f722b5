/**
 * Admission webhook overhead: ConfigMap create throughput at 50 concurrent clients with one
 * local mutating webhook (JSONPatch adding a label, HTTPS with its own CA, served from a worker
 * thread so it has its own event loop) against the same server with no webhook configuration.
 * Phases alternate (none, webhook, none, webhook) on one in-process server over an in-memory
 * store, so drift on a shared machine hits both.
 *
 *   npm run build && node dist/tools/bench-webhooks.js [--seconds 3] [--clients 50]
 */
import { createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openMemoryStore } from '../storage/mvcc/index.js';
import { generateKeyPair, issueCertificate, privateKeyPem, subjectDerOf } from '../src/pki/certificate.js';
import { ServerLog } from '../src/server/log.js';
import { parseServerArgs, type ServerOptions } from '../src/server/options.js';
import { startServer } from '../src/server/server.js';
import { sendForStatus as send } from './h2-status.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const SECONDS = arg('seconds', 3);
const CLIENTS = arg('clients', 50);
const SESSIONS = 5;

/** The webhook: answers every review with a patch adding `webhooked=yes`. */
const WEBHOOK_SOURCE = `
const { createServer } = require('node:https');
const { parentPort, workerData } = require('node:worker_threads');
const patch = Buffer.from(JSON.stringify([
  { op: 'add', path: '/metadata/labels', value: { webhooked: 'yes' } },
])).toString('base64');
const server = createServer({ cert: workerData.cert, key: workerData.key }, (req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const review = JSON.parse(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch },
    }));
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
`;

async function webhookCerts(): Promise<{ ca: string; cert: string; key: string }> {
  const caKeys = await generateKeyPair();
  const now = Date.now();
  const ca = issueCertificate({
    subject: { commonName: 'bench-webhook-ca' },
    publicKey: caKeys.publicKey,
    usage: 'ca',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
    selfSigningKey: caKeys.privateKey,
  });
  const keys = await generateKeyPair();
  const cert = issueCertificate({
    subject: { commonName: 'bench-webhook' },
    publicKey: keys.publicKey,
    usage: 'server',
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 3_600_000),
    issuer: {
      subjectDer: subjectDerOf(new X509Certificate(ca).raw),
      privateKey: caKeys.privateKey,
      publicKey: createPublicKey(caKeys.privateKey),
    },
    ipAddresses: ['127.0.0.1'],
  });
  return { ca, cert, key: privateKeyPem(keys.privateKey) };
}

async function must(p: Promise<number>, want: number): Promise<void> {
  const got = await p;
  if (got !== want) throw new Error(`setup request answered ${got}, want ${want}`);
}

const CREATE = JSON.stringify({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { generateName: 'load-' },
  data: { k: 'v' },
});

async function phase(sessions: ClientHttp2Session[]): Promise<number> {
  const end = Date.now() + SECONDS * 1000;
  let done = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      const s = sessions[c % sessions.length] as ClientHttp2Session;
      while (Date.now() < end) {
        const status = await send(s, 'POST', '/api/v1/namespaces/bench/configmaps', CREATE);
        if (status === 201) done++;
        else failed++;
      }
    }),
  );
  if (failed > 0) throw new Error(`${failed} creates failed`);
  return done / SECONDS;
}

const MWC = '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations';

async function main(): Promise<void> {
  const certs = await webhookCerts();
  const worker = new Worker(WEBHOOK_SOURCE, { eval: true, workerData: certs });
  const port = await new Promise<number>((resolve) => worker.once('message', resolve));
  const dir = mkdtempSync(join(tmpdir(), 'capstan-bench-webhooks-'));
  const parsed = parseServerArgs(['--secure-port=0', '--bind-address=127.0.0.1', `--data-dir=${dir}`]) as {
    options: ServerOptions;
  };
  const server = await startServer(parsed.options, {
    store: await openMemoryStore(),
    log: new ServerLog(() => undefined),
  });
  const tls = {
    ca: server.pki.servingTrustPem,
    cert: server.pki.admin.certPem,
    key: server.pki.admin.keyPem,
  };
  const sessions = Array.from({ length: SESSIONS }, () => {
    const s = connect(server.url, tls);
    s.on('error', () => undefined);
    return s;
  });
  const admin = sessions[0] as ClientHttp2Session;
  try {
    await must(
      send(
        admin,
        'POST',
        '/api/v1/namespaces',
        JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } }),
      ),
      201,
    );
    const config = JSON.stringify({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'bench' },
      webhooks: [
        {
          name: 'label.bench.capstan',
          clientConfig: {
            url: `https://127.0.0.1:${port}/mutate`,
            caBundle: Buffer.from(certs.ca).toString('base64'),
          },
          rules: [
            { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] },
          ],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    const withWebhook = async (): Promise<number> => {
      await must(send(admin, 'POST', MWC, config), 201);
      await new Promise((r) => setTimeout(r, 200));
      const rate = await phase(sessions);
      await must(send(admin, 'DELETE', `${MWC}/bench`), 200);
      await new Promise((r) => setTimeout(r, 200));
      return rate;
    };
    // Warm up (JIT, connections to the webhook) before measuring.
    await phase(sessions);
    await withWebhook();
    const none: number[] = [];
    const hooked: number[] = [];
    for (let round = 0; round < 2; round++) {
      none.push(await phase(sessions));
      hooked.push(await withWebhook());
    }
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(`clients ${CLIENTS}, ${SECONDS}s phases, ConfigMap creates`);
    console.log(
      `no webhook:          ${none.map((x) => x.toFixed(0)).join(', ')} /s (mean ${mean(none).toFixed(0)})`,
    );
    console.log(
      `one mutating webhook: ${hooked.map((x) => x.toFixed(0)).join(', ')} /s (mean ${mean(hooked).toFixed(0)})`,
    );
    console.log(`ratio: ${((100 * mean(hooked)) / mean(none)).toFixed(1)}%`);
  } finally {
    for (const s of sessions) s.close();
    await server.shutdown();
    await worker.terminate();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
