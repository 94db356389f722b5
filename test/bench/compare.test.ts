/**
 * `capstan bench --compare`: two servers measured in one run, round by round, interleaved; the
 * report names each by what `/version` says it is and gives B ÷ A with its spread. Two tiny
 * in-process servers stand for A and B.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBenchCommand } from '../../src/bench/command.js';
import type { RunReport } from '../../src/bench/report.js';
import { compareRounds, medianInterval, mergeRounds } from '../../src/bench/rounds.js';
import { median } from '../../src/bench/stats.js';
import { startTestServer, type TestServer } from '../support/server.js';

let dir: string;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'capstan-bench-compare-'));
  [a, b] = await Promise.all([
    startTestServer(),
    startTestServer({ args: ['--enable-priority-and-fairness=false'] }),
  ]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('capstan bench --compare', () => {
  it('runs the scenarios on both servers, interleaved, and reports labelled subjects and ratios', async () => {
    const json = join(dir, 'c.json');
    const markdown = join(dir, 'c.md');
    let out = '';
    const err: string[] = [];
    const code = await runBenchCommand(
      [
        'get',
        'cold',
        '--kubeconfig',
        a.kubeconfigPath,
        '--compare',
        b.kubeconfigPath,
        '--clients=2',
        '--duration=150ms',
        '--rounds=2',
        '--cold-objects=20',
        '--cold-history=40',
        '--list-repeats=1',
        '--json',
        json,
        '--markdown',
        markdown,
      ],
      { out: (t) => (out += t), err: (l) => err.push(l) },
    );
    expect(err.filter((l) => l.startsWith('capstan bench:'))).toEqual([]);
    expect(code).toBe(0);
    const report = JSON.parse(await readFile(json, 'utf8')) as RunReport;
    // What /version of these servers says: Capstan's gitVersion. The backend of an in-process
    // server is not visible from outside (its process is the test runner).
    const labels = ['A', 'B'].map((s) => `${s}: capstan v1.33.0+capstan (backend unknown)`);
    expect(report.subjects?.map((s) => s.label)).toEqual(labels);
    expect(report.subjects?.map((s) => s.product)).toEqual(['capstan', 'capstan']);
    expect(report.rounds).toBe(2);
    // Rounds alternate their order: A then B, then B then A.
    const order = err
      .map((l) => /^crud, round (\d)\/2: ([AB]):/.exec(l))
      .filter((m) => m !== null)
      .map((m) => `${m[1]}${m[2]}`);
    expect(order).toEqual(['1A', '1B', '2B', '2A']);
    // Only the verb named was timed; each side has its row.
    const get = report.rows.filter((r) => r.scenario === 'get');
    expect(get.map((r) => r.subject)).toEqual(labels);
    expect(report.rows.some((r) => r.scenario === 'create')).toBe(false);
    const ops = report.comparisons?.find((c) => c.scenario === 'get' && c.figure === 'ops/s');
    expect(ops?.rounds).toBe(2);
    expect(ops?.a).toBeGreaterThan(0);
    expect(ops?.b).toBeGreaterThan(0);
    // The ratio is the median of the rounds' ratios (not B's median over A's, which two noisy
    // rounds can pull apart), and the spread is their smallest and largest.
    const perRound = ops?.perRound ?? [];
    expect(perRound).toHaveLength(2);
    expect(ops?.ratio).toBeCloseTo(median(perRound), 9);
    expect(ops?.low).toBe(Math.min(...perRound));
    expect(ops?.high).toBe(Math.max(...perRound));
    // The cold scenario: every probe, cold and warm, on both; first use, since the bench did not
    // start these servers.
    const cold = report.comparisons?.filter((c) => c.scenario === 'cold' && c.figure === 'cold ms') ?? [];
    expect(cold.map((c) => c.case.replace(/.*events, /, ''))).toEqual([
      'RV unset',
      'RV=0',
      'limit=500 pages',
      '10 lists at once, RV=0',
      'watch, first event',
    ]);
    const coldRows = report.rows.filter((r) => r.scenario === 'cold');
    expect(coldRows).toHaveLength(10);
    for (const r of coldRows) {
      expect(r.figures['cold ms']).toBeGreaterThan(0);
      expect(r.figures['warm ms']).toBeGreaterThan(0);
      expect(r.note).toMatch(/^cold = first use after the history/);
    }
    const md = await readFile(markdown, 'utf8');
    expect(md).toContain('## Comparison (B ÷ A)');
    for (const l of labels) expect(md).toContain(`- ${l}: https://127.0.0.1:`);
    expect(md).toMatch(
      /\| get \| 2 clients, JSON \| ops\/s \| [\d,.]+ \| [\d,.]+ \| [\d.]+ \([\d.]+–[\d.]+, 2 rounds\) \|/,
    );
    expect(out).toContain('-- get: B / A');
  });
});

describe('capstan bench --compare flags', () => {
  it('refuses server flags for a server given by kubeconfig', async () => {
    const err: string[] = [];
    const code = await runBenchCommand(['--compare', 'x.kubeconfig', '--compare-server-arg=--v=2'], {
      out: () => undefined,
      err: (l) => err.push(l),
    });
    expect(code).toBe(2);
    expect(err[0]).toBe(
      'capstan bench: --compare-server-arg is for a server the bench starts: drop it or --compare',
    );
  });
});

describe('rounds', () => {
  const row = (subject: string, v: number) => ({
    scenario: 'get',
    case: '1 clients',
    subject,
    figures: { 'ops/s': v },
  });

  it('medians each figure over the rounds and gives B ÷ A per round with its spread', () => {
    const a = { subject: 'A: x', rounds: [[row('A: x', 100)], [row('A: x', 50)], [row('A: x', 200)]] };
    const b = { subject: 'B: y', rounds: [[row('B: y', 110)], [row('B: y', 40)], [row('B: y', 260)]] };
    expect(mergeRounds(a)).toEqual([row('A: x', 100)]);
    const [c] = compareRounds(a, b);
    expect(c).toEqual({
      scenario: 'get',
      case: '1 clients',
      figure: 'ops/s',
      a: 100,
      b: 110,
      ratio: 1.1,
      low: 0.8,
      high: 1.3,
      rounds: 3,
      perRound: [1.1, 0.8, 1.3],
    });
    expect(median([1, 2, 3, 10])).toBe(2.5);
    // Too few rounds for an interval; with 20, the 5th and 16th smallest ratios.
    expect(c?.ci95).toBeUndefined();
    expect(medianInterval(Array.from({ length: 20 }, (_, i) => 20 - i))).toEqual([5, 16]);
    expect(medianInterval([1, 2, 3, 4, 5, 6, 7])).toBeUndefined();
    expect(median([])).toBeNaN();
  });

  it('runs warm-up rounds first, unmeasured, on each server', async () => {
    const json = join(dir, 'w.json');
    const markdown = join(dir, 'w.md');
    const err: string[] = [];
    const code = await runBenchCommand(
      [
        'get',
        '--kubeconfig',
        a.kubeconfigPath,
        '--compare',
        b.kubeconfigPath,
        '--clients=2',
        '--duration=100ms',
        '--rounds=1',
        '--warmup-rounds=2',
        '--json',
        json,
        '--markdown',
        markdown,
      ],
      { out: () => undefined, err: (l) => err.push(l) },
    );
    expect(err.filter((l) => l.startsWith('capstan bench:'))).toEqual([]);
    expect(code).toBe(0);
    const runs = err
      .map((l) => /^crud, (warm-up|round) (\d)\/\d.*: ([AB]):/.exec(l))
      .filter((m) => m !== null)
      .map((m) => `${m[1]} ${m[2]}${m[3]}`);
    expect(runs).toEqual(['warm-up 1A', 'warm-up 1B', 'warm-up 2A', 'warm-up 2B', 'round 1A', 'round 1B']);
    const report = JSON.parse(await readFile(json, 'utf8')) as RunReport;
    expect(report.rounds).toBe(1);
    expect(report.warmupRounds).toBe(2);
    // Only the measured round counts.
    const ops = report.comparisons?.find((c) => c.scenario === 'get' && c.figure === 'ops/s');
    expect(ops?.rounds).toBe(1);
    expect(ops?.perRound).toHaveLength(1);
    expect(await readFile(markdown, 'utf8')).toContain('2 unmeasured warm-up round(s)');
  });
});
