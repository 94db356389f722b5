/**
 * `capstan bench cluster` and `capstan bench controllers` at tiny sizes, on Capstan's side only
 * (CI has no reference binaries): the bench starts its own server, simulated nodes and
 * controller manager from the build, every step completes, and the report carries each step's
 * figures. No figure is compared with a time: the machine is shared. The pure parts (flags, the
 * histogram quantile, the goal lines, kwok's Node) are checked without processes.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { histogramDelta, histogramQuantile, parseRequestHistogram } from '../../src/bench/cluster/metrics.js';
import { clusterGoals, controllerGoals } from '../../src/bench/cluster/goals.js';
import { kwokNode } from '../../src/bench/cluster/kube-stack.js';
import { measureCeiling } from '../../src/bench/cluster/manager-ceiling.js';
import { podCount } from '../../src/bench/cluster/watch.js';
import { BenchClient } from '../../src/bench/client.js';
import { spawnServer } from '../../src/bench/server-process.js';
import { readKubeconfigCredentials } from '../../src/pki/kubeconfig-credentials.js';
import { parseClusterArgs } from '../../src/bench/cluster/options.js';
import { CLUSTER_STEPS } from '../../src/bench/cluster/scenarios.js';
import { runBenchCommand } from '../../src/bench/command.js';
import type { Row, RunReport } from '../../src/bench/report.js';
import { capstanEntry } from '../../src/bench/scheduler/process.js';
import { FlagError } from '../../src/flags/flags.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-bench-cluster-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `capstan bench <argv>`, collecting stdout and stderr. */
async function bench(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runBenchCommand(argv, {
    out: (t) => (out += t),
    err: (l) => (err += `${l}\n`),
  });
  return { code, out, err };
}

function finite(row: Row | undefined, figure: string): number {
  const x = row?.figures[figure];
  expect(x, `${row?.case ?? 'missing row'}: ${figure}`).toBeTypeOf('number');
  expect(Number.isFinite(x), `${row?.case}: ${figure} = ${x}`).toBe(true);
  return x as number;
}

describe('capstan bench cluster: the parts', () => {
  it('flags: presets, overrides, steps; bad input is a FlagError', () => {
    const tiny = parseClusterArgs('cluster', []);
    expect(tiny?.sizes).toMatchObject({ nodes: 20, replicas: 200, jobs: 20 });
    expect([...(tiny?.steps ?? [])]).toEqual([...CLUSTER_STEPS]);
    expect(tiny?.kubeBinDir).toBeUndefined();
    const full = parseClusterArgs('cluster', [
      '--preset=full',
      'jobs',
      '--kube-bin-dir=/b',
      '--kube-api-qps=50',
    ]);
    expect(full?.sizes).toMatchObject({ nodes: 1000, replicas: 10_000, jobs: 1000 });
    expect([...(full?.steps ?? [])]).toEqual(['jobs']);
    expect(full).toMatchObject({ kubeBinDir: '/b', qps: 50 });
    expect(parseClusterArgs('cluster', ['--preset=medium', '--replicas=7'])?.sizes.replicas).toBe(7);
    expect(() => parseClusterArgs('cluster', ['bogus'])).toThrow(FlagError);
    expect(() => parseClusterArgs('cluster', ['--preset=huge'])).toThrow(FlagError);
    expect(() => parseClusterArgs('cluster', ['--nodes=0'])).toThrow(FlagError);
    expect(() => parseClusterArgs('controllers', ['jobs'])).toThrow(FlagError);
    expect(parseClusterArgs('controllers', ['--manager-ceiling'])?.managerCeiling).toBe(true);
    expect(parseClusterArgs('controllers', [])?.managerCeiling).toBe(false);
    expect(() => parseClusterArgs('cluster', ['--manager-ceiling'])).toThrow(/bench controllers/);
  });

  it('API p99 from the request histogram: WATCH left out, interpolated within the bucket', () => {
    const line = (verb: string, le: string, n: number): string =>
      `apiserver_request_duration_seconds_bucket{component="apiserver",verb="${verb}",resource="pods",le="${le}"} ${n}`;
    const before = parseRequestHistogram(
      [line('GET', '0.1', 0), line('GET', '0.2', 0), line('GET', '+Inf', 0)].join('\n'),
    );
    const text = [
      '# HELP apiserver_request_duration_seconds x',
      line('GET', '0.1', 90),
      line('GET', '0.2', 100),
      line('GET', '+Inf', 100),
      line('WATCH', '0.1', 0),
      line('WATCH', '0.2', 0),
      line('WATCH', '+Inf', 500),
    ].join('\n');
    const after = parseRequestHistogram(text);
    expect(after.get(Infinity)).toBe(100);
    const p99 = histogramQuantile(histogramDelta(before, after), 0.99);
    expect(p99).toBeCloseTo(0.19, 5);
    expect(histogramQuantile(histogramDelta(after, after), 0.99)).toBeNaN();
  });

  it('goal lines judge the ratios, or say they cannot', () => {
    const row = (subject: string, kase: string, figures: Record<string, number>): Row => ({
      scenario: 'cluster',
      case: kase,
      subject,
      figures,
    });
    const rows = [
      row('A: capstan', 'Deployment of 10 replicas', {
        'time s': 2,
        'stack RSS MiB': 100,
        'start p99 ms': 900,
      }),
      row('B: kube', 'Deployment of 10 replicas', {
        'time s': 7,
        'stack RSS MiB': 300,
        'start p99 ms': 6000,
      }),
    ];
    const lines = clusterGoals(rows).join('\n');
    expect(lines).toContain('B ÷ A = 3.50 (goal B ÷ A ≥ 3): met');
    expect(lines).toContain('B ÷ A = 3 (goal B ÷ A ≥ 4): NOT met');
    expect(lines).toContain('B: kube: worst pod start-up p99 6,000 ms (SLO ≤ 5,000 ms): NOT met');
    expect(controllerGoals([]).every((l) => l.endsWith('not judged'))).toBe(true);
    const cm = (a: number, b: number): string[] =>
      controllerGoals([
        row('A: ceiling', 'Deployment 0 → 10 replicas', { 'pods/s': a }),
        row('B: kube', 'Deployment 0 → 10 replicas', { 'pods/s': b, 'manager RSS MiB': 190 }),
      ]);
    expect(cm(900, 500)).toEqual([
      expect.stringMatching(/A ÷ B = 1.80× kube's here \(goal 2×\): out of reach$/),
    ]);
    expect(cm(1100, 500)).toEqual([
      expect.stringMatching(/A ÷ B = 2.20× kube's here \(goal 2×\): within reach$/),
    ]);
  });

  it("kwok's Node carries kwok's annotation and Capstan's simulated capacity", () => {
    const node = kwokNode('kwok-node-0');
    expect(node.metadata?.annotations).toMatchObject({ 'kwok.x-k8s.io/node': 'fake' });
    expect(node.status?.allocatable).toMatchObject({ pods: '110', cpu: '32' });
  });
});

describe('capstan bench cluster and controllers on Capstan alone', () => {
  it('every step completes and reports its figures', { timeout: 600_000 }, async () => {
    capstanEntry(); // throws without a build (npm run build): this test needs one, in CI too
    const json = join(dir, 'cluster.json');
    const r = await bench([
      'cluster',
      '--nodes=5',
      '--replicas=20',
      '--jobs=5',
      '--idle-seconds=2',
      '--step-timeout=180s',
      `--json=${json}`,
    ]);
    expect(r.err).not.toContain('failed');
    expect(r.code).toBe(0);
    const report = JSON.parse(await readFile(json, 'utf8')) as RunReport & { goals: string[] };
    expect(report.failures).toBeUndefined();
    expect(report.subjects?.map((s) => s.label)).toEqual(['A: capstan']);
    const rows = report.rows;
    const by = (prefix: string): Row | undefined => rows.find((x) => x.case.startsWith(prefix));
    expect(rows.map((x) => x.case)).toEqual([
      '5 nodes registered and Ready',
      '5 nodes idle for 2 s',
      'Deployment of 20 replicas, until all Running',
      'rolling update of the 20 replicas (25% surge, 25% unavailable)',
      'delete the Deployment, until its last pod is gone',
      '5 Jobs of one pod, until all Complete',
    ]);
    for (const row of rows.filter((x) => x.scenario === 'cluster')) {
      expect(finite(row, 'time s')).toBeGreaterThan(0);
      expect(finite(row, 'stack RSS MiB')).toBeGreaterThan(10);
      expect(finite(row, 'stack CPU s')).toBeGreaterThan(0);
      expect(finite(row, 'API p99 ms')).toBeGreaterThan(0);
    }
    for (const prefix of ['Deployment of', 'rolling update', '5 Jobs']) {
      const row = by(prefix);
      expect(finite(row, 'start p99 ms')).toBeGreaterThanOrEqual(finite(row, 'start p50 ms'));
    }
    expect(finite(by('5 nodes idle'), 'nodes CPU % of a core')).toBeGreaterThanOrEqual(0);
    expect(finite(by('5 nodes idle'), 'nodes RSS MiB')).toBeGreaterThan(10);
    expect(r.out).toContain('== cluster');
    expect(report.goals.some((g) => g.includes('idle simulated nodes'))).toBe(true);

    const c = await bench([
      'controllers',
      '--replicas=30',
      '--step-timeout=180s',
      `--json=${join(dir, 'cm.json')}`,
    ]);
    expect(c.err).not.toContain('failed');
    expect(c.code).toBe(0);
    const cm = JSON.parse(await readFile(join(dir, 'cm.json'), 'utf8')) as RunReport;
    expect(cm.rows).toHaveLength(1);
    const row = cm.rows[0];
    expect(row?.case).toBe('Deployment 0 → 30 replicas');
    expect(finite(row, 'pods/s')).toBeGreaterThan(0);
    expect(finite(row, 'manager RSS MiB')).toBeGreaterThan(10);
    expect(finite(row, 'foreground delete s')).toBeGreaterThan(0);

    // The ceiling subject: no manager, the bench's own creates of the same pods.
    const ceiling = await bench([
      'controllers',
      '--manager-ceiling',
      '--replicas=30',
      '--step-timeout=180s',
      `--json=${join(dir, 'ceiling.json')}`,
    ]);
    expect(ceiling.err).not.toContain('failed');
    expect(ceiling.code).toBe(0);
    const cr = JSON.parse(await readFile(join(dir, 'ceiling.json'), 'utf8')) as RunReport & {
      goals: string[];
    };
    expect(cr.rows.map((x) => [x.subject, x.case])).toEqual([['A: ceiling', 'Deployment 0 → 30 replicas']]);
    expect(finite(cr.rows[0], 'pods/s')).toBeGreaterThan(0);
    expect(cr.rows[0]?.figures['manager RSS MiB']).toBeUndefined();
    expect(cr.subjects?.map((x) => x.product)).toEqual(['ceiling']);
    expect(cr.goals).toEqual([expect.stringMatching(/^pods created per second, ceiling .*: not judged$/)]);
  });

  it('the ceiling creates every pod, then leaves none behind', { timeout: 120_000 }, async () => {
    const server = await spawnServer({
      dataDir: join(dir, 'ceiling-data'),
      extraArgs: ['--controllers='],
      main: capstanEntry(),
    });
    const client = new BenchClient(readKubeconfigCredentials(server.kubeconfigPath), 1);
    try {
      const seen: string[] = [];
      const row = await measureCeiling(
        { client, replicas: 20, namespace: 'ceiling', timeoutMs: 60_000 },
        (line) => seen.push(line),
      );
      expect(row.case).toBe('Deployment 0 → 20 replicas');
      expect(finite(row, 'pods/s')).toBeGreaterThan(0);
      expect(finite(row, 'last pod s')).toBeGreaterThanOrEqual(finite(row, 'first pod ms') / 1000);
      expect(seen.join('\n')).toContain('creating 20 pods of ceiling/bench');
      expect(await podCount(client, 'ceiling')).toBe(0);
      // A request the server refuses ends the run with the server's reason.
      await expect(
        measureCeiling({ client, replicas: 3, namespace: 'Not_A_Name', timeoutMs: 60_000 }, () => undefined),
      ).rejects.toThrow(/POST \/api\/v1\/namespaces: HTTP 422/);
    } finally {
      client.close();
      await server.stop();
    }
  });
});
