/**
 * The targets of issue 7, checked against the rows of one run. A target is judged only from a
 * row measured at its size; a run at smaller sizes says what it measured instead of claiming a
 * pass (a 10,000-object list in 0.2 s says little about 100,000).
 */
import type { Row } from './report.js';
import { fmt } from './stats.js';

/** One target's outcome. */
export interface TargetCheck {
  readonly target: string;
  /** `met`, `missed`, or `not measured` (no row at the target's size). */
  readonly verdict: 'met' | 'missed' | 'not measured';
  /** The figure(s) behind the verdict. */
  readonly measured: string;
}

function find(rows: readonly Row[], scenario: string, test: (r: Row) => boolean): Row | undefined {
  return rows.find((r) => r.scenario === scenario && test(r));
}

function ratioTo(row: Row | undefined, prefix: string): number | undefined {
  return row?.ratios?.find((x) => x.to.startsWith(prefix))?.value;
}

function check(
  target: string,
  value: number | undefined,
  ok: (v: number) => boolean,
  show: (v: number) => string,
): TargetCheck {
  if (value === undefined || !Number.isFinite(value))
    return { target, verdict: 'not measured', measured: '' };
  return { target, verdict: ok(value) ? 'met' : 'missed', measured: show(value) };
}

/** Checks every target that the rows allow. */
export function checkTargets(rows: readonly Row[]): TargetCheck[] {
  const create100 = find(
    rows,
    'create',
    (r) => r.case.startsWith('100 clients') && ratioTo(r, 'raw classic-level batch') !== undefined,
  );
  const fresh = find(rows, 'startup', (r) => r.case === 'fresh data dir');
  const populated = find(rows, 'startup', (r) => r.case === '100,000 objects');
  const list100k = find(rows, 'list', (r) => r.case === '100,000 objects, RV=0');
  const concurrent = find(rows, 'list', (r) => r.case === '100,000 objects, 10 concurrent RV=0');
  const watch10k = find(rows, 'watch', (r) => r.case.startsWith('10000 watchers, 100 writes/s'));
  const idleRss = fresh?.figures['idle RSS MiB'];
  const rise = concurrent?.figures['RSS rise MiB'];
  const body = concurrent?.figures['body MB'];
  return [
    check(
      'creates, 100 clients ≥ 50% of raw classic-level synced batch',
      ratioTo(create100, 'raw classic-level batch'),
      (v) => v >= 0.5,
      (v) => `${fmt(v * 100)}%`,
    ),
    check(
      'idle RSS ≤ 80 MiB',
      idleRss,
      (v) => v <= 80,
      (v) => `${fmt(v)} MiB`,
    ),
    check(
      'start to first request ≤ 300 ms, fresh data dir',
      fresh?.figures['first request ms'],
      (v) => v <= 300,
      (v) => `${fmt(v)} ms`,
    ),
    check(
      'start to first request ≤ 2 s with 100,000 objects',
      populated?.figures['first request ms'],
      (v) => v <= 2000,
      (v) => `${fmt(v)} ms`,
    ),
    check(
      'LIST 100,000 ConfigMaps (RV=0) ≤ 1 s',
      list100k?.figures['time ms'],
      (v) => v <= 1000,
      (v) => `${fmt(v)} ms`,
    ),
    check(
      '10 concurrent lists of 100,000 raise RSS by less than one response',
      rise === undefined || body === undefined ? undefined : rise / ((body * 1e6) / (1024 * 1024)),
      (v) => v < 1,
      (v) => `${fmt(v)} × one response (${fmt(rise ?? NaN)} MiB)`,
    ),
    check(
      '10,000 watchers at 100 writes/s: p99 ≤ 250 ms',
      watch10k?.figures['p99 ms'],
      (v) => v <= 250,
      (v) => `${fmt(v)} ms`,
    ),
  ];
}

/** The markdown section of the checks. */
export function targetsMarkdown(rows: readonly Row[]): string {
  const lines = ['## Targets (issue 7)', '', '| target | verdict | measured |', '|---|---|---|'];
  for (const c of checkTargets(rows)) lines.push(`| ${c.target} | ${c.verdict} | ${c.measured} |`);
  lines.push('', '"not measured": the run did not reach the target\'s size (`--preset=full` does).', '');
  return lines.join('\n');
}
