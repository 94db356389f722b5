/**
 * `capstan verify` against an in-process Capstan on memory-level: a short run passes with every
 * group of rules exercised; bugs planted in the continue tokens and in the watch cache
 * (`CAPSTAN_MODEL_BUG`) are caught and shrunk to at most 5 steps; `--seed`/`--path` replay the
 * printed counterexample to the same failure.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runVerifyCommand, type VerifyIo } from '../../src/verify/command.js';

interface Captured {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

async function verify(args: readonly string[]): Promise<Captured> {
  let out = '';
  let err = '';
  const io: VerifyIo = { out: (t) => (out += t), err: (t) => (err += t), tty: false };
  const code = await runVerifyCommand(args, io);
  return { code, out, err };
}

interface JsonReport {
  result: string;
  runs: number;
  rules: { rule: string; checked: number; failed: number }[];
  failure?: { rule: string; steps: string[]; seed: number; path: string; replay: string };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verify-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  delete process.env['CAPSTAN_MODEL_BUG'];
});

async function report(name: string): Promise<JsonReport> {
  return JSON.parse(await readFile(join(dir, name), 'utf8')) as JsonReport;
}

describe('capstan verify --in-process=memory', () => {
  it('passes on Capstan, exercising lists, pages, watches and the error cells', async () => {
    const r = await verify([
      '--in-process=memory',
      '--runs=60',
      '--seed=42',
      '--only=writes,lists,watch',
      // Capstan's unset watches are consistent: hold it to the spec's rule, not kube's legacy.
      '--unset-watch=consistent',
      '--stale-cache=forbid',
      '--name-selector-get=forbid',
      `--json=${join(dir, 'pass.json')}`,
    ]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('PASS: every rule held.');
    const j = await report('pass.json');
    expect(j.result).toBe('pass');
    expect(j.runs).toBe(60);
    const checked = Object.fromEntries(j.rules.map((x) => [x.rule, x.checked]));
    for (const rule of [
      'list-most-recent',
      'list-any',
      'list-exact',
      'list-not-older-than',
      'page-consistent',
      'invalid-combination',
      'watch-start-state',
      'watch-exact-start',
      'watch-no-loss-no-dup',
      'watch-bookmark',
      'watch-initial-events-end',
      'update-conflict',
    ])
      expect(checked[rule], rule).toBeGreaterThan(0);
  }, 60_000);

  it('checks the 410 and 504 cells', async () => {
    const r = await verify([
      '--in-process=memory',
      '--runs=20',
      '--seed=2',
      '--only=errors',
      `--json=${join(dir, 'err.json')}`,
    ]);
    expect(r.code, r.out).toBe(0);
    const checked = Object.fromEntries((await report('err.json')).rules.map((x) => [x.rule, x.checked]));
    // Capstan keeps revision 1 until compaction: an Exact list there answers the (empty) snapshot.
    expect(checked['list-exact']).toBeGreaterThan(0);
    expect(checked['too-large-rv']).toBeGreaterThan(0);
  }, 60_000);

  it('catches a continue-token bug with a counterexample of at most 5 steps, and replays it', async () => {
    process.env['CAPSTAN_MODEL_BUG'] = 'continue-skip';
    const r = await verify([
      '--in-process=memory',
      '--runs=200',
      '--seed=3',
      '--only=lists',
      `--json=${join(dir, 'bug1.json')}`,
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^FAIL (page-size|list-most-recent|list-exact|list-any|list-not-older-than)/m);
    const j = await report('bug1.json');
    const f = j.failure;
    expect(f).toBeDefined();
    if (f === undefined) return;
    expect(f.steps.length).toBeLessThanOrEqual(5);
    expect(f.steps.some((s) => /limit=/.test(s))).toBe(true);
    expect(r.out).toContain(`--seed=${f.seed} --path=${f.path}`);
    // The printed replay reproduces the same failure from the same steps.
    const again = await verify([
      '--in-process=memory',
      '--only=lists',
      `--seed=${f.seed}`,
      `--path=${f.path}`,
      `--json=${join(dir, 'bug1-replay.json')}`,
    ]);
    expect(again.code).toBe(1);
    const replayed = (await report('bug1-replay.json')).failure;
    expect(replayed?.rule).toBe(f.rule);
    expect(replayed?.steps).toEqual(f.steps);
  }, 60_000);

  it('catches a watch-cache bug (no DELETED when an update leaves the selection) in at most 5 steps', async () => {
    process.env['CAPSTAN_MODEL_BUG'] = 'watch-leave-selection';
    const r = await verify([
      '--in-process=memory',
      '--runs=200',
      '--seed=3',
      '--only=watch',
      `--json=${join(dir, 'bug2.json')}`,
    ]);
    expect(r.code).toBe(1);
    const f = (await report('bug2.json')).failure;
    expect(f?.rule).toBe('watch-no-loss-no-dup');
    expect(f?.steps.length).toBeLessThanOrEqual(5);
    expect(f?.steps.some((s) => s.startsWith('watch') && s.includes('tier'))).toBe(true);
    expect(r.out).toContain('want DELETED');
  }, 60_000);

  it('refuses bad flags with exit status 2', async () => {
    expect((await verify([])).code).toBe(2);
    expect((await verify(['--in-process=memory', '--kubeconfig=x'])).code).toBe(2);
    expect((await verify(['--in-process=memory', '--only=nope'])).code).toBe(2);
    expect((await verify(['--in-process=memory', '--path=1:2'])).code).toBe(2);
  });
});
