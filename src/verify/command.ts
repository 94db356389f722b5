/**
 * `capstan verify` as a command: parse the flags, pick the target, run, print the summary (and a
 * counterexample) on stdout, progress on stderr, write the JSON report. Exit status: 0 when every
 * rule held, 1 for a broken rule or a tool failure, 2 for bad flags.
 */
import { writeFileSync } from 'node:fs';
import { FlagError } from '../flags/flags.js';
import { parseVerifyArgs, verifyHelp } from './options.js';
import { counterexampleText, jsonReport, summaryText } from './report.js';
import { runVerify } from './runner.js';
import { inProcessTarget, kubeconfigTarget, type VerifyTarget } from './target.js';

/** Output streams of the command (tests pass their own). */
export interface VerifyIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether stderr is a terminal (progress redraws one line). */
  readonly tty: boolean;
}

const PROCESS_IO: VerifyIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  tty: process.stderr.isTTY === true,
};

/** Runs `capstan verify <argv>`; resolves with the exit status. */
export async function runVerifyCommand(argv: readonly string[], io: VerifyIo = PROCESS_IO): Promise<number> {
  let options;
  try {
    options = parseVerifyArgs(argv);
  } catch (err) {
    if (!(err instanceof FlagError)) throw err;
    io.err(`capstan verify: ${err.message}\nRun 'capstan verify --help' for usage.\n`);
    return 2;
  }
  if (options === undefined) {
    io.out(`${verifyHelp()}\n`);
    return 0;
  }
  let target: VerifyTarget;
  try {
    target =
      options.kubeconfig !== undefined
        ? kubeconfigTarget(options.kubeconfig, options.context)
        : await inProcessTarget(options.inProcess ?? 'memory');
  } catch (err) {
    io.err(`capstan verify: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const replayArgs = argv.filter(
    (a) => !a.startsWith('--seed') && !a.startsWith('--path') && !a.startsWith('--runs'),
  );
  const ctx = { target: target.description, replayBase: ['capstan verify', ...replayArgs].join(' ') };
  let lastDraw = 0;
  const progress = {
    run: (done: number, total: number, shrinking: boolean) => {
      if (!options.progress) return;
      const now = Date.now();
      if (now - lastDraw < (io.tty ? 200 : 5000) && done !== total) return;
      lastDraw = now;
      const line = `verify: run ${done}/${total}${shrinking ? ', failed: shrinking…' : ''}`;
      io.err(io.tty ? `\r${line}\u001b[K` : `${line}\n`);
    },
  };
  let result;
  try {
    result = await runVerify(target.creds, options, progress);
  } finally {
    await target.close();
  }
  if (options.progress && io.tty) io.err('\n');
  io.out(`${summaryText(result, ctx)}\n`);
  if (result.failure !== undefined) io.out(`\n${counterexampleText(result.failure, ctx)}\n`);
  if (options.json !== undefined)
    writeFileSync(
      options.json,
      `${JSON.stringify(jsonReport(result, ctx, { ...options, groups: [...options.groups] }), null, 2)}\n`,
    );
  return result.error === undefined && result.failure === undefined ? 0 : 1;
}
