/**
 * The log backend on real servers: standard output in kube's legacy format; rotation with
 * backups kept and gzip-compressed; blocking-strict failing a request whose event cannot be
 * written (and blocking not failing it); batch mode writing nothing while the request runs and
 * losing no event at shutdown.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { readEvents, send, waitFor } from './support.js';

let dir: string;
let policy: string;
const servers: TestServer[] = [];

async function start(args: string[]): Promise<TestServer> {
  // Bare: the in-process controllers' requests would be audited too.
  const s = await startTestServer({ args: [`--audit-policy-file=${policy}`, '--controllers=', ...args] });
  servers.push(s);
  return s;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-audit-log-'));
  policy = join(dir, 'policy.yaml');
  await writeFile(
    policy,
    [
      'apiVersion: audit.k8s.io/v1',
      'kind: Policy',
      'rules:',
      '- level: RequestResponse',
      '  resources: [{group: "", resources: ["configmaps"]}]',
      '- level: Metadata',
    ].join('\n'),
  );
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

describe('standard output', () => {
  it('writes legacy lines to stdout for --audit-log-path=-', async () => {
    const s = await start(['--audit-log-path=-', '--audit-log-format=legacy']);
    const lines: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const res = await send(
        s.url,
        s.kubeconfigPath,
        'admin',
        'legacy-1',
        'GET',
        '/api/v1/namespaces/default/configmaps',
      );
      expect(res.status).toBe(200);
    } finally {
      spy.mockRestore();
    }
    const mine = lines
      .join('')
      .split('\n')
      .filter((l) => l.includes('id="legacy-1"'));
    const tail =
      'ip="127.0.0.1" method="list" user="system:admin" groups="\\"system:masters\\",\\"system:authenticated\\"" ' +
      'as="<self>" asgroups="<lookup>" user-agent="audit-test/1.0" namespace="default" ' +
      'uri="/api/v1/namespaces/default/configmaps"';
    expect(mine).toHaveLength(2);
    expect(mine[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z AUDIT: id="legacy-1" stage="RequestReceived" /);
    expect(mine[0]).toContain(`${tail} response="<deferred>"`);
    expect(mine[1]).toContain(`stage="ResponseComplete" ${tail} response="200"`);
  });
});

describe('rotation', () => {
  // Blocking writes synchronously; batch writes off the event loop, one write after another.
  it.each(['blocking', 'batch'])(
    '%s: rotates at --audit-log-maxsize, keeps --audit-log-maxbackup backups, gzipped',
    async (mode) => {
      const logDir = join(dir, `rotated-${mode}`);
      const path = join(logDir, 'audit.log');
      const s = await start([
        `--audit-log-path=${path}`,
        `--audit-log-mode=${mode}`,
        '--audit-log-maxsize=1',
        '--audit-log-maxbackup=2',
        '--audit-log-compress',
      ]);
      // Each create logs request and response objects of ~150 KB: 16 of them are ~5 MB of log.
      const big = 'x'.repeat(150 * 1024);
      for (let i = 0; i < 16; i++) {
        const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { big } };
        const res = await send(
          s.url,
          s.kubeconfigPath,
          'admin',
          `rot-${i}`,
          'POST',
          '/api/v1/namespaces/default/configmaps',
          body,
        );
        expect(res.status).toBe(201);
      }
      await s.close(); // batch mode: flushes what is queued
      const names = readdirSync(logDir).sort();
      const backups = names.filter((n) => n !== 'audit.log');
      expect(names).toContain('audit.log');
      expect(backups).toHaveLength(2);
      for (const b of backups) expect(b).toMatch(/^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log\.gz$/);
      expect(readFileSync(path).length).toBeLessThanOrEqual(1024 * 1024);
      const ids = new Set<string>();
      for (const b of backups) {
        const text = gunzipSync(readFileSync(join(logDir, b))).toString('utf8');
        const size = Buffer.byteLength(text);
        expect(size).toBeGreaterThan(0);
        expect(size).toBeLessThanOrEqual(1024 * 1024);
        for (const line of text.split('\n').filter((l) => l !== ''))
          ids.add((JSON.parse(line) as { auditID: string }).auditID);
      }
      for (const e of readEvents(path)) ids.add(e.auditID);
      // The newest events are all kept (older files were removed beyond the two backups).
      expect(ids.has('rot-15')).toBe(true);
      expect(ids.has('rot-14')).toBe(true);
      expect(ids.has('rot-0')).toBe(false);
    },
  );
});

describe('modes', () => {
  const full = '/dev/full';

  it('blocking-strict fails a request whose event cannot be written; blocking does not', async () => {
    if (!existsSync(full)) {
      if (process.env['CI'] === 'true') throw new Error('/dev/full is missing');
      return;
    }
    const strict = await start([
      `--audit-log-path=${full}`,
      '--audit-log-mode=blocking-strict',
      '--audit-log-maxsize=1',
    ]);
    const refused = await send(strict.url, strict.kubeconfigPath, 'admin', 'strict-1', 'GET', '/version');
    expect(refused.status).toBe(500);
    expect(JSON.parse(refused.body)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'InternalError',
      message: 'Internal error occurred: failed to store audit event',
      code: 500,
    });
    expect(refused.headers['audit-id']).toBe('strict-1');

    const lenient = await start([`--audit-log-path=${full}`, '--audit-log-mode=blocking']);
    const served = await send(lenient.url, lenient.kubeconfigPath, 'admin', 'lenient-1', 'GET', '/version');
    expect(served.status).toBe(200);
    expect(lenient.logs.some((l) => l.includes("Error in audit plugin 'log'"))).toBe(true);
  });

  it('batch mode writes asynchronously and loses no event at shutdown', async () => {
    const path = join(dir, 'batch', 'audit.log');
    const s = await start([
      `--audit-log-path=${path}`,
      '--audit-log-mode=batch',
      '--audit-log-batch-max-size=100000',
      '--audit-log-batch-buffer-size=100000',
      '--audit-log-batch-max-wait=1h',
    ]);
    const n = 60;
    await Promise.all(
      Array.from({ length: n }, (_, i) =>
        send(s.url, s.kubeconfigPath, 'admin', `batch-${i}`, 'GET', '/version'),
      ),
    );
    // Nothing is written while the batch is open: the requests did not wait for the log.
    expect(readEvents(path)).toEqual([]);
    await s.close();
    const events = readEvents(path);
    for (let i = 0; i < n; i++) {
      expect(events.filter((e) => e.auditID === `batch-${i}`).map((e) => e.stage)).toEqual([
        'RequestReceived',
        'ResponseComplete',
      ]);
    }
  });

  it('batch mode with the defaults writes soon after the request', async () => {
    const path = join(dir, 'batch-default', 'audit.log');
    const s = await start([`--audit-log-path=${path}`, '--audit-log-mode=batch']);
    await send(s.url, s.kubeconfigPath, 'admin', 'soon-1', 'GET', '/version');
    const events = await waitFor(
      () => readEvents(path),
      (evs) => evs.some((e) => e.stage === 'ResponseComplete'),
    );
    expect(events.map((e) => [e.auditID, e.stage])).toEqual([
      ['soon-1', 'RequestReceived'],
      ['soon-1', 'ResponseComplete'],
    ]);
  });
});
