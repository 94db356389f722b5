/**
 * Helpers of the service-account tests: requests with a bearer token and no client certificate,
 * kubeconfigs that carry only a token, and polling for what controllers make.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { adminFetch, adminTls, type FetchResult, type TestServer } from '../support/server.js';

/** A request to the server with `token` as bearer (no client certificate). */
export function tokenFetch(
  server: TestServer,
  path: string,
  token: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<FetchResult> {
  const { ca } = adminTls(server.kubeconfigPath);
  return adminFetch(
    `${server.url}${path}`,
    { ca },
    {
      ...(options.method === undefined ? {} : { method: options.method }),
      ...(options.body === undefined ? {} : { body: options.body }),
      headers: { authorization: `Bearer ${token}`, ...(options.headers ?? {}) },
    },
  );
}

/** A request with the admin certificate; JSON bodies. */
export async function admin(
  server: TestServer,
  path: string,
  options: { method?: string; body?: unknown; contentType?: string } = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await adminFetch(`${server.url}${path}`, adminTls(server.kubeconfigPath), {
    method: options.method ?? 'GET',
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    headers: { 'content-type': options.contentType ?? 'application/json', accept: 'application/json' },
  });
  return {
    status: res.status,
    json: res.body === '' ? {} : (JSON.parse(res.body) as Record<string, unknown>),
  };
}

/** A kubeconfig beside the server's that authenticates with `token` only. */
export async function tokenKubeconfig(server: TestServer, token: string, name: string): Promise<string> {
  const { ca } = adminTls(server.kubeconfigPath);
  const path = join(server.dataDir, `${name}.kubeconfig`);
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: { server: server.url, 'certificate-authority-data': Buffer.from(ca).toString('base64') },
      },
    ],
    users: [{ name: 'u', user: { token } }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  };
  await writeFile(path, JSON.stringify(config));
  return path;
}

/** Polls `probe` until it returns a value (not undefined), or fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Creates a TokenRequest; returns status and parsed body. */
export function requestToken(
  server: TestServer,
  namespace: string,
  sa: string,
  spec: Record<string, unknown> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  return admin(server, `/api/v1/namespaces/${namespace}/serviceaccounts/${sa}/token`, {
    method: 'POST',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
  });
}

/** The token of a TokenRequest answer. */
export function tokenOf(answer: { json: Record<string, unknown> }): string {
  const status = answer.json['status'] as { token?: string } | undefined;
  if (typeof status?.token !== 'string') throw new Error(`no token in ${JSON.stringify(answer.json)}`);
  return status.token;
}
