/**
 * `capstan bench scheduler` at tiny sizes, with Capstan's scheduler only (CI has no
 * kube-scheduler): the bench starts its own server, simulated nodes and scheduler processes from
 * the build, and the report carries every figure of every case with all pods bound where the
 * case's constraint allows. No figure is compared with a time: the machine is shared.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBenchCommand } from '../../src/bench/command.js';
import { DEFAULT_SCENARIOS, parseBenchArgs } from '../../src/bench/options.js';
import type { RunReport } from '../../src/bench/report.js';
import { dueAt, until } from '../../src/bench/scheduler/measure.js';
import { checkPlacement } from '../../src/bench/scheduler/placement.js';
import { capstanEntry, kubeSchedulerConfig } from '../../src/bench/scheduler/process.js';
import { FlagError } from '../../src/flags/flags.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-bench-sched-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('capstan bench scheduler', () => {
  /** Runs the plain case on 8 pods and 4 nodes with `flag`; the run must succeed. */
  async function plainRun(jsonName: string, flag: string): Promise<RunReport> {
    capstanEntry(); // throws without a build (npm run build): these runs need one, in CI too
    const json = join(dir, jsonName);
    const err: string[] = [];
    const code = await runBenchCommand(
      ['scheduler', '--pods=8', '--nodes=4', '--scheduler-cases=plain', flag, '--json', json],
      { out: () => undefined, err: (l) => err.push(l) },
    );
    expect(err.filter((l) => l.startsWith('capstan bench:'))).toEqual([]);
    expect(code).toBe(0);
    return JSON.parse(await readFile(json, 'utf8')) as RunReport;
  }

  it('flags: sizes by preset and flag, the cases, the same QPS for every scheduler', () => {
    const quick = parseBenchArgs(['scheduler']);
    expect(quick?.scheduler).toMatchObject({ pods: 500, nodes: 100, qps: 5000, burst: 5000, rounds: 1 });
    expect(quick?.scheduler.cases).toEqual(['plain', 'anti-affinity', 'spread']);
    const full = parseBenchArgs(['scheduler', '--preset=full', '--scheduler-binary=/x/kube-scheduler']);
    expect(full?.scheduler).toMatchObject({
      pods: 5000,
      nodes: 1000,
      binary: '/x/kube-scheduler',
      rounds: 3,
    });
    const sized = parseBenchArgs([
      'scheduler',
      '--pods=7',
      '--nodes=3',
      '--scheduler-qps=50',
      '--scheduler-cases=spread',
    ]);
    expect(sized?.scheduler).toMatchObject({ pods: 7, nodes: 3, qps: 50, cases: ['spread'], backlog: false });
    expect(parseBenchArgs(['scheduler', '--scheduler-backlog'])?.scheduler.backlog).toBe(true);
    expect(sized?.scheduler.createRate).toBeUndefined();
    expect(parseBenchArgs(['scheduler', '--scheduler-create-rate=150'])?.scheduler.createRate).toBe(150);
    expect(() => parseBenchArgs(['scheduler', '--scheduler-create-rate=-1'])).toThrow(FlagError);
    expect(() => parseBenchArgs(['scheduler', '--scheduler-create-rate=10', '--scheduler-backlog'])).toThrow(
      FlagError,
    );
    expect(() => parseBenchArgs(['scheduler', '--scheduler-cases=bogus'])).toThrow(FlagError);
    // The ceiling binder ignores constraints, so it runs plain pods only.
    expect(() => parseBenchArgs(['scheduler', '--scheduler-ceiling'])).toThrow(/--scheduler-cases=plain/);
    expect(
      parseBenchArgs(['scheduler', '--scheduler-ceiling', '--scheduler-cases=plain'])?.scheduler.ceiling,
    ).toBe(true);
    expect(DEFAULT_SCENARIOS).not.toContain('scheduler');
    const yaml = kubeSchedulerConfig({ kubeconfig: '/k', qps: 50, burst: 100, dir: '/d' });
    expect(yaml).toContain('kind: KubeSchedulerConfiguration');
    expect(yaml).toContain('  qps: 50\n  burst: 100');
    expect(yaml).toContain('leaderElect: false');
  });

  it('the placement check catches a broken anti-affinity or spread', () => {
    const names = ['pod-0', 'pod-1', 'pod-2', 'pod-3'];
    const zones = new Map([
      ['n0', 'zone-0'],
      ['n1', 'zone-1'],
    ]);
    const spread = (node: string) => (pod: string) => (pod === 'pod-3' ? 'n1' : node);
    expect(checkPlacement('spread', names, spread('n0'), zones, 1)).toMatch(/zone skew 2/);
    expect(checkPlacement('anti-affinity', names, () => 'n0', zones, 2)).toMatch(
      /two pods of group g0 on n0/,
    );
    const alternate = (pod: string): string => (Number(pod.slice(4)) % 2 === 0 ? 'n0' : 'n1');
    expect(checkPlacement('spread', names, alternate, zones, 1)).toBeUndefined();
    expect(checkPlacement('anti-affinity', names, (p) => `n${p}`, zones, 2)).toBeUndefined();
  });

  it(
    'measures capstan scheduler on every case: all pods bound, every figure present',
    { timeout: 600_000 },
    async () => {
      capstanEntry(); // throws without a build (npm run build): this test needs one, in CI too
      const json = join(dir, 'sched.json');
      let out = '';
      const err: string[] = [];
      const code = await runBenchCommand(['scheduler', '--pods=8', '--nodes=4', '--json', json], {
        out: (t) => (out += t),
        err: (l) => err.push(l),
      });
      expect(err.filter((l) => l.startsWith('capstan bench:'))).toEqual([]);
      expect(code).toBe(0);
      expect(out).toContain('== scheduler');
      const report = JSON.parse(await readFile(json, 'utf8')) as RunReport;
      expect(report.failures).toBeUndefined();
      expect(report.subjects?.map((s) => s.product)).toEqual(['capstan scheduler']);
      const rows = report.rows.filter((r) => r.scenario === 'scheduler');
      expect(rows.map((r) => r.case)).toEqual([
        'plain, 8 pods on 4 nodes',
        'pod anti-affinity (hostname, 4 groups), 8 pods on 4 nodes',
        'topology spread (zone, maxSkew 1, 4 zones), 8 pods on 4 nodes',
      ]);
      for (const r of rows) {
        expect(r.note).toBeUndefined();
        expect(r.figures['pods bound']).toBe(8);
        for (const f of ['pods/s', 'p50 ms', 'p99 ms', 'CPU s', 'peak RSS MiB', 'end RSS MiB'])
          expect(Number.isFinite(r.figures[f]), `${r.case}: ${f}`).toBe(true);
        expect(r.figures['peak RSS MiB']).toBeGreaterThan(0);
        expect(r.figures['p99 ms']).toBeGreaterThanOrEqual(r.figures['p50 ms'] as number);
      }
    },
  );

  it(
    'backlog: every pod exists before the scheduler starts; pods/s from the first bind to the last',
    { timeout: 300_000 },
    async () => {
      const report = await plainRun('backlog.json', '--scheduler-backlog');
      const rows = report.rows.filter((r) => r.scenario === 'scheduler');
      expect(rows.map((r) => r.case)).toEqual(['plain, 8 pods on 4 nodes, backlog']);
      const [row] = rows;
      expect(row?.note).toBeUndefined();
      expect(row?.figures['pods bound']).toBe(8);
      expect(row?.figures['pods/s']).toBeGreaterThan(0);
      // The first bind comes after the scheduler's start, which came after every create.
      expect(row?.figures['first bind s']).toBeGreaterThan(0);
      expect(row?.figures['p50 ms']).toBeUndefined();
    },
  );

  it(
    'create rate: the pods are created at the given steady rate, whatever the server could take',
    { timeout: 300_000 },
    async () => {
      const report = await plainRun('paced.json', '--scheduler-create-rate=4');
      const [row] = report.rows.filter((r) => r.scenario === 'scheduler');
      expect(row?.case).toBe('plain, 8 pods on 4 nodes, created at 4/s');
      expect(row?.figures['pods bound']).toBe(8);
      // 8 creates 0.25 s apart span at least 1.75 s; unpaced, a server creates 8 pods in a few ms.
      expect(row?.figures['creates/s']).toBeLessThan(5);
      expect(row?.figures['pods/s']).toBeLessThan(5);
      expect(row?.figures['p99 ms']).toBeGreaterThanOrEqual(row?.figures['p50 ms'] as number);
    },
  );

  it(
    'ceiling: A is the binder that does no scheduling work, and it binds every pod',
    { timeout: 300_000 },
    async () => {
      const report = await plainRun('ceiling.json', '--scheduler-ceiling');
      expect(report.subjects?.map((s) => [s.label, s.product])).toEqual([
        ['ceiling: binds only', 'ceiling binder'],
      ]);
      const [row] = report.rows.filter((r) => r.scenario === 'scheduler');
      expect(row?.subject).toBe('ceiling: binds only');
      expect(row?.note).toBeUndefined();
      expect(row?.figures['pods bound']).toBe(8);
      expect(row?.figures['pods/s']).toBeGreaterThan(0);
    },
  );

  it('the binder command wants a kubeconfig and nothing else', async () => {
    const err: string[] = [];
    const io = { out: () => undefined, err: (l: string) => err.push(l) };
    expect(await runBenchCommand(['binder'], io)).toBe(2);
    expect(await runBenchCommand(['binder', '--kubeconfig=/k', '--bogus'], io)).toBe(2);
    expect(err).toEqual([
      'usage: capstan bench binder --kubeconfig=PATH',
      'usage: capstan bench binder --kubeconfig=PATH',
    ]);
    expect(await runBenchCommand(['binder', `--kubeconfig=${join(dir, 'missing')}`], io)).toBe(1);
    expect(err[2]).toMatch(/^capstan bench binder: /);
  });

  it('paces by the clock: pod i is due i/rate seconds after the start', async () => {
    const start = process.hrtime.bigint();
    expect(dueAt(start, 0, 4)).toBe(start);
    expect(dueAt(start, 3, 4)).toBe(start + 750_000_000n);
    const t = process.hrtime.bigint();
    await until(t + 50_000_000n);
    // Never early: the clock, not the timer, decides.
    expect(process.hrtime.bigint() - t).toBeGreaterThanOrEqual(50_000_000n);
    const past = process.hrtime.bigint();
    await until(past - 1_000_000_000n);
    expect(Number(process.hrtime.bigint() - past) / 1e6).toBeLessThan(20);
  });
});
