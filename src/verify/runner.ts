/**
 * The model-based run of `capstan verify`: fast-check generates operation sequences, each runs in
 * its own namespace, a failure is shrunk to a minimal sequence and replayed once more to capture
 * its HTTP transcript. `seed` and `path` replay a reported counterexample.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { Tolerances } from './context.js';
import { VerifyHttp, type Exchange } from './http.js';
import { runArbitrary, type Group, type Op } from './ops.js';
import { VerifyError, Violation, RuleTally, type RuleName } from './rules.js';
import { executeRun } from './run.js';
import type { KubeconfigCredentials } from '../pki/kubeconfig-credentials.js';

/** What to run. */
export interface RunnerOptions {
  readonly runs: number;
  readonly seed: number | undefined;
  readonly path: string | undefined;
  readonly timeLimitMs: number | undefined;
  readonly groups: ReadonlySet<Group>;
  readonly maxSteps: number;
  readonly tolerances: Tolerances;
}

/** A shrunk counterexample. */
export interface Counterexample {
  readonly rule: RuleName | undefined;
  readonly message: string;
  readonly ops: readonly Op[];
  readonly seed: number;
  readonly path: string;
  readonly shrinks: number;
  /** The replay's exchanges (the last one broke the rule). */
  readonly transcript: readonly Exchange[];
  /** Whether the replay failed again (a flaky failure may not). */
  readonly reproduced: boolean;
}

/** The outcome of a verify run. */
export interface RunnerResult {
  readonly seed: number;
  readonly runs: number;
  readonly operations: Readonly<Record<string, number>>;
  readonly durationMs: number;
  readonly interrupted: boolean;
  readonly tally: RuleTally;
  readonly unsupported: readonly string[];
  readonly failure?: Counterexample;
  /** The tool could not work (unreachable server, refused credentials). */
  readonly error?: string;
}

/** Progress callbacks. */
export interface RunnerProgress {
  run(done: number, total: number, shrinking: boolean): void;
}

/** Runs the property against a server. */
export async function runVerify(
  creds: KubeconfigCredentials,
  options: RunnerOptions,
  progress: RunnerProgress,
): Promise<RunnerResult> {
  const http = new VerifyHttp(creds);
  const tally = new RuleTally();
  const unsupported = new Set<string>();
  const session = randomBytes(3).toString('hex');
  const operations: Record<string, number> = {};
  const seed = options.seed ?? Math.floor(Math.random() * 0x7fffffff);
  let counter = 0;
  let runs = 0;
  let failed = false;
  let fatal: VerifyError | undefined;
  const env = (): Parameters<typeof executeRun>[0] => ({
    http,
    tally,
    tolerances: options.tolerances,
    namespace: `verify-${session}-${counter++}`,
    unsupported,
  });
  const started = performance.now();
  const property = fc.asyncProperty(runArbitrary(options.groups, options.maxSteps), async (ops) => {
    if (fatal !== undefined) return true;
    if (!failed) {
      runs++;
      for (const o of ops) operations[o.op] = (operations[o.op] ?? 0) + 1;
    }
    progress.run(runs, options.runs, failed);
    http.resetTranscript();
    try {
      await executeRun(env(), ops);
    } catch (err) {
      if (err instanceof VerifyError) {
        fatal = err;
        return true;
      }
      failed = true;
      throw err;
    }
    return true;
  });
  let details;
  try {
    details = await fc.check(property, {
      numRuns: options.runs,
      seed,
      ...(options.path === undefined ? {} : { path: options.path, endOnFailure: false }),
      ...(options.timeLimitMs === undefined
        ? {}
        : { interruptAfterTimeLimit: options.timeLimitMs, markInterruptAsFailure: false }),
    });
  } finally {
    if (fatal !== undefined || details?.failed !== true) http.close();
  }
  const base = {
    seed,
    runs,
    operations,
    durationMs: performance.now() - started,
    interrupted: details.interrupted,
    tally,
    unsupported: [...unsupported],
  };
  if (fatal !== undefined) {
    http.close();
    return { ...base, error: fatal.message };
  }
  if (!details.failed || details.counterexample === null) return base;
  const ops = details.counterexample[0];
  // Replay the shrunk sequence once more for its transcript.
  http.resetTranscript();
  let replayError: unknown;
  try {
    await executeRun({ ...env(), tally: new RuleTally() }, ops);
  } catch (err) {
    replayError = err;
  }
  const transcript = [...http.transcript];
  http.close();
  const err = replayError ?? details.errorInstance;
  return {
    ...base,
    failure: {
      rule: err instanceof Violation ? err.rule : undefined,
      message: err instanceof Error ? err.message : String(err),
      ops,
      seed: details.seed,
      path: details.counterexamplePath ?? '',
      shrinks: details.numShrinks,
      transcript,
      reproduced: replayError !== undefined,
    },
  };
}
