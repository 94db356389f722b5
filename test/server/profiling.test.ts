/**
 * `/debug/pprof/*`: CPU and allocation profiles in DevTools' formats for `system:masters`,
 * 403 for everyone else, 404 with `--profiling=false`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminFetch, adminTls, startTestServer, type AdminTls, type TestServer } from '../support/server.js';
import { userTls } from '../support/users.js';

let server: TestServer;
let admin: AdminTls;
let alice: AdminTls;

beforeAll(async () => {
  server = await startTestServer();
  admin = adminTls(server.kubeconfigPath);
  alice = await userTls(server, 'alice', ['dev']);
});
afterAll(() => server.close());

describe('profiling endpoints', () => {
  it('a CPU profile for system:masters, in the .cpuprofile format', async () => {
    const res = await adminFetch(`${server.url}/debug/pprof/profile?seconds=1`, admin);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="capstan-\d+\.cpuprofile"$/);
    const profile = JSON.parse(res.body) as {
      nodes: unknown[];
      startTime: number;
      endTime: number;
      samples: unknown[];
    };
    expect(profile.nodes.length).toBeGreaterThan(0);
    expect(profile.endTime - profile.startTime).toBeGreaterThanOrEqual(1_000_000); // µs
  });

  it('an allocation profile in the .heapprofile format', async () => {
    const res = await adminFetch(`${server.url}/debug/pprof/allocs?seconds=1`, admin);
    expect(res.status).toBe(200);
    const profile = JSON.parse(res.body) as { head: { callFrame: unknown; children: unknown[] } };
    expect(profile.head.callFrame).toBeDefined();
  });

  it('403 for users outside system:masters; requests without credentials are 401 (anonymous is off under AlwaysAllow)', async () => {
    const other = await adminFetch(`${server.url}/debug/pprof/profile?seconds=1`, alice);
    expect(other.status).toBe(403);
    expect((JSON.parse(other.body) as { reason: string }).reason).toBe('Forbidden');
    const anonymous = await adminFetch(`${server.url}/debug/pprof/heap`, { ca: admin.ca });
    expect(anonymous.status).toBe(401);
  });

  it('400 for a bad duration', async () => {
    for (const s of ['0', '301', 'x', '1.5']) {
      const res = await adminFetch(`${server.url}/debug/pprof/profile?seconds=${s}`, admin);
      expect(res.status, s).toBe(400);
    }
  });

  it('one profile at a time: 429 while another runs', async () => {
    const first = adminFetch(`${server.url}/debug/pprof/profile?seconds=1`, admin);
    await new Promise((r) => setTimeout(r, 200));
    const second = await adminFetch(`${server.url}/debug/pprof/allocs?seconds=1`, admin);
    expect(second.status).toBe(429);
    expect((await first).status).toBe(200);
  });

  it('404 with --profiling=false', async () => {
    const off = await startTestServer({ args: ['--profiling=false'] });
    try {
      const res = await adminFetch(`${off.url}/debug/pprof/profile?seconds=1`, adminTls(off.kubeconfigPath));
      expect(res.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
