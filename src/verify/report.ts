/**
 * The outputs of `capstan verify`: the summary table, the counterexample as a replayable script,
 * and the JSON report.
 */
import { describeOp } from './ops.js';
import { RULES } from './rules.js';
import type { Counterexample, RunnerResult } from './runner.js';

/** The run's identity in reports. */
export interface ReportContext {
  readonly target: string;
  /** The command line, for the replay line. */
  readonly replayBase: string;
}

function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

/** The summary: runs, time, operations, and per rule checked and failed counts. */
export function summaryText(r: RunnerResult, ctx: ReportContext): string {
  const secs = r.durationMs / 1000;
  const lines = [
    `capstan verify: ${ctx.target}`,
    `runs ${r.runs} in ${secs.toFixed(1)} s (${(r.runs / Math.max(secs, 0.001)).toFixed(1)} runs/s), seed ${r.seed}${r.interrupted ? ', stopped by --time-limit' : ''}`,
    `operations: ${Object.entries(r.operations)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  ];
  if (r.unsupported.length > 0) lines.push(`refused by the server (tolerated): ${r.unsupported.join(', ')}`);
  lines.push('', `${pad('rule', 26)} ${pad('spec section', 28)} ${pad('checked', 8)} failed`);
  for (const row of r.tally.rows())
    lines.push(`${pad(row.rule, 26)} ${pad(row.section, 28)} ${pad(String(row.checked), 8)} ${row.failed}`);
  lines.push('');
  if (r.error !== undefined) lines.push(`ERROR (not a rule): ${r.error}`);
  else if (r.failure === undefined) lines.push('PASS: every rule held.');
  return lines.join('\n');
}

/** A counterexample as a script: the steps, the exchanges of the replay, the replay command. */
export function counterexampleText(f: Counterexample, ctx: ReportContext): string {
  const rule = f.rule === undefined ? undefined : RULES[f.rule];
  const lines = [
    `FAIL ${f.rule ?? '(exception)'}${rule === undefined ? '' : ` [spec: ${rule[0]}] ${rule[1]}`}`,
    `  ${f.message}`,
    '',
    `Shrunk to ${f.ops.length} step(s) after ${f.shrinks} shrink(s):`,
    ...f.ops.map((o, i) => `  ${i + 1}. ${describeOp(o)}`),
    '',
    `HTTP exchanges of the replay${f.reproduced ? '' : ' (it did NOT fail again: the failure may be timing-dependent)'}:`,
  ];
  for (const e of f.transcript) lines.push(`  > ${e.request}`, `  < ${e.response}`);
  lines.push('', `Replay: ${ctx.replayBase} --seed=${f.seed} --path=${f.path}`);
  return lines.join('\n');
}

/** The JSON report. */
export function jsonReport(r: RunnerResult, ctx: ReportContext, options: unknown): unknown {
  return {
    target: ctx.target,
    seed: r.seed,
    runs: r.runs,
    durationMs: Math.round(r.durationMs),
    interrupted: r.interrupted,
    options,
    operations: r.operations,
    unsupported: r.unsupported,
    rules: r.tally.rows(),
    result: r.error !== undefined ? 'error' : r.failure === undefined ? 'pass' : 'fail',
    ...(r.error === undefined ? {} : { error: r.error }),
    ...(r.failure === undefined
      ? {}
      : {
          failure: {
            ...r.failure,
            steps: r.failure.ops.map(describeOp),
            replay: `${ctx.replayBase} --seed=${r.failure.seed} --path=${r.failure.path}`,
          },
        }),
  };
}
