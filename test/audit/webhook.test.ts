/**
 * The webhook backend against a real local HTTPS receiver (its own CA, trusted through the
 * kubeconfig-format `--audit-webhook-config-file`): EventList bodies in batches no larger than
 * `--audit-webhook-batch-max-size`, a failed delivery retried after the initial backoff,
 * truncation of oversized events (objects dropped, `audit.k8s.io/truncated`), and the batch
 * still queued at shutdown delivered.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps } from '../authn/support.js';
import { send, waitFor, type WireEvent } from './support.js';

interface Received {
  readonly contentType: string | undefined;
  readonly body: { kind: string; apiVersion: string; items: WireEvent[] };
}

let dir: string;
let receiver: LocalHttps;
let server: TestServer;
const received: Received[] = [];
let failuresLeft = 1;

const events = (): WireEvent[] => received.flatMap((r) => r.body.items);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-audit-webhook-'));
  const ca = await makeCa('audit-receiver-ca');
  const leaf = await issue(ca, { commonName: 'receiver' }, 'server', { ipAddresses: ['127.0.0.1'] });
  receiver = await startLocalHttps(leaf, (req, body, res) => {
    if (failuresLeft > 0) {
      failuresLeft--;
      sendJson(res, 503, { message: 'not yet' });
      return;
    }
    received.push({ contentType: req.headers['content-type'], body: JSON.parse(body) as Received['body'] });
    sendJson(res, 200, {});
  });
  const kubeconfig = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: audit',
    '  cluster:',
    `    server: ${receiver.url}/audit`,
    `    certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}`,
    'users:',
    '- name: apiserver',
    '  user: {}',
    'contexts:',
    '- name: default',
    '  context: {cluster: audit, user: apiserver}',
    'current-context: default',
  ].join('\n');
  await writeFile(join(dir, 'webhook.kubeconfig'), kubeconfig);
  await writeFile(
    join(dir, 'policy.yaml'),
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'omitStages: ["RequestReceived"]',
      'rules:',
      '- level: RequestResponse',
      '  resources: [{group: "", resources: ["configmaps"]}]',
      '- level: Metadata',
      '  nonResourceURLs: ["/version"]',
    ].join('\n'),
  );
  server = await startTestServer({
    args: [
      `--audit-policy-file=${join(dir, 'policy.yaml')}`,
      `--audit-webhook-config-file=${join(dir, 'webhook.kubeconfig')}`,
      '--audit-webhook-batch-max-size=3',
      '--audit-webhook-batch-max-wait=100ms',
      '--audit-webhook-initial-backoff=50ms',
      '--audit-webhook-truncate-enabled',
      '--audit-webhook-truncate-max-event-size=4000',
    ],
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('audit webhook', () => {
  it('delivers EventLists in batches, after retrying a failed delivery', async () => {
    for (let i = 0; i < 7; i++) {
      const res = await send(server.url, server.kubeconfigPath, 'admin', `hook-${i}`, 'GET', '/version');
      expect(res.status).toBe(200);
    }
    const got = await waitFor(events, (evs) => evs.filter((e) => e.auditID.startsWith('hook-')).length >= 7);
    expect(
      got
        .filter((e) => e.auditID.startsWith('hook-'))
        .map((e) => e.auditID)
        .sort(),
    ).toEqual(Array.from({ length: 7 }, (_, i) => `hook-${i}`));
    expect(failuresLeft).toBe(0);
    for (const r of received) {
      expect(r.contentType).toBe('application/json');
      expect(r.body.kind).toBe('EventList');
      expect(r.body.apiVersion).toBe('audit.k8s.io/v1');
      expect(r.body.items.length).toBeGreaterThan(0);
      expect(r.body.items.length).toBeLessThanOrEqual(3);
    }
    const one = got.find((e) => e.auditID === 'hook-3');
    expect(one).toMatchObject({
      level: 'Metadata',
      stage: 'ResponseComplete',
      verb: 'get',
      requestURI: '/version',
    });
    expect(one?.responseStatus).toEqual({ metadata: {}, code: 200 });
  });

  it('truncates events over the size limit and keeps smaller ones whole', async () => {
    const small = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'small' }, data: { k: 'v' } };
    const big = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big' },
      data: { k: 'x'.repeat(10_000) },
    };
    const cm = '/api/v1/namespaces/default/configmaps';
    expect((await send(server.url, server.kubeconfigPath, 'admin', 'small', 'POST', cm, small)).status).toBe(
      201,
    );
    expect((await send(server.url, server.kubeconfigPath, 'admin', 'big', 'POST', cm, big)).status).toBe(201);
    const got = await waitFor(events, (evs) => evs.some((e) => e.auditID === 'big'));
    const s = got.find((e) => e.auditID === 'small');
    expect(s?.annotations?.['audit.k8s.io/truncated']).toBeUndefined();
    expect((s?.requestObject as { metadata: { name: string } }).metadata.name).toBe('small');
    expect((s?.responseObject as { metadata: { name: string } }).metadata.name).toBe('small');
    const b = got.find((e) => e.auditID === 'big');
    expect(b?.annotations?.['audit.k8s.io/truncated']).toBe('true');
    expect(b && 'requestObject' in b).toBe(false);
    expect(b && 'responseObject' in b).toBe(false);
    expect(b?.objectRef).toMatchObject({ resource: 'configmaps', name: 'big' });
  });

  it('delivers what is still queued when the server stops', async () => {
    const res = await send(server.url, server.kubeconfigPath, 'admin', 'last', 'GET', '/version');
    expect(res.status).toBe(200);
    await server.close();
    expect(events().some((e) => e.auditID === 'last')).toBe(true);
  });
});
