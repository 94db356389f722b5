/**
 * Authorization's audit annotations on a real RBAC server: an allowed request records
 * `authorization.k8s.io/decision: allow` with the authorizer's reason, a refused one `forbid`
 * (its 403 Status as the response status); failed webhook deliveries in blocking-strict mode fail
 * the request.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { issue, makeCa, sendJson, startLocalHttps, type LocalHttps } from '../authn/support.js';
import { readEvents, send } from './support.js';

let dir: string;
const servers: TestServer[] = [];
let receiver: LocalHttps | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-audit-authz-'));
  await writeFile(
    join(dir, 'policy.yaml'),
    'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n',
  );
  await writeFile(join(dir, 'tokens.csv'), 'dana-token,dana,uid-d,"nobody"\n');
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await receiver?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('authorization annotations', () => {
  it('records allow with the reason, and forbid with the 403', async () => {
    const log = join(dir, 'rbac.log');
    const s = await startTestServer({
      args: [
        '--authorization-mode=RBAC',
        `--token-auth-file=${join(dir, 'tokens.csv')}`,
        `--audit-policy-file=${join(dir, 'policy.yaml')}`,
        `--audit-log-path=${log}`,
      ],
    });
    servers.push(s);
    const path = '/api/v1/namespaces/default/configmaps';
    const allowed = await send(s.url, s.kubeconfigPath, 'admin', 'allowed', 'GET', path);
    expect(allowed.status).toBe(200);
    const denied = await send(s.url, s.kubeconfigPath, { token: 'dana-token' }, 'denied', 'GET', path);
    expect(denied.status).toBe(403);
    const events = readEvents(log);
    const ok = events.find((e) => e.auditID === 'allowed' && e.stage === 'ResponseComplete');
    expect(ok?.annotations?.['authorization.k8s.io/decision']).toBe('allow');
    // The reason is whatever the authorizer gave (Capstan's RBAC gives none for an allow yet).
    expect(ok?.annotations?.['authorization.k8s.io/reason']).toBeTypeOf('string');
    const no = events.find((e) => e.auditID === 'denied' && e.stage === 'ResponseComplete');
    expect(no?.annotations?.['authorization.k8s.io/decision']).toBe('forbid');
    expect(no?.annotations).toHaveProperty(['authorization.k8s.io/reason']);
    expect(no?.responseStatus).toMatchObject({ status: 'Failure', reason: 'Forbidden', code: 403 });
    expect((no?.responseStatus as { message: string }).message).toContain(
      'User "dana" cannot list resource "configmaps"',
    );
    expect(no?.user).toEqual({ username: 'dana', uid: 'uid-d', groups: ['nobody', 'system:authenticated'] });
  });
});

describe('webhook in blocking-strict mode', () => {
  it('fails the request when the event cannot be delivered', async () => {
    const ca = await makeCa('refusing-receiver-ca');
    const leaf = await issue(ca, { commonName: 'receiver' }, 'server', { ipAddresses: ['127.0.0.1'] });
    let calls = 0;
    receiver = await startLocalHttps(leaf, (_req, _body, res) => {
      calls++;
      sendJson(res, 503, {});
    });
    const kubeconfig = [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: a, cluster: {server: "${receiver.url}", certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}}}]`,
      'users: [{name: u, user: {}}]',
      'contexts: [{name: c, context: {cluster: a, user: u}}]',
      'current-context: c',
    ].join('\n');
    await writeFile(join(dir, 'hook.kubeconfig'), kubeconfig);
    const s = await startTestServer({
      args: [
        `--audit-policy-file=${join(dir, 'policy.yaml')}`,
        `--audit-webhook-config-file=${join(dir, 'hook.kubeconfig')}`,
        '--audit-webhook-mode=blocking-strict',
        '--audit-webhook-initial-backoff=10ms',
        // Bare: the in-process controllers' requests would be sent to the hook too.
        '--controllers=',
      ],
    });
    servers.push(s);
    const res = await send(s.url, s.kubeconfigPath, 'admin', 'strict-hook', 'GET', '/version');
    expect(res.status).toBe(500);
    expect(JSON.parse(res.body)).toMatchObject({
      message: 'Internal error occurred: failed to store audit event',
    });
    // kube's retry policy: five tries of the one RequestReceived event.
    expect(calls).toBe(5);
  });
});
