/**
 * `--endpoint-reconciler-type` values other than the default lease, on single in-memory servers:
 * - `master-count`: the server keeps its address in `default/kubernetes` and at most
 *   `--apiserver-count` addresses, dropping those after its own in sorted order (wrapping);
 * - `none`: the kubernetes Endpoints are never written;
 * - anything else refuses to start.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { adminJson, adminTls, startTestServer, type TestServer } from '../support/server.js';

const ENDPOINTS = '/api/v1/namespaces/default/endpoints/kubernetes';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(args: readonly string[]): Promise<TestServer> {
  const server = await startTestServer({ args, endpointLease: { intervalMs: 200 } });
  servers.push(server);
  return server;
}

async function addresses(server: TestServer): Promise<string[]> {
  const res = await adminJson(`${server.url}${ENDPOINTS}`, adminTls(server.kubeconfigPath));
  expect(res.status).toBe(200);
  const subsets = (res.json['subsets'] ?? []) as { addresses?: { ip: string }[] }[];
  return subsets.flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
}

async function eventually(server: TestServer, want: readonly string[]): Promise<void> {
  const end = Date.now() + 10_000;
  let seen = await addresses(server);
  while (JSON.stringify(seen) !== JSON.stringify(want) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    seen = await addresses(server);
  }
  expect(seen).toEqual(want);
}

/** Replaces the kubernetes Endpoints' addresses, as another server would. */
async function plant(server: TestServer, ips: readonly string[]): Promise<void> {
  const tls = adminTls(server.kubeconfigPath);
  const current = await adminJson(`${server.url}${ENDPOINTS}`, tls);
  const subsets = current.json['subsets'] as { ports: unknown[] }[];
  const res = await adminJson(`${server.url}${ENDPOINTS}`, tls, 'PUT', {
    ...current.json,
    subsets: [{ addresses: ips.map((ip) => ({ ip })), ports: subsets[0]?.ports }],
  });
  expect(res.status).toBe(200);
}

describe('--endpoint-reconciler-type', () => {
  it('master-count keeps its own address and --apiserver-count addresses at most', async () => {
    const server = await start(['--endpoint-reconciler-type=master-count', '--apiserver-count=2']);
    await eventually(server, ['127.0.0.1']);
    // Within the count, other servers' addresses stay.
    await plant(server, ['10.0.0.5', '127.0.0.1']);
    await new Promise((r) => setTimeout(r, 600));
    expect(await addresses(server)).toEqual(['10.0.0.5', '127.0.0.1']);
    // Without this server and over the count: it adds itself and drops the addresses sorted after
    // its own, wrapping around (so 10.0.0.5, the first, goes).
    await plant(server, ['10.0.0.5', '10.0.0.7']);
    await eventually(server, ['10.0.0.7', '127.0.0.1']);
  });

  it('master-count with the default count of one lists this server only', async () => {
    const server = await start(['--endpoint-reconciler-type=master-count']);
    await plant(server, ['10.0.0.5', '10.0.0.7']);
    await eventually(server, ['127.0.0.1']);
  });

  it('none never writes the kubernetes endpoints', async () => {
    const server = await start(['--endpoint-reconciler-type=none']);
    const tls = adminTls(server.kubeconfigPath);
    expect((await adminJson(`${server.url}/api/v1/namespaces/default/services/kubernetes`, tls)).status).toBe(
      200,
    );
    expect((await adminJson(`${server.url}${ENDPOINTS}`, tls)).status).toBe(404);
  });

  it('refuses an unknown type', async () => {
    await expect(start(['--endpoint-reconciler-type=bogus'])).rejects.toThrow(/bogus not recognized/);
  });
});
