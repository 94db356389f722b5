/**
 * `capstan bench` fails clearly: a non-zero exit and one line naming the problem, whether the
 * server is unreachable, refuses the credentials, or the kubeconfig or flags are unusable.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBenchCommand } from '../../src/bench/command.js';
import { renderKubeconfig } from '../../src/pki/kubeconfig.js';
import { readKubeconfigCredentials } from '../../src/pki/kubeconfig-credentials.js';
import { startTestServer, type TestServer } from '../support/server.js';

let dir: string;
let server: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-bench-cmd-'));
  server = await startTestServer({ args: ['--anonymous-auth=false'] });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function run(argv: readonly string[]): Promise<{ code: number; out: string; err: string[] }> {
  let out = '';
  const err: string[] = [];
  const code = await runBenchCommand(argv, { out: (t) => (out += t), err: (l) => err.push(l) });
  return { code, out, err };
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 1));
    });
  });
}

const NO_BASELINES = ['--baselines=false', 'crud', '--clients=1', '--duration=100ms'];

describe('capstan bench failures', () => {
  it('an unreachable server: exit 1, one line naming it', async () => {
    const port = await closedPort();
    const c = readKubeconfigCredentials(server.kubeconfigPath);
    const path = join(dir, 'unreachable.kubeconfig');
    await writeFile(
      path,
      renderKubeconfig({
        server: `https://127.0.0.1:${port}`,
        caPem: c.ca ?? '',
        clientCertPem: c.cert ?? '',
        clientKeyPem: c.key ?? '',
      }),
    );
    const r = await run(['--kubeconfig', path, ...NO_BASELINES]);
    expect(r.code).toBe(1);
    const last = r.err[r.err.length - 1] ?? '';
    expect(last).toMatch(/^capstan bench: cannot reach https:\/\/127\.0\.0\.1:\d+: /);
    expect(last).not.toContain('\n');
  });

  it('credentials the server refuses: exit 1, says 401', async () => {
    const creds = readKubeconfigCredentials(server.kubeconfigPath);
    const path = join(dir, 'nocert.kubeconfig');
    // The right CA but no client certificate: with anonymous requests off, every request is a 401.
    const text = renderKubeconfig({
      server: creds.server,
      caPem: creds.ca ?? '',
      clientCertPem: '',
      clientKeyPem: '',
    });
    await writeFile(path, text.replace(/ {4}client-(certificate|key)-data: .*\n/g, ''));
    const r = await run(['--kubeconfig', path, ...NO_BASELINES]);
    expect(r.code).toBe(1);
    expect(r.err[r.err.length - 1]).toBe(
      'capstan bench: the server refused the credentials (401 Unauthorized) for GET /api/v1/namespaces/default',
    );
  });

  it('malformed credentials in the kubeconfig: exit 1, says so', async () => {
    const path = join(dir, 'badpem.kubeconfig');
    await writeFile(
      path,
      renderKubeconfig({ server: 'https://127.0.0.1:1', caPem: 'x', clientCertPem: 'x', clientKeyPem: 'x' }),
    );
    const r = await run(['--kubeconfig', path, ...NO_BASELINES]);
    expect(r.code).toBe(1);
    expect(r.err[r.err.length - 1]).toMatch(/^capstan bench: unusable TLS credentials in the kubeconfig: /);
  });

  it('a missing kubeconfig and bad flags', async () => {
    const missing = await run(['--kubeconfig', join(dir, 'nope'), ...NO_BASELINES]);
    expect(missing.code).toBe(1);
    expect(missing.err).toEqual([`capstan bench: cannot read kubeconfig ${join(dir, 'nope')}`]);
    const bad = await run(['--clients=0']);
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toContain('--clients');
    const unknown = await run(['fly']);
    expect(unknown.code).toBe(2);
    expect(unknown.err[0]).toBe(
      'capstan bench: unknown scenario fly: want startup, cold, crud, list, watch, informers, mixed, authz, custom, scheduler',
    );
  });

  it('a working kubeconfig: tables on stdout and a JSON report', async () => {
    const json = join(dir, 'r.json');
    const r = await run(['--kubeconfig', server.kubeconfigPath, '--json', json, ...NO_BASELINES]);
    expect(r.err.filter((l) => l.startsWith('capstan bench:'))).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('== create');
    const report = JSON.parse(await readFile(json, 'utf8')) as {
      rows: { scenario: string; figures: Record<string, number> }[];
    };
    const create = report.rows.find((row) => row.scenario === 'create');
    expect(create?.figures['ops/s']).toBeGreaterThan(0);
    expect(report.rows.map((row) => row.scenario)).toEqual(['create', 'get', 'update', 'delete']);
  });

  it('protobuf bodies: measured, or one row saying the server refused them; never a crash', async () => {
    const json = join(dir, 'pb.json');
    const r = await run([
      '--kubeconfig',
      server.kubeconfigPath,
      '--json',
      json,
      '--content-type=application/vnd.kubernetes.protobuf',
      ...NO_BASELINES,
    ]);
    expect(r.code).toBe(0);
    const report = JSON.parse(await readFile(json, 'utf8')) as {
      rows: { note?: string; figures: Record<string, number> }[];
    };
    const first = report.rows[0];
    if (first?.note !== undefined)
      expect(first.note).toMatch(
        /^server refused application\/vnd\.kubernetes\.protobuf bodies \(HTTP \d+\)$/,
      );
    else expect(first?.figures['ops/s']).toBeGreaterThan(0);
  });
});
