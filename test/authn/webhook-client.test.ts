/**
 * The TokenReview webhook client on its own: the default v1beta1 review, the API server's client
 * certificate and bearer token from the webhook kubeconfig presented to a webhook that requires
 * them, the cache TTL, and configuration errors naming the file.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWebhookConfig, WebhookConfigError } from '../../src/authn/webhook-config.js';
import { WebhookTokenAuthenticator } from '../../src/authn/webhook-token.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps } from './support.js';

let dir: string;
let webhook: LocalHttps;
const seen: { apiVersion: string; clientCn: string; authorization: string | undefined }[] = [];
let configPath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-webhook-client-'));
  const ca = await makeCa('webhook-ca');
  const serving = await issue(ca, { commonName: 'webhook' }, 'server', { ipAddresses: ['127.0.0.1'] });
  const client = await issue(ca, { commonName: 'kube-apiserver' }, 'client');
  webhook = await startLocalHttps({ ...serving, caPem: ca.certPem, requestCert: true }, (req, body, res) => {
    const review = JSON.parse(body) as { apiVersion: string; spec: { token: string } };
    const cn = (req.socket as TLSSocket).getPeerCertificate().subject.CN as string;
    seen.push({ apiVersion: review.apiVersion, clientCn: cn, authorization: req.headers.authorization });
    sendJson(res, 200, {
      apiVersion: review.apiVersion,
      kind: 'TokenReview',
      status:
        review.spec.token === 'good'
          ? { authenticated: true, user: { username: 'hooked', groups: ['h'] } }
          : { authenticated: false },
    });
  });
  await writeFile(join(dir, 'client.crt'), client.certPem);
  await writeFile(join(dir, 'client.key'), client.keyPem);
  configPath = join(dir, 'webhook.yaml');
  await writeFile(
    configPath,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: wh',
      `  cluster: {server: "${webhook.url}/review", certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}}`,
      'users:',
      '- name: apiserver',
      '  user: {client-certificate: client.crt, client-key: client.key, token: hook-secret}',
      'contexts:',
      '- name: wh',
      '  context: {cluster: wh, user: apiserver}',
      'current-context: wh',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await webhook?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('webhook client', () => {
  it('sends a v1beta1 TokenReview with the configured client certificate and token, and caches', async () => {
    const hook = new WebhookTokenAuthenticator({
      target: readWebhookConfig(configPath),
      version: 'v1beta1',
      cacheTtlMs: 60_000,
    });
    const r = await hook.authenticateToken('good', []);
    expect(r?.user).toEqual({ name: 'hooked', uid: '', groups: ['h'], extra: {} });
    expect(await hook.authenticateToken('good', [])).toEqual(r);
    expect(await hook.authenticateToken('bad', [])).toBeUndefined();
    expect(hook.calls).toBe(2);
    expect(seen[0]).toEqual({
      apiVersion: 'authentication.k8s.io/v1beta1',
      clientCn: 'kube-apiserver',
      authorization: 'Bearer hook-secret',
    });
  });

  it('a TTL of 0 asks every time', async () => {
    const hook = new WebhookTokenAuthenticator({
      target: readWebhookConfig(configPath),
      version: 'v1',
      cacheTtlMs: 0,
    });
    await hook.authenticateToken('good', []);
    await hook.authenticateToken('good', []);
    expect(hook.calls).toBe(2);
  });

  it('refuses configurations without an https server, naming the file', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'clusters:\n- name: x\n  cluster: {server: "http://127.0.0.1:1"}\n');
    expect(() => readWebhookConfig(bad)).toThrow(WebhookConfigError);
    expect(() => readWebhookConfig(bad)).toThrow(bad);
    expect(() => readWebhookConfig(join(dir, 'missing.yaml'))).toThrow(WebhookConfigError);
  });
});
