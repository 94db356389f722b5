/**
 * `capstan bench` as a command: parse the flags, run, print each scenario's table on stdout as it
 * finishes (progress on stderr), write the JSON and markdown reports. Exit status: 0 when every
 * scenario ran, 2 for bad flags, 1 for any failure, reported on one line (a scenario that failed
 * still leaves the others' figures in the reports).
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { FlagError } from '../flags/flags.js';
import { runClusterCommand } from './cluster/command.js';
import { BenchError } from './errors.js';
import { benchHelp, parseBenchArgs } from './options.js';
import { comparisonText, markdownReport, textTables, type RunReport } from './report.js';
import { runBench } from './runner.js';
import { runCeilingBinderCommand } from './scheduler/ceiling.js';

/** Output streams of the command (tests pass their own). */
export interface BenchIo {
  readonly out: (text: string) => void;
  readonly err: (line: string) => void;
}

const PROCESS_IO: BenchIo = {
  out: (text) => process.stdout.write(text),
  err: (line) => process.stderr.write(`${line}\n`),
};

/** One line for a failure: the message of ours, the code or message of anything else. */
function oneLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0] ?? text;
}

/** Reads a previous JSON report, or undefined when there is none or it does not parse. */
function previousReport(path: string): RunReport | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as Partial<RunReport>;
    return Array.isArray(r.rows) ? (r as RunReport) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs `capstan bench <argv>`; resolves with the exit status. */
export async function runBenchCommand(argv: readonly string[], io: BenchIo = PROCESS_IO): Promise<number> {
  const first = argv[0];
  if (first === 'cluster' || first === 'controllers') return runClusterCommand(first, argv.slice(1), io);
  if (first === 'binder') return runCeilingBinderCommand(argv.slice(1), io.err);
  let options;
  try {
    options = parseBenchArgs(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    io.err(`capstan bench: ${err.message}`);
    io.err("Run 'capstan bench --help' for usage.");
    return 2;
  }
  if (options === undefined) {
    io.out(`${benchHelp()}\n`);
    return 0;
  }
  const previous = options.json === undefined ? undefined : previousReport(options.json);
  let report: RunReport;
  try {
    report = await runBench(
      options,
      {
        progress: io.err,
        scenarioDone: (_name, rows, comparisons) =>
          io.out(
            textTables(rows) + '\n' + (comparisons.length === 0 ? '' : comparisonText(comparisons) + '\n'),
          ),
      },
      ['capstan bench', ...argv].join(' '),
    );
  } catch (err) {
    io.err(`capstan bench: ${oneLine(err)}`);
    return err instanceof BenchError ? err.exitCode : 1;
  }
  if (options.json !== undefined) {
    if (previous !== undefined)
      renameSync(options.json, options.json.replace(/(\.json)?$/, '.previous.json'));
    writeFileSync(options.json, JSON.stringify(report, null, 2) + '\n');
  }
  if (options.markdown !== undefined) writeFileSync(options.markdown, markdownReport(report, previous));
  if (report.failures !== undefined) {
    io.err(`capstan bench: ${report.failures.length} scenario(s) failed: ${report.failures.join('; ')}`);
    return 1;
  }
  return 0;
}
