/**
 * `capstan bench cluster` and `capstan bench controllers` as commands: parse the flags, run,
 * print the tables, the B ÷ A comparisons and the goal lines on stdout (progress on stderr),
 * write the JSON and markdown reports. Exit status: 0 when every step ran, 2 for bad flags, 1
 * for any failure (the figures of the steps that ran are still reported).
 */
import { writeFileSync } from 'node:fs';
import { FlagError } from '../../flags/flags.js';
import type { BenchIo } from '../command.js';
import { BenchError } from '../errors.js';
import { comparisonText, markdownReport, textTables } from '../report.js';
import { clusterGoals, controllerGoals } from './goals.js';
import { clusterHelp, parseClusterArgs } from './options.js';
import { runClusterBench } from './run.js';

/** Runs `capstan bench <mode> <argv>`; resolves with the exit status. */
export async function runClusterCommand(
  mode: 'cluster' | 'controllers',
  argv: readonly string[],
  io: BenchIo,
): Promise<number> {
  let options;
  try {
    options = parseClusterArgs(mode, argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    io.err(`capstan bench ${mode}: ${err.message}`);
    io.err(`Run 'capstan bench ${mode} --help' for usage.`);
    return 2;
  }
  if (options === undefined) {
    io.out(`${clusterHelp(mode)}\n`);
    return 0;
  }
  const command = ['capstan bench', mode, ...argv].join(' ');
  let report;
  try {
    report = await runClusterBench(options, io.err, command);
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    io.err(`capstan bench ${mode}: ${text.split('\n')[0] ?? text}`);
    return err instanceof BenchError ? err.exitCode : 1;
  }
  const goals = mode === 'cluster' ? clusterGoals(report.rows) : controllerGoals(report.rows);
  const comparisons = report.comparisons ?? [];
  io.out(
    textTables(report.rows) +
      '\n' +
      (comparisons.length === 0 ? '' : comparisonText(comparisons) + '\n') +
      `Goals:\n${goals.map((g) => `  ${g}`).join('\n')}\n`,
  );
  if (options.json !== undefined)
    writeFileSync(options.json, JSON.stringify({ ...report, goals }, null, 2) + '\n');
  if (options.markdown !== undefined)
    writeFileSync(
      options.markdown,
      markdownReport(report) + `\n## Goals\n\n${goals.map((g) => `- ${g}`).join('\n')}\n`,
    );
  if (report.failures !== undefined) {
    io.err(`capstan bench ${mode}: ${report.failures.length} step(s) failed: ${report.failures.join('; ')}`);
    return 1;
  }
  return 0;
}
