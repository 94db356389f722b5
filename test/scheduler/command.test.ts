/** `capstan scheduler`'s flags, configuration file and secure port. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runSchedulerCommand, schedulerConfigOf, SCHEDULER_FLAGS } from '../../src/scheduler/command.js';
import { startHealthServer } from '../../src/scheduler/health.js';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('capstan scheduler', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'capstan-scheduler-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it("has kube-scheduler's defaults", async () => {
    const flags = SCHEDULER_FLAGS.parse([]);
    expect(flags.values.get('secure-port')).toBe(10259);
    const cfg = await schedulerConfigOf(flags);
    expect(cfg.leaderElection).toMatchObject({
      leaderElect: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      resourceLock: 'leases',
      resourceName: 'kube-scheduler',
      resourceNamespace: 'kube-system',
    });
    expect(cfg.podInitialBackoffSeconds).toBe(1);
    expect(cfg.podMaxBackoffSeconds).toBe(10);
    expect(cfg.profiles.map((p) => p.schedulerName)).toEqual(['default-scheduler']);
  });

  it('reads a KubeSchedulerConfiguration; flags given override its leader election', async () => {
    const path = join(dir, 'config.yaml');
    await writeFile(
      path,
      [
        'apiVersion: kubescheduler.config.k8s.io/v1',
        'kind: KubeSchedulerConfiguration',
        'podInitialBackoffSeconds: 2',
        'podMaxBackoffSeconds: 20',
        'percentageOfNodesToScore: 30',
        'leaderElection:',
        '  leaderElect: true',
        '  leaseDuration: 30s',
        'profiles:',
        '- schedulerName: default-scheduler',
        '- schedulerName: no-scoring',
        '  plugins:',
        '    score:',
        '      disabled:',
        "      - name: '*'",
        '  pluginConfig:',
        '  - name: NodeResourcesFit',
        '    args:',
        '      scoringStrategy:',
        '        type: MostAllocated',
      ].join('\n'),
    );
    const cfg = await schedulerConfigOf(SCHEDULER_FLAGS.parse(['--config', path, '--leader-elect=false']));
    expect(cfg.podInitialBackoffSeconds).toBe(2);
    expect(cfg.percentageOfNodesToScore).toBe(30);
    expect(cfg.leaderElection.leaderElect).toBe(false);
    expect(cfg.leaderElection.leaseDurationMs).toBe(30_000);
    expect(cfg.profiles.map((p) => p.schedulerName)).toEqual(['default-scheduler', 'no-scoring']);
  });

  it('exits 1 naming an unknown plugin, 2 for an unknown flag', async () => {
    const path = join(dir, 'bad.yaml');
    await writeFile(
      path,
      [
        'apiVersion: kubescheduler.config.k8s.io/v1',
        'kind: KubeSchedulerConfiguration',
        'profiles:',
        '- schedulerName: default-scheduler',
        '  plugins:',
        '    multiPoint:',
        '      enabled:',
        '      - name: NotAPlugin',
      ].join('\n'),
    );
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: x\n',
    );
    const errors: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
      errors.push(a.map(String).join(' '));
    });
    try {
      expect(
        await runSchedulerCommand(['--config', path, '--kubeconfig', kubeconfig, '--secure-port=0']),
      ).toBe(1);
      expect(errors.join('\n')).toContain('MultiPointPlugin "NotAPlugin" does not exist');
      expect(await runSchedulerCommand(['--no-such-flag'])).toBe(2);
    } finally {
      spy.mockRestore();
    }
  });

  it('serves /healthz and /metrics over HTTPS', async () => {
    const h = await startHealthServer(() => 'scheduler_pending_pods{queue="active"} 0\n', '127.0.0.1', 0);
    try {
      expect(await get(h.port, '/healthz')).toEqual({ status: 200, body: 'ok' });
      const m = await get(h.port, '/metrics');
      expect(m.body).toContain('scheduler_pending_pods');
      expect((await get(h.port, '/nope')).status).toBe(404);
    } finally {
      await h.close();
    }
  });
});
